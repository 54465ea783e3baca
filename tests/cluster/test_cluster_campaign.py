"""A campaign spread over the Ray head's two device workers: one pool for every task's team,
one slice per worker at once, every evaluation counted once."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kernelwright.testing.harness_check import quick_settings

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.requires_sycl, pytest.mark.slow]


def test_a_campaign_runs_one_slice_per_worker_at_once(ray_head, tmp_path):
    from kernelwright.graphs.campaign_run import start_campaign
    from kernelwright.graphs.store import RunStore, open_checkpointer

    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for name in ("l1_gelu", "l1_row_softmax"):
        shutil.copy(ROOT / "examples" / "tasks" / f"{name}.py", tasks / f"{name}.py")
    settings = quick_settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache",
                              cluster="auto", backend="sycl")
    summary = start_campaign(tasks, settings, settings.data_dir, hours=1.0, budget_per_task=2,
                             slice_evals=2, campaign_id="spread")
    runs = RunStore(settings.data_dir)
    gelu, softmax = runs.evaluations("spread--l1_gelu"), runs.evaluations("spread--l1_row_softmax")
    logged = gelu + softmax
    # each task spends up to its budget (the critic may stop one early: no ideas left)
    assert gelu and softmax and len(gelu) <= 2 and len(softmax) <= 2
    assert len(logged) == len(set(logged)) == summary.evaluations
    state = open_checkpointer(settings.data_dir).get_tuple(
        {"configurable": {"thread_id": "spread"}}).checkpoint["channel_values"]
    assert state["parallel"] == 2  # one task per worker of the cluster
    first, second = sorted(state["slices"], key=lambda r: r["began"])
    assert first["task"] != second["task"]
    assert second["began"] < first["at"], "the two slices ran one after the other"
