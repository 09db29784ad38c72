# Loci — one command to try it, one command to test it. See README.md.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint install install-dev clean

$(BIN)/loci: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	@touch $@

install: $(BIN)/loci

$(VENV)/.dev: $(BIN)/loci
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $@

install-dev: $(VENV)/.dev

# Add the example folder to the default brain and ask it something.
demo: install
	$(BIN)/loci add examples/
	$(BIN)/loci search "how do I bring the boiler pressure back up"

lint: install-dev
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/mypy

test: install-dev lint
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
