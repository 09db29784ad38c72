# Loci — one command to try it, one command to test it. See README.md.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test attack lint install install-dev browser axe extension-test ocr clean bench-check bench-check-all docs

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

# Add the example folder to a brain of its own, `demo` (never your default brain, so its lease
# and boiler manual stay out of your own answers), and ask it something.
demo: install
	$(BIN)/loci add --brain demo examples/
	$(BIN)/loci search --brain demo "how do I bring the boiler pressure back up"
	@echo "The examples are in the brain 'demo'. Remove them with: loci brains rm demo --yes"

lint: install-dev
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts
	$(BIN)/mypy

# The browser tests drive Debian's Chromium through Playwright (`playwright install` cannot
# download here), so a clean machine gets it from apt. Root runs apt-get directly; anyone else
# goes through sudo.
CHROMIUM ?= /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

browser:
	@if [ ! -x "$(CHROMIUM)" ]; then \
		echo "installing Chromium for the browser tests"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; \
	fi
	@test -x "$(CHROMIUM)" || { echo "Chromium is missing at $(CHROMIUM)" >&2; exit 1; }

# The browser extension's own tests: its extractor (against fixture pages, in linkedom's DOM) and
# its API client, under Node's test runner; npm ci installs the DOM library the lock file pins.
NPM ?= npm
NODE ?= node

extension/node_modules/.package-lock.json: extension/package.json extension/package-lock.json
	cd extension && $(NPM) ci --no-audit --no-fund

extension-test: extension/node_modules/.package-lock.json
	cd extension && $(NODE) --test test/

# axe-core, which the browser tests run inside the web app's pages (tests/support/accessibility.py):
# a test-time dependency only, pinned by tests/axe's lock file.
tests/axe/node_modules/.package-lock.json: tests/axe/package.json tests/axe/package-lock.json
	cd tests/axe && $(NPM) ci --no-audit --no-fund

axe: tests/axe/node_modules/.package-lock.json


# OCR of images and scanned PDFs runs Debian's Tesseract (English data included, ~24 MB); the
# Python side needs nothing more. Without it images are stored with a warning and no text.
TESSERACT ?= /usr/bin/tesseract

ocr:
	@if [ ! -x "$(TESSERACT)" ]; then \
		echo "installing Tesseract for OCR"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends tesseract-ocr; \
	fi
	@test -x "$(TESSERACT)" || { echo "Tesseract is missing at $(TESSERACT)" >&2; exit 1; }


test: install-dev lint browser axe ocr extension-test
	$(BIN)/pytest -q

# The attack suite alone (docs/security.md): isolation matrix, read-only tokens, API fuzzing,
# hostile files and parser budgets, SSRF, kill -9 durability, file permissions. `make test` runs
# it too. A deeper fuzzing run: make attack FUZZ_EXAMPLES=100
FUZZ_EXAMPLES ?= 6

attack: install-dev ocr
	LOCI_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest -q -m attack

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache extension/node_modules tests/axe/node_modules

# Measure the figures of docs/benchmarks.md again (bench/figures.toml says which, with their
# commands and noise) and flag any that moved; not part of `make test`. The quick figures take
# minutes; bench-check-all adds the long ones (BEIR evals, 100k-chunk brains, server load).
bench-check: install-dev
	PYTHONPATH=src $(BIN)/python bench/reproduce.py

bench-check-all: install-dev
	PYTHONPATH=src $(BIN)/python bench/reproduce.py --all

# The generated references (docs/cli.md, docs/configuration.md, docs/benchmarks.md), written
# again from the commands, the settings model and bench/figures.toml; tests/test_docs.py fails
# while one is stale.
docs: install-dev
	PYTHONPATH=src $(BIN)/python scripts/gen_docs.py
