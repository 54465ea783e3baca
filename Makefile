# Two commands on a fresh Linux machine with Python 3.11+ and g++:
#   make demo   - set up .venv if needed, then run the main job on the embedded default
#   make test   - set up .venv if needed, then run the whole test suite
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Re-install only when the project's dependency list changes.
STAMP := $(VENV)/.kernelwright-installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)
# CPU-only machines get the CPU build of torch (an unpinned torch pulls a multi-GB CUDA build).
TORCH_PIN := $(if $(shell command -v nvidia-smi 2>/dev/null),torch,torch==2.13.0)

.PHONY: setup demo test lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check "$(TORCH_PIN)"
	$(PY) -m pip install -q --disable-pip-version-check -e ".[dev,mcp]"
	@rm -f $(VENV)/.kernelwright-installed-*
	@touch $@

demo: $(STAMP)
	$(VENV)/bin/kernelwright demo

test: $(STAMP)
	$(VENV)/bin/ruff check kernelwright tests benchmarks examples
	$(PY) -m pytest -q -ra

lint: $(STAMP)
	$(VENV)/bin/ruff check kernelwright tests benchmarks

clean:
	rm -rf $(VENV) .pytest_cache
