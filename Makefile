# Two entry points: `make run` (set up and chat) and `make test` (set up and run every test).
# Each (re)creates .venv and reinstalls only when pyproject.toml is newer than the last install.

VENV   := .venv
BIN    := $(VENV)/bin
# The first interpreter on PATH that is Python 3.11 or newer.
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3 python; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& { echo $$p; break; }; done)

.PHONY: run test lint bench reliability i18n extras clean

run: $(VENV)/.installed-run
	@$(BIN)/generalagent $(ARGS)

test: $(VENV)/.installed-dev
	$(BIN)/python tests/run_tests.py all

# Rewrites docs/reliability.md from a run of the fault suite. Needs PostgreSQL for the
# checkpoint cases: GENERALAGENT_TEST_DATABASE_URL, as .ci/run sets it.
reliability: $(VENV)/.installed-dev
	RELIABILITY_REPORT=docs/reliability.md $(BIN)/python tests/run_tests.py faults

# Style, format, layers (imports point down only) and types; the settings are in pyproject.toml.
lint: $(VENV)/.installed-dev
	$(BIN)/ruff check generalAgent tests bench
	$(BIN)/ruff format --check generalAgent tests bench
	$(BIN)/lint-imports
	$(BIN)/mypy

# Updates the Chinese catalog from the code's _() messages and compiles it; translate the new
# entries in generalAgent/locale/zh_CN/LC_MESSAGES/generalagent.po, then run it again.
CATALOG := generalAgent/locale/zh_CN/LC_MESSAGES/generalagent
i18n: $(VENV)/.installed-dev
	$(BIN)/pybabel --quiet extract -F babel.cfg -k _ -k N_ -k N_plural:1,2 -k ngettext:1,2 --no-location --sort-output -o $(CATALOG).pot generalAgent
	$(BIN)/pybabel --quiet update -i $(CATALOG).pot -o $(CATALOG).po -l zh_CN --no-fuzzy-matching --ignore-obsolete --ignore-pot-creation-date
	$(BIN)/pybabel --quiet compile -i $(CATALOG).po -o $(CATALOG).mo -l zh_CN
	@rm -f $(CATALOG).pot

$(VENV)/bin/python:
	@test -n "$(PYTHON)" || { echo "generalAgent needs Python 3.11 or newer on PATH (python3.11, python3.12, ...)." >&2; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-run: pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@ $(VENV)/.installed-run

# Adds optional extras to the clone's environment: `make extras EXTRAS=ocr` (or ocr,postgres);
# the install hints the program prints name this for a clone set up by make (config/install.py).
extras: | $(VENV)/bin/python
	@test -n "$(EXTRAS)" || { echo "Name the extras: make extras EXTRAS=ocr (ocr, multilingual, postgres, local-embeddings)" >&2; exit 2; }
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]'

clean:
	rm -rf $(VENV)
