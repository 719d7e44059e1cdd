# lsokl — every target installs what it needs into .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
LSOKL := $(VENV)/bin/lsokl
STAMP := $(VENV)/.installed
# The shared data folder doubles as an offline mirror when it exists beside the clone.
export LSOKL_DATA_MIRROR ?= $(if $(wildcard ../shared/data/MANIFEST.yaml),$(abspath ../shared/data),)
# Settings that make writes (`lsokl config`) stay in the checkout, never in the user's home; `make clean`
# removes them. The installed .venv/bin/activate exports the same folder for commands typed by hand.
export LSOKL_CONFIG_DIR ?= $(abspath $(VENV))/lsokl-config

.PHONY: install demo test test-boundscheck smoke bench reproduce-table5 reproduce-table7 reproduce-table9 reproduce-meka clean \
	reproduce-bpegasosm-table1 reproduce-bpegasosm-table1-large bench-bsgd bench-large-data

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,dask,river,fast-fetch]"
	@# remember the mirror for commands typed outside make (README commands, offline), in the checkout's
	@# settings folder (LSOKL_CONFIG_DIR above), which the activated shell uses too; keeps an existing setting
	grep -q LSOKL_CONFIG_DIR $(VENV)/bin/activate || echo 'export LSOKL_CONFIG_DIR="$(LSOKL_CONFIG_DIR)"' >> $(VENV)/bin/activate
	test -z "$(LSOKL_DATA_MIRROR)" || $(LSOKL) config mirror "$(LSOKL_DATA_MIRROR)" --keep
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)  ## a small real experiment, offline: prints a table (into runs/quickstart, git-ignored)
	$(LSOKL) run configs/quickstart.yaml
	$(LSOKL) report runs/quickstart
	@echo ""
	@echo "lsokl is installed in $(VENV). To type 'lsokl ...' yourself, put it on the PATH:"
	@echo "  . $(VENV)/bin/activate        (this shell; or run $(LSOKL) directly)"
	@echo "  pip install .                 (into any environment of your own)"

# One pytest worker per CPU (pytest-xdist; `make test JOBS=1` runs them in one process). First the
# numba loops are compiled once, shared out over the CPUs (tests/precompile.py), so that the workers
# load them from the cache instead of each compiling them again.
JOBS ?= auto
NCPU := $(shell nproc 2>/dev/null || echo 1)
test: $(STAMP)  ## the whole test suite, one worker per CPU (reference-run checks skip without ../shared/data)
	@for i in $$(seq 0 $$(($(NCPU) - 1))); do $(PY) tests/precompile.py $$i $(NCPU) & done; wait
	$(PY) -m pytest -q -p no:cacheprovider -n $(JOBS) --dist worksteal

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
	$(PY) benchmarks/defaults.py
	$(PY) benchmarks/dsg_linear.py
	$(PY) benchmarks/dsg_speed.py --repeats 3 --out benchmarks/dsg_speed.json --results-md benchmarks/RESULTS.md

# Reproductions: `lsokl reproduce ITEM` (lsokl/papers declares every table and figure of the four papers;
# `lsokl reproduce --list`). Each writes its committed folder under results/ and regenerates REPRODUCTIONS.md.
.PHONY: reproduce-all reproduce-dsg reproduce-table3 scoreboard reproduce-bpegasosm-fig3
reproduce-all: $(STAMP)  ## every runnable item in sequence; prints each one's and the total wall time
	$(LSOKL) reproduce --all

scoreboard: $(STAMP)  ## regenerate REPRODUCTIONS.md from the committed results (no run)
	$(LSOKL) reproduce --scoreboard

.PHONY: site
site: $(STAMP)  ## the browsable report of every reproduction, from the committed results: runs/site/index.html
	$(LSOKL) site

reproduce-table5: $(STAMP)
	$(LSOKL) reproduce lsokl2016:table5

reproduce-table7: $(STAMP)
	$(LSOKL) reproduce lsokl2016:table7

reproduce-meka: $(STAMP)  ## MEKA Tables 7, 8, 5, 3 (pendigit stand-in), 2 (a9a stand-in), Figs. 7(a) and 12
	$(LSOKL) reproduce meka2017 --jobs 1

reproduce-table9: $(STAMP)
	$(LSOKL) reproduce lsokl2016:table9

reproduce-dsg: $(STAMP)  ## DSG Fig. 1 panels (1) Adult (+ plain DSG tuned), (7) cpusmall + synthetic, (4) MNIST-10k, (2) 8 vs 6 (+ tuned), SC2: results/dsg/
	$(LSOKL) reproduce dsg2014 --jobs 2

BPM_JOBS ?= 2
reproduce-bpegasosm-table1: $(STAMP)  ## BPegasosM (ICML 2010) Table 1, with its 10^6-point synthetic runs -> results/bpegasosm-table1/ (BPM_JOBS=1 on a busy machine)
	$(LSOKL) reproduce bpegasosm2010:table1 --jobs $(BPM_JOBS)

reproduce-bpegasosm-fig3: $(STAMP)  ## BPegasosM Fig. 3: training time vs stream length (waveform, 50k) -> results/bpegasosm-fig3/
	$(LSOKL) reproduce bpegasosm2010:fig3 --jobs 1

reproduce-bpegasosm-table1-large: reproduce-bpegasosm-table1  ## now part of reproduce-bpegasosm-table1 (same folder, resumable)

bench-bsgd: $(STAMP)  ## BSGD-M/R beside BudgetedSVM's C++ (set BUDGETEDSVM_DIR to a built clone) -> benchmarks/BSGD.md
	$(PY) benchmarks/bsgd.py

bench-large-data: $(STAMP)  ## streaming fetch of 0.5M/2M x 784 and 5M x 54 generated files + one pass (~25 min, 8 GB of /tmp) -> RESULTS.md
	$(PY) benchmarks/large_data.py

.PHONY: reproduce-table3
reproduce-table3: $(STAMP)  ## LSOKL Table 3 (batch comparison, holdout, reduced CV) -> results/table3/
	$(LSOKL) reproduce lsokl2016:table3 --jobs 2

clean:
	rm -rf $(VENV) .pytest_cache

# Figures (LSOKL Figs. 1-6): items of lsokl2016; PNG + SVG + caption in the item's folder.
.PHONY: fig3 fig4 figures-convergence figures
fig3: $(STAMP)  ## Fig. 3: FOGD rho_f and NOGD rho_n sensitivity (dna, satimage, B=200; usps, letter, B=100 -> results/fig3-large)
	$(LSOKL) reproduce lsokl2016:fig3 lsokl2016:fig3-large

fig4: $(STAMP)  ## Fig. 4: budget sensitivity on codrna and usps (the paper's) and german, satimage (stand-ins); B=50..500
	$(LSOKL) reproduce lsokl2016:fig4

figures-convergence: $(STAMP)  ## Figs. 1-2 and 5-6 from the Table 7 / Table 9 runs (runs them if their records are absent)
	$(LSOKL) reproduce lsokl2016:fig1 lsokl2016:fig5

figures: fig3 fig4 figures-convergence
