# Two commands do all set-up: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha1sum requirements.lock | cut -c1-12)
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=

.PHONY: run test lint bench venv system-deps serve-bot clean

# pip's own progress (one line per package) instead of a minute and a half of silence on a fresh clone.
$(STAMP): requirements.lock
	@test -x $(BIN)/python || { echo "==> creating $(VENV)/"; $(PYTHON) -m venv $(VENV); }
	@echo "==> installing the pinned requirements (requirements.lock); the first time takes a minute or two"
	$(BIN)/pip install --progress-bar off --upgrade pip
	$(BIN)/pip install --progress-bar off -r requirements.lock
	@rm -f $(VENV)/.installed-*
	@touch $@

venv: $(STAMP)

# espeak-ng (speech for the STT tests) and chromium (the playground's browser test) come from Debian;
# skipped when present or not root.
system-deps:
	@command -v espeak-ng >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing espeak-ng (Debian package)"; \
	    (apt-get install -y -qq espeak-ng >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq espeak-ng >/dev/null)); \
	  else echo "espeak-ng missing: install it to run the speech-to-text tests"; fi; }
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing chromium (Debian package)"; \
	    (apt-get install -y -qq chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)); \
	  else echo "chromium missing: install it to run the playground's browser test"; fi; }

# The links printed by ensure_admin and serve point at this server unless PUBLIC_BASE_URL says otherwise.
# The demo goes only into a database without servers (DEMO=1: also into one with servers, when absent).
# Bound to every interface (HOST=0.0.0.0), the links name this machine: 0.0.0.0 opens nowhere.
LINK_HOST = $(if $(filter 0.0.0.0 ::,$(HOST)),$(shell hostname -f 2>/dev/null || hostname),$(HOST))
run: export PUBLIC_BASE_URL := $(or $(PUBLIC_BASE_URL),http://$(LINK_HOST):$(PORT))
run: venv
	@echo "==> applying migrations"
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo $(if $(filter 1,$(DEMO)),,--if-no-servers)
	$(BIN)/python manage.py ensure_admin
	$(BIN)/python manage.py serve --host $(HOST) --port $(PORT)

test: venv system-deps
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# mypy reads every package the import contract names (pyproject, [tool.importlinter] root_packages) and bench/.
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy chatcontext bot personas community characters infrastructure botplatform bench
	$(BIN)/python manage.py makemigrations --check --dry-run

bench: venv
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache .hypothesis
