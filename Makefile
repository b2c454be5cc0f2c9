# Two entry points: `make run` (install the runtime, migrate, demo data, serve on SQLite)
# and `make test` (install the runtime and the dev tools, then the whole suite: pytest on
# SQLite and PostgreSQL, ruff, mypy --strict, import-linter). Only Python 3.11+ and make
# are needed. `make run PORT=8100` serves on another port (HOST likewise).
#
# `make check` is the fast tier for developers, under two minutes: ruff, mypy --strict,
# import-linter, then on SQLite only the tests that start no server and the scenario
# modules (docs/scenarios.md). The markers it selects by are set in tests/conftest.py.
# `make test` (what CI runs, through .ci/run) stays the whole suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

# The fast tier's selection (markers set in tests/conftest.py). The modules it would
# deselect whole are not even collected: the fuzzer builds its cases at import.
CHECK_MARKERS := not postgresql and not browser and not slow and (scenario or not server)
CHECK_SKIP := --ignore=tests/api/test_fuzz.py --ignore=tests/browser

.PHONY: install install-dev run test check lint schema clean

# The runtime only: what `make run` needs to serve (no test tooling).
install: $(VENV)/.installed

# The runtime plus the dev extra (pytest, playwright, mypy, ruff…): what `make test` needs.
install-dev: $(VENV)/.installed-dev

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

# The banner and the server get the same HOST and PORT, so the address printed is the
# address served.
run: install
	$(BIN)/hub db upgrade
	$(BIN)/hub demo --host $(HOST) --port $(PORT)
	$(BIN)/hub serve --host $(HOST) --port $(PORT)

test: install-dev
	$(BIN)/pytest $(PYTEST_ARGS)
	$(MAKE) --no-print-directory lint

check: lint
	$(BIN)/pytest -q -m "$(CHECK_MARKERS)" $(CHECK_SKIP) $(PYTEST_ARGS)

lint: install-dev
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy src
	$(BIN)/lint-imports

schema: install
	$(BIN)/python -c "from hub.api.schema import export_sdl; open('graphql/schema.graphql','w').write(export_sdl())"
	$(BIN)/python -c "from hub.client.problems import render_table; open('src/hub/client/problem_table.py','w').write(render_table(open('graphql/schema.graphql').read()))"
	$(BIN)/python -c "from hub.mcp.calls import render_tool_list; open('graphql/agent-tools.json','w').write(render_tool_list())"

clean:
	rm -rf $(VENV) var/*.db var/*.db-* var/demo-credentials .pytest_cache .mypy_cache .ruff_cache
