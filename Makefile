PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]' --group dev
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/signoff demo

test: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2 -q

# The quick loop while working (CONTRIBUTING.md): no slow tests, no PostgreSQL variants,
# a stable sample of each big table, fewer property examples.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q --fast

bench: $(STAMP)
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
