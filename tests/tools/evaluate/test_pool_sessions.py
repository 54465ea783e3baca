"""A pool keeps at most ``warm_sessions`` task sessions: a campaign over many tasks does not
hold a reference runner (hundreds of MB) for every task it has seen. Its sandboxed fork servers
serve every task, one evaluation at a time, except across framework lockdowns."""

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
        assert not gelu.alive  # its reference runner was stopped


def test_tasks_share_fork_servers_but_never_across_a_framework_lockdown(tmp_path):
    settings = Settings(**FAST, warm_sessions=1, data_dir=tmp_path / "d", cache_dir=tmp_path / "c")
    with WorkerPool(settings) as pool:
        for name, cand in [("gelu", "gelu_torch"), ("matmul", "linear_torch"),
                           ("gelu", "gelu_torch")]:
            result = pool.evaluate(task(name), candidate(f"candidates/{cand}"))
            assert result.correct, result.error
            assert result.phases_s["worker_start"] > 0  # a new session (warm_sessions=1)
        assert (pool.starts, pool.server_starts) == (3, 1)
        # a custom-kernels-only task locks the framework into its server for good ...
        locked = pool.evaluate(task("gelu_kernel"), candidate("exploits/framework_call"))
        assert "FrameworkOperatorError" in (locked.error or "")
        assert pool.server_starts == 2
        # ... so a task that allows the framework never gets that server
        after = pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"))
        assert after.correct, after.error
        assert pool.server_starts == 2  # the first server, idle again
