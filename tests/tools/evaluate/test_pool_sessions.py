"""A pool keeps at most ``warm_sessions`` task sessions: a campaign over many tasks does not
hold a reference runner and a fork server (hundreds of MB each) for every task it has seen."""

from __future__ import annotations

import pytest
from kw_eval_helpers import FAST, candidate, task

from kernelwright.config import Settings
from kernelwright.tools.evaluate import WorkerPool

pytestmark = pytest.mark.slow


def test_the_least_recently_used_session_is_closed_past_the_bound(tmp_path):
    settings = Settings(**FAST, warm_sessions=2, data_dir=tmp_path / "d", cache_dir=tmp_path / "c")
    with WorkerPool(settings) as pool:
        first = pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"))
        assert first.correct, first.error
        gelu = pool.session(task("gelu"), settings)[0]
        pool.contract(task("matmul"))
        assert pool.warm == ["gelu", "matmul"]
        pool.contract(task("gelu"))  # used again: now matmul is the least recent
        pool.contract(task("small_outputs"))
        assert pool.warm == ["gelu", "small_outputs"]
        assert gelu.alive  # kept, and still the same session
        starts = pool.starts
        again = pool.evaluate(task("matmul"), candidate("candidates/linear_torch"))
        assert again.correct, again.error
        assert pool.starts == starts + 1 and pool.warm == ["small_outputs", "matmul"]
        assert not gelu.alive  # its reference runner and fork server were stopped
