# Two entry points: `make run` (install, migrate, demo data, serve on SQLite) and
# `make test` (install, then the whole suite: pytest on SQLite and PostgreSQL, ruff,
# mypy --strict, import-linter). Only Python 3.11+ and make are needed.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install run test lint schema clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

run: install
	$(BIN)/hub db upgrade
	$(BIN)/hub demo
	$(BIN)/hub serve --host $(HOST) --port $(PORT)

test: install
	$(BIN)/pytest $(PYTEST_ARGS)
	$(MAKE) --no-print-directory lint

lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy src
	$(BIN)/lint-imports

schema: install
	$(BIN)/python -c "from hub.api.schema import export_sdl; open('graphql/schema.graphql','w').write(export_sdl())"

clean:
	rm -rf $(VENV) var/*.db var/*.db-* .pytest_cache .mypy_cache .ruff_cache
