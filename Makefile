# Every target builds the environment it needs; a fresh clone needs only python3 and make.
PYTHON ?= python3
# make bench BENCH_ARGS="W1 W3 --runs 3 --paired"
BENCH_ARGS ?=
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lint demo bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,cli,proxy]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check pi_trio tests benchmarks examples
	$(BIN)/ruff format --check pi_trio tests benchmarks examples

test: $(STAMP)
	$(BIN)/ruff check pi_trio tests benchmarks examples
	$(BIN)/ruff format --check pi_trio tests benchmarks examples
	$(BIN)/mypy pi_trio
	$(BIN)/python -m pytest -q

demo: $(STAMP)
	$(BIN)/python -m pi_trio demo

bench: $(STAMP)
	$(BIN)/python -m benchmarks $(BENCH_ARGS)

clean:
	rm -rf $(VENV)
