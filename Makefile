# lsokl — every target installs what it needs into .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
LSOKL := $(VENV)/bin/lsokl
STAMP := $(VENV)/.installed
# The shared data folder doubles as an offline mirror when it exists beside the clone.
export LSOKL_DATA_MIRROR ?= $(if $(wildcard ../shared/data/MANIFEST.yaml),$(abspath ../shared/data),)

.PHONY: install demo test smoke bench reproduce-table5 reproduce-table7 reproduce-table9 clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,dask]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)  ## a small real experiment, offline: prints a table
	$(LSOKL) run configs/quickstart.yaml --results results/quickstart
	$(LSOKL) report results/quickstart

test: $(STAMP)  ## the whole test suite (reference-run checks skip without ../shared/data)
	$(PY) -m pytest -q -p no:cacheprovider

bench: $(STAMP)  ## throughput and memory, written to benchmarks/RESULTS.md
	$(PY) benchmarks/run.py --out benchmarks/RESULTS.md

reproduce-table5: $(STAMP)
	$(PY) scripts/reproduce.py table5

reproduce-table7: $(STAMP)
	$(PY) scripts/reproduce.py table7

reproduce-table9: $(STAMP)
	$(PY) scripts/reproduce.py table9

clean:
	rm -rf $(VENV) .pytest_cache
