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
# make bench-peers PEERS_ARGS="--runs 5": pi_trio beside pydantic-ai, openai-agents, agno and
# pi 1.6 under node, in an environment of its own so that `make test` never installs them.
PEERS_ARGS ?=
PEERS_VENV := .venv-peers
PEERS_STAMP := $(PEERS_VENV)/.installed
PI_NODE_DIR := benchmarks/.cache/pi16
PI_NODE_STAMP := $(PI_NODE_DIR)/node_modules/@earendil-works/pi-agent-core/package.json

.PHONY: test lint demo bench bench-peers catalog clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,cli,proxy,agui]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check pi_trio tests benchmarks examples scripts
	$(BIN)/ruff format --check pi_trio tests benchmarks examples scripts

# the tests that re-record the original's fixtures under node use the copy installed for
# the benchmarks (skipped, with their reason, where npm is missing); PI16_DIR / PI_AI_DIR
# given in the environment win
test: $(STAMP) $(PI_NODE_STAMP)
	bash scripts/ensure_browser.sh
	bash scripts/ensure_postgres.sh
	$(BIN)/ruff check pi_trio tests benchmarks examples scripts
	$(BIN)/ruff format --check pi_trio tests benchmarks examples scripts
	$(BIN)/mypy pi_trio
	if [ -f $(PI_NODE_STAMP) ]; then \
		export PI16_DIR="$${PI16_DIR:-$(CURDIR)/$(PI_NODE_DIR)}"; \
		export PI_AI_DIR="$${PI_AI_DIR:-$(CURDIR)/$(PI_NODE_DIR)/node_modules/@earendil-works/pi-ai}"; \
	fi; \
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

$(PEERS_STAMP): pyproject.toml benchmarks/peers/requirements.txt
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(PEERS_VENV)/bin/python -m pip install --quiet -e . -r benchmarks/peers/requirements.txt
	touch $(PEERS_STAMP)

# the original's column: skipped (with a message from the benchmark) when npm is missing
$(PI_NODE_STAMP):
	-command -v npm >/dev/null && npm install --no-save --no-audit --no-fund \
		--prefix $(PI_NODE_DIR) @earendil-works/pi-agent-core@$(PI_AI_VERSION) \
		@earendil-works/pi-ai@$(PI_AI_VERSION)

bench-peers: $(PEERS_STAMP) $(PI_NODE_STAMP)
	$(PEERS_VENV)/bin/python -m benchmarks.peers --node-dir $(PI_NODE_DIR) $(PEERS_ARGS)

catalog: $(STAMP)
	test -f $(PI_AI_DIR)/package.json || npm install --no-save --no-audit --no-fund \
		--prefix $(PI_AI_PREFIX) @earendil-works/pi-ai@$(PI_AI_VERSION)
	$(BIN)/python scripts/generate_catalog.py $(PI_AI_DIR)

clean:
	rm -rf $(VENV) $(PEERS_VENV)
