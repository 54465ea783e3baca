"""Shared fixtures for the harness tests: settings and one warm worker pool."""

from __future__ import annotations

import pytest
from kw_eval_helpers import FAST, candidate, task

from kernelwright.config import Settings
from kernelwright.tools.evaluate import EvalResult, WorkerPool


@pytest.fixture(scope="session")
def settings(tmp_path_factory) -> Settings:
    # Private data and cache directories: attack tests write and tamper with them.
    return Settings(**FAST, data_dir=tmp_path_factory.mktemp("kw_data"),
                    cache_dir=tmp_path_factory.mktemp("kw_cache"))


@pytest.fixture(scope="session")
def pool(settings: Settings):
    with WorkerPool(settings) as p:
        yield p


@pytest.fixture(scope="session")
def run(pool: WorkerPool):
    """``run("gelu", "exploits/input_mutation") -> EvalResult`` in the shared pool."""

    def _run(task_name: str, rel: str, **kw) -> EvalResult:
        return pool.evaluate(task(task_name), candidate(rel), **kw)

    return _run
