# Two commands on a fresh Linux machine with Python 3.11+ and g++:
#   make demo       - set up .venv if needed, then run the main job on the embedded default
#   make test       - set up .venv if needed, then ruff, the import-linter contracts, every test
#   make test-fast  - ruff, the contracts, and the tests not marked slow (a few minutes)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Re-install only when the project's dependency list changes.
STAMP := $(VENV)/.kernelwright-installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)
# CPU-only machines get the CPU build of torch (an unpinned torch pulls a multi-GB CUDA build).
TORCH_PIN := $(if $(shell command -v nvidia-smi 2>/dev/null),torch,torch==2.13.0)

# Debian packages the sandbox (bubblewrap), the HTML report checks (chromium) and the
# PostgreSQL store's tests (postgresql: a throw-away cluster per test session) use.
APT_PACKAGES := bubblewrap chromium postgresql

.PHONY: setup system-packages demo test test-fast lint clean

setup: system-packages $(STAMP)

# Installed with apt-get when running as root and missing; otherwise a message, never a failure.
system-packages:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then :; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
	  echo "setup: no apt-get here; install$$missing yourself for the sandbox and report checks"; \
	elif [ "$$(id -u)" != 0 ]; then \
	  echo "setup: not root, skipping apt-get install$$missing (run: sudo apt-get install$$missing)"; \
	else \
	  echo "setup: apt-get install$$missing"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing \
	    >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing \
	    >/dev/null 2>&1; } || echo "setup: apt-get install$$missing failed; continuing"; \
	fi

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check "$(TORCH_PIN)"
	$(PY) -m pip install -q --disable-pip-version-check -e ".[dev,mcp]"
	@rm -f $(VENV)/.kernelwright-installed-*
	@touch $@

demo: system-packages $(STAMP)
	$(VENV)/bin/kernelwright demo

# Tests run in TEST_WORKERS processes (pytest-xdist), one per core, at most 2 by default: CI has 2
# cores. --dist loadfile keeps each test file in one process, so a module's fixtures are made
# once (the corpus lowering module's background verifier needs its lowering tests beside it);
# the biggest files start first. (--dist loadgroup does not group under pytest 9.2 with xdist 3.8.)
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 2 ] && n=2; echo $$n)
PYTEST := $(PY) -m pytest -q -ra -n $(TEST_WORKERS) --dist loadfile

test: system-packages lint
	$(PYTEST)

test-fast: system-packages lint
	$(PYTEST) -m "not slow"

lint: $(STAMP)
	$(VENV)/bin/ruff check kernelwright tests benchmarks examples
	$(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) .pytest_cache
