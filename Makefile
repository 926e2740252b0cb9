# Two entry points (see README): `make demo` and `make test`. Both install what they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
LAKE ?= lake

.PHONY: setup demo test test-all lint

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)

setup: $(BIN)/activate
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"

demo: setup
	$(BIN)/lakeplanner ingest --sample --lake $(LAKE)
	$(BIN)/lakeplanner lake info --lake $(LAKE)

test: setup
	$(BIN)/ruff check lakeplanner tests benchmarks
	$(BIN)/pytest -q -m "not slow"

test-all: setup
	$(BIN)/pytest -q

lint: setup
	$(BIN)/ruff check lakeplanner tests benchmarks
	$(BIN)/ruff format --check lakeplanner tests benchmarks
