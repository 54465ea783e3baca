"""Shared fixtures for the tuner tests: a recorded (synthetic) timing table, no kernels."""

from __future__ import annotations

import pytest

from kernelwright.tools.tune.recorded import RecordedTable, synthetic_table

DECLARED = {
    "block": [32, 64, 128, 256, 512, 1024],
    "tile": [1, 2, 3, 4, 5, 6, 7, 8],
    "unroll": [1, 2, 4, 8],
    "vec": [1, 2, 4],
}


def make_table(seed: int = 1) -> RecordedTable:
    return synthetic_table("synthetic", DECLARED, seed=seed, limit=2048)


@pytest.fixture(autouse=True)
def _quiet_optuna():
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)


@pytest.fixture
def table() -> RecordedTable:
    return make_table()
