# Every target builds the environment it needs; a fresh clone needs only python3 and make.
PYTHON ?= python3
# make bench BENCH_ARGS="W1 W3 --runs 3 --paired"
BENCH_ARGS ?=
# make catalog: the model catalog regenerated from the original's npm package, installed
# into .cache/pi-ai unless PI_AI_DIR names an installed copy.
PI_AI_VERSION ?= 1.6.0
PI_AI_PREFIX := .cache/pi-ai
PI_AI_DIR ?= $(PI_AI_PREFIX)/node_modules/@earendil-works/pi-ai
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# the demo needs only the cli extra: a first `make demo` does not wait for the test tools
DEMO_STAMP := $(VENV)/.installed-cli

.PHONY: test lint demo bench catalog clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,cli,proxy,agui]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check pi_trio tests benchmarks examples scripts
	$(BIN)/ruff format --check pi_trio tests benchmarks examples scripts

test: $(STAMP)
	bash scripts/ensure_browser.sh
	$(BIN)/ruff check pi_trio tests benchmarks examples scripts
	$(BIN)/ruff format --check pi_trio tests benchmarks examples scripts
	$(BIN)/mypy pi_trio
	$(BIN)/python -m pytest -q

$(DEMO_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[cli]'
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/python -m pi_trio demo

bench: $(STAMP)
	$(BIN)/python -m benchmarks $(BENCH_ARGS)

catalog: $(STAMP)
	test -f $(PI_AI_DIR)/package.json || npm install --no-save --no-audit --no-fund \
		--prefix $(PI_AI_PREFIX) @earendil-works/pi-ai@$(PI_AI_VERSION)
	$(BIN)/python scripts/generate_catalog.py $(PI_AI_DIR)

clean:
	rm -rf $(VENV)
