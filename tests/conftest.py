"""Hardware is probed once here and exposed as markers; the default run needs no GPU/network."""

from __future__ import annotations

import os
import shutil
from functools import cache
from pathlib import Path

import pytest


@cache
def sycl_available() -> bool:
    try:
        from kernelwright.config import Settings
        from kernelwright.tools.backends import BackendRegistry

        return BackendRegistry(Settings()).get("sycl").status().usable
    except Exception:
        return False


@cache
def gpu_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


XDG_DEFAULTS = {"XDG_CACHE_HOME": ".cache", "XDG_DATA_HOME": ".local/share"}
TESTS = Path(__file__).resolve().parent
# End-to-end tests (a real optimize, campaign, chat, MCP or cluster run) check what a run does,
# not its figures: short timing windows and no torch.compile re-measurement halve their time
# (l1_gelu, cpp, budget 3: 68 s -> 32 s). The figures are the benchmarks' job; the compile
# timing has its own tests (tests/tools/evaluate/test_compile_timing.py).
END_TO_END_DIRS = frozenset({"integration", "cli", "serve", "cluster", "chat", "report"})
_SAVED_ENV = pytest.StashKey[dict]()
END_TO_END_ENV = {"KERNELWRIGHT_MIN_TIME_S": "0.05", "KERNELWRIGHT_WARMUP_CALLS": "1",
                  "KERNELWRIGHT_CONFIRM_COMPILE": "false"}


def pytest_configure(config):
    """Under pytest-xdist each process gets its own default build cache and data directory
    (``$XDG_*_HOME/kw-tests-gw0`` ...): tests that use the defaults never share them with a
    test running at the same time in the other process (the build cache's integrity record is
    one JSON file, rewritten whole)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    for var, default in XDG_DEFAULTS.items():
        base = os.environ.get(var) or str(Path.home() / default)
        os.environ[var] = str(Path(base) / f"kw-tests-{worker}")


# Files whose tests take minutes in all, heaviest first (per-file totals from `pytest
# --junitxml` on a 2-core machine: the corpus lowering file is 589 of 2,439 s at 7898806).
# pytest-xdist's --dist loadfile hands files to its workers in collection order, so these are
# never the last to start (a long file started last runs alone at the end); the ordering
# measured no faster than path order (2,231 s against 2,238 s at 4c54d80), and keeps a long
# file from ending the run alone as the set of files changes.
HEAVY_FIRST = (
    "corpus/test_corpus_lowering.py",
    "examples/test_examples.py",
    "corpus/test_corpus.py",
    "cluster/test_ray_pool.py",
    "tools/lower/test_sycl_gemm.py",
    "integration/test_kill_resume.py",
    "cluster/test_pg_runs.py",
    "integration/test_campaign_kill.py",
    "cli/test_mistakes.py",
    "integration/test_llm_run.py",
    "cli/test_chat_pty.py",
    "serve/test_mcp_transports.py",
    "tools/lower/test_cpp_rows.py",
)


def _heaviness(item) -> int:
    path = Path(str(item.path))
    name = path.relative_to(TESTS).as_posix() if path.is_relative_to(TESTS) else ""
    return HEAVY_FIRST.index(name) if name in HEAVY_FIRST else len(HEAVY_FIRST)


def pytest_collection_modifyitems(config, items):
    items.sort(key=_heaviness)  # stable: every file keeps its tests' order
    probes = {
        "requires_sycl": (sycl_available, "the SYCL CPU device is not usable here"),
        "requires_gpu": (gpu_available, "no CUDA device"),
        "requires_nvcc": (lambda: shutil.which("nvcc") is not None, "nvcc is not on PATH"),
    }
    for item in items:
        for marker, (probe, why) in probes.items():
            if item.get_closest_marker(marker) and not probe():
                item.add_marker(pytest.mark.skip(reason=why))


def _end_to_end(item) -> bool:
    path = Path(str(item.path))
    return path.is_relative_to(TESTS) and path.relative_to(TESTS).parts[0] in END_TO_END_DIRS


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """:data:`END_TO_END_ENV` for the tests of :data:`END_TO_END_DIRS`, set before their
    fixtures (module and session ones too) start anything; their subprocesses inherit it."""
    if _end_to_end(item):
        item.stash[_SAVED_ENV] = {name: os.environ.get(name) for name in END_TO_END_ENV}
        os.environ.update(END_TO_END_ENV)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    for name, value in item.stash.get(_SAVED_ENV, {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def tmp_settings(tmp_path):
    """Settings whose data and cache live under the test's temporary directory."""
    from kernelwright.config import Settings

    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")


@pytest.fixture(scope="session")
def harness(tmp_path_factory):
    """The real harness with quick settings and one warm pool for the session (the example
    tests' verdicts); shares the backend contract suite's build cache."""
    from kernelwright.testing.backend_contract import contract_cache_root
    from kernelwright.testing.harness_check import HarnessCheck, quick_settings

    root = contract_cache_root(tmp_path_factory)
    with HarnessCheck(quick_settings(data_dir=root / "data", cache_dir=root / "cache")) as h:
        yield h
