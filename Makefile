# lsokl — every target installs what it needs into .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
LSOKL := $(VENV)/bin/lsokl
STAMP := $(VENV)/.installed
# The shared data folder doubles as an offline mirror when it exists beside the clone.
export LSOKL_DATA_MIRROR ?= $(if $(wildcard ../shared/data/MANIFEST.yaml),$(abspath ../shared/data),)

.PHONY: install demo test test-boundscheck smoke bench reproduce-table5 reproduce-table7 reproduce-table9 reproduce-meka clean \
	reproduce-bpegasosm-table1 reproduce-bpegasosm-table1-large bench-bsgd bench-large-data

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,dask,river]"
	@# remember the mirror for commands typed outside make (README commands, offline); keeps an existing setting
	test -z "$(LSOKL_DATA_MIRROR)" || $(LSOKL) config mirror "$(LSOKL_DATA_MIRROR)" --keep
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)  ## a small real experiment, offline: prints a table
	$(LSOKL) run configs/quickstart.yaml --results results/quickstart
	$(LSOKL) report results/quickstart

test: $(STAMP)  ## the whole test suite (reference-run checks skip without ../shared/data)
	$(PY) -m pytest -q -p no:cacheprovider

# Compiled loops with bounds checks on (fresh numba cache: cached code was built without them):
# every learner through the scikit-learn checks that feed it odd shapes, plus the length tests.
# Compiling every learner afresh dominates its time, so: few checks, no read-only variants (another compilation).
BOUNDSCHECK_CHECKS := (check_classifiers_train or check_regressors_train or check_fit2d_1sample or check_estimators_partial_fit_n_features or mismatched or degenerate) and not readonly
test-boundscheck: $(STAMP)  ## the contract suite's shape checks with NUMBA_BOUNDSCHECK=1 (CI runs it)
	NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR=$$(mktemp -d) $(PY) -m pytest -q -p no:cacheprovider \
		tests/learners/test_sklearn_contract.py -k "$(BOUNDSCHECK_CHECKS)"

bench: $(STAMP)  ## benchmarks/RESULTS.md, one section per script (see benchmarks/page.py)
	$(PY) benchmarks/run.py
	$(PY) benchmarks/jobs.py
	$(PY) benchmarks/kol.py
	$(PY) benchmarks/dsg_speed.py --repeats 3 --out benchmarks/dsg_speed.json --results-md benchmarks/RESULTS.md

# `make reproduce-all`: every `reproduce-*` target of this Makefile (found by
# scripts/reproduce_all.py, so a new reproduction only needs its target), then these figures.
REPRODUCE_ALL_EXTRA := fig3 fig4 figures-convergence
.PHONY: reproduce-all
reproduce-all: $(STAMP)  ## every reproduction in sequence; prints each one's and the total wall time
	$(PY) scripts/reproduce_all.py $(REPRODUCE_ALL_EXTRA)

reproduce-table5: $(STAMP)
	$(PY) scripts/reproduce.py table5

reproduce-table7: $(STAMP)
	$(PY) scripts/reproduce.py table7

reproduce-meka: $(STAMP)  ## MEKA Tables 7, 8, 5, 3 (pendigit stand-in), 2 (a9a stand-in) and the error-vs-memory plot
	$(PY) scripts/reproduce_meka.py --jobs 1

reproduce-table9: $(STAMP)
	$(PY) scripts/reproduce.py table9

.PHONY: reproduce-dsg
reproduce-dsg: $(STAMP)  ## DSG Fig. 1 analogues E1 (Adult), E5 (cpusmall + synthetic), E4 (MNIST-10k), E2 (8 vs 6): results/dsg/
	$(PY) scripts/reproduce_dsg.py e1 e5 e4 e2 summary --results results/dsg

BPM_JOBS ?= 2
reproduce-bpegasosm-table1: $(STAMP)  ## BPegasosM (ICML 2010) Table 1 -> results/bpegasosm-table1/ (BPM_JOBS=1 on a busy machine)
	$(PY) scripts/reproduce_bpegasosm.py --jobs $(BPM_JOBS)

reproduce-bpegasosm-table1-large: $(STAMP)  ## Table 1's synthetic sets at n = 10^6 (after the table above; same folder)
	$(PY) scripts/reproduce_bpegasosm.py --large --jobs $(BPM_JOBS)

bench-bsgd: $(STAMP)  ## BSGD-M/R beside BudgetedSVM's C++ (set BUDGETEDSVM_DIR to a built clone) -> benchmarks/BSGD.md
	$(PY) benchmarks/bsgd.py

bench-large-data: $(STAMP)  ## streaming fetch of 0.5M/2M x 784 and 5M x 54 generated files + one pass (~25 min, 8 GB of /tmp) -> RESULTS.md
	$(PY) benchmarks/large_data.py

.PHONY: reproduce-table3
reproduce-table3: $(STAMP)  ## LSOKL Table 3 (batch comparison, holdout, reduced CV) -> results/table3/
	mkdir -p results/table3
	{ date -u; uptime; lscpu | grep -E "^Model name|^CPU\(s\)"; } > results/table3/machine.txt
	-$(PY) scripts/reproduce.py table3 --jobs 2  # exits 1 when a cell failed (KDD99 LIBSVM hits its limit by design)
	{ echo "after the run:"; date -u; uptime; } >> results/table3/machine.txt
	$(PY) -m lsokl.report.batch results/table3 --config configs/table3.yaml --paper lsokl2016:table3 --machine results/table3/machine.txt

clean:
	rm -rf $(VENV) .pytest_cache

# Figures (LSOKL Figs. 1-6): each = one config run + one `lsokl figure` call; PNG + SVG + caption.
.PHONY: fig3 fig4 figures-convergence figures
fig3: $(STAMP)  ## Fig. 3: FOGD rho_f and NOGD rho_n sensitivity (dna, satimage; B=200)
	$(LSOKL) run configs/fig3-sensitivity.yaml --results results/fig3 -j 2 -q
	$(LSOKL) figure results/fig3 --sweep rho_f --sweep rho_n --prefix fig3- --out results/fig3 --title "Fig. 3 sensitivity"

fig4: $(STAMP)  ## Fig. 4: budget sensitivity (german, spambase, dna, satimage; B=50..500)
	$(LSOKL) run configs/fig4-budget.yaml --results results/fig4 -j 2 -q
	$(LSOKL) figure results/fig4 --sweep budget --prefix fig4- --out results/fig4 --title "Fig. 4 budget"

figures-convergence: $(STAMP)  ## Figs. 1-2 and 5-6 from the Table 7 / Table 9 runs (reproduce-table7/9 first), and their step-size search curves
	$(LSOKL) figure results/table7 --convergence --out results/table7/figures
	$(LSOKL) figure results/table9 --convergence --out results/table9/figures
	$(LSOKL) figure results/table7/search --sweep eta --paper lsokl2016:table7 --prefix search- --out results/table7/figures/search
	$(LSOKL) figure results/table9/search --sweep eta --paper lsokl2016:table9 --prefix search- --out results/table9/figures/search

figures: fig3 fig4 figures-convergence
