"""The campaign graph with a fake team: allocation, stops, crash and resume, metrics."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kernelwright.config import Settings
from kernelwright.errors import CampaignError
from kernelwright.graphs.campaign_metrics import KernelBenchMetrics, TaskRow, markdown_summary
from kernelwright.graphs.campaign_run import resume_campaign, start_campaign
from kernelwright.graphs.store import RunStore
from kernelwright.graphs.summary_models import ReportData, Roofs, fast_p, geomean

from .fakes import Evaluator, team

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"
CURVES = {
    "l1_gelu": lambda b: 0.5 * 1.5**b,  # keeps improving
    "l1_relu_like": lambda b: 1.05,  # stalls from the start
}


@pytest.fixture
def task_dir(tmp_path):
    folder = tmp_path / "tasks"
    folder.mkdir()
    shutil.copy(EXAMPLES / "l1_gelu.py", folder / "l1_gelu.py")
    shutil.copy(EXAMPLES / "l1_gelu.py", folder / "l1_relu_like.py")
    (folder / "_helper.py").write_text("not a task\n")
    return folder


@pytest.fixture
def settings(tmp_path):
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")


def run(task_dir, settings, evaluator, tokens=0, **kw):
    args = {"hours": 1.0, "budget_per_task": 12, "slice_evals": 2, "campaign_id": "c1"}
    return start_campaign(task_dir, settings, settings.data_dir, **{**args, **kw},
                          context_factory=team(evaluator, tokens))  # fmt: skip


def test_improving_task_gets_the_evaluations_first(task_dir, settings):
    evaluator = Evaluator(CURVES)
    order = []
    summary = start_campaign(
        task_dir, settings, settings.data_dir, hours=1.0, budget_per_task=8, slice_evals=2,
        campaign_id="c1", context_factory=team(evaluator),
        observer=lambda e, d: order.append(Path(d["task"]).stem) if e == "slice" else None,
    )  # fmt: skip
    assert summary.evaluations == 16 == len(evaluator.calls) == len(set(evaluator.calls))
    assert order[:6].count("l1_gelu") >= 4, order  # the stalled task yields
    rows = {r.task: r for r in summary.rows}
    assert rows["l1_gelu"].speedup == pytest.approx(0.5 * 1.5**8)
    assert summary.kernelbench.fast_1 == 1.0 and summary.kernelbench.tasks == 2
    meta = RunStore(settings.data_dir).meta("c1")
    assert meta["status"] == "done" and meta["kind"] == "campaign"
    assert (settings.data_dir / "runs" / "c1--l1_gelu" / "best" / "candidate.py").exists()


@pytest.mark.slow
def test_kill_anywhere_then_resume_counts_every_evaluation_once(task_dir, settings):
    for crash_after in (3, 4):  # two kills: inside a slice and at a slice's edge
        with pytest.raises(KeyboardInterrupt):
            run(task_dir, settings, Evaluator(CURVES, crash_after=crash_after))
    evaluator = Evaluator(CURVES)
    summary = resume_campaign("c1", settings, settings.data_dir, context_factory=team(evaluator))
    store = RunStore(settings.data_dir)
    logged = store.evaluations("c1--l1_gelu") + store.evaluations("c1--l1_relu_like")
    assert len(logged) == len(set(logged)) == 24 == summary.evaluations
    assert 3 + 4 + len(evaluator.calls) == 24  # nothing re-evaluated after a kill
    again = Evaluator(CURVES)
    resume_campaign("c1", settings, settings.data_dir, context_factory=team(again))
    assert again.calls == []  # a finished campaign only reports


def test_deadline_and_token_budget_stop_the_campaign(task_dir, settings):
    summary = run(task_dir, settings, Evaluator(CURVES), hours=1e-9)
    assert summary.evaluations == 0 and "time limit" in summary.stop_reason
    summary = run(task_dir, settings, Evaluator(CURVES), campaign_id="c2", max_tokens=5000,
                  tokens=1000)  # fmt: skip
    assert "token budget" in summary.stop_reason
    assert 5 <= summary.evaluations <= 6  # stops at the first slice boundary past the budget


def test_bad_task_folder_and_non_campaign_ids_name_the_fix(tmp_path, settings):
    with pytest.raises(CampaignError, match="does not exist"):
        start_campaign(tmp_path / "nope", settings, settings.data_dir, hours=1)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CampaignError, match="no task files"):
        start_campaign(tmp_path / "empty", settings, settings.data_dir, hours=1)
    RunStore(settings.data_dir).create_run("plain", {"task": "t"})
    with pytest.raises(CampaignError, match="not a campaign"):
        resume_campaign("plain", settings, settings.data_dir)


def row(task, speedup, low=None):
    return TaskRow(
        task=task,
        run_id=task,
        evaluations=1,
        slices=1,
        correct=speedup is not None,
        speedup=speedup,
        speedup_low=low,
        speedup_high=None,
        exhausted=False,
    )


def test_kernelbench_metrics_by_hand():
    rows = [row("a", 2.0, 1.5), row("b", 0.5), row("c", None), row("d", 8.0, 0.9)]
    pairs = [(r.correct, r.speedup) for r in rows]
    assert fast_p(pairs, 0.0) == 0.75 and fast_p(pairs, 1.0) == 0.5
    assert geomean([2.0, 0.5, 8.0]) == pytest.approx(2.0)
    metrics = KernelBenchMetrics(tasks=4, fast_0=0.75, fast_1=0.5, geomean_speedup=2.0)
    assert metrics.fast_1 == 0.5
    assert fast_p([], 1.0) is None and geomean([]) is None  # the report's values too
    assert ReportData(generated=0, store="s", runs=[], roofs=Roofs()).fast_p(1.0) is None


def test_markdown_summary_lists_both_metric_sets(task_dir, settings):
    summary = run(task_dir, settings, Evaluator(CURVES), budget_per_task=2)
    text = markdown_summary(summary)
    assert "KernelBench fast_1" in text and "proven faster" in text
    assert "| l1_gelu |" in text and "| l1_relu_like |" in text


def test_resume_with_hours_extends_a_campaign_that_hit_its_time_limit(task_dir, settings):
    evaluator = Evaluator(CURVES)
    summary = run(task_dir, settings, evaluator, hours=1e-9)
    assert summary.evaluations == 0 and "time limit" in summary.stop_reason
    again = resume_campaign("c1", settings, settings.data_dir, context_factory=team(evaluator))
    assert again.evaluations == 0  # without --hours a finished campaign only reports
    extended = resume_campaign("c1", settings, settings.data_dir, hours=1.0,
                               context_factory=team(evaluator))  # fmt: skip
    assert extended.evaluations == 24 == len(set(evaluator.calls))  # both tasks, full budgets
    assert "time limit" not in extended.stop_reason
    with pytest.raises(CampaignError, match="positive number of hours"):
        resume_campaign("c1", settings, settings.data_dir, hours=0)


def test_the_time_limit_stops_a_slice_between_its_rounds(task_dir, settings):
    import time as clock

    base = Evaluator(CURVES)

    def slow(task, candidate):
        clock.sleep(0.2)
        return base(task, candidate)

    summary = run(task_dir, settings, slow, hours=0.5 / 3600, slice_evals=12)
    # one slice of 12 would take 2.4 s; the critic stops it at the deadline after a round of 2
    assert 1 <= summary.evaluations <= 4 and "time limit" in summary.stop_reason
    meta = RunStore(settings.data_dir).meta("c1--l1_gelu")
    assert meta["evaluations"] == summary.evaluations


def test_progress_lines_count_per_slice(capsys):
    from kernelwright.cli.campaign import _progress

    _progress("slice", {"task": "/t/l1_gelu.py", "target": 6, "spent_before": 4,
                        "budget_per_task": 12})  # fmt: skip
    _progress("sliced", {"task": "/t/l1_gelu.py", "evals": 2, "spent": 6, "best_after": 1.5,
                         "gain": 0.1})  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "[campaign] l1_gelu: a slice of up to 2 evaluations (4 so far, 12 at most)"
    assert out[1].startswith("[campaign] l1_gelu: 2 evaluations in this slice (6 in all)")


class MeetingEvaluator(Evaluator):
    """Both tasks' first evaluations must be under way at once (a barrier), so the test fails
    if slices run one after the other."""

    def __init__(self, curves, crash_after=None) -> None:
        super().__init__(curves, crash_after)
        self.barrier = __import__("threading").Barrier(2, timeout=30)
        self.met: set[str] = set()

    def __call__(self, task, candidate):
        if task.name not in self.met:
            self.met.add(task.name)
            self.barrier.wait()
        return super().__call__(task, candidate)


def test_parallel_slices_run_at_once_and_count_every_evaluation_once(task_dir, settings):
    evaluator = MeetingEvaluator(CURVES)
    summary = run(task_dir, settings, evaluator, parallel=2)
    assert summary.evaluations == 24 == len(evaluator.calls) == len(set(evaluator.calls))
    store = RunStore(settings.data_dir)
    assert store.meta("c1")["parallel"] == 2
    logged = store.evaluations("c1--l1_gelu") + store.evaluations("c1--l1_relu_like")
    assert len(logged) == len(set(logged)) == 24


@pytest.mark.slow
def test_a_parallel_campaign_killed_resumes_and_counts_every_evaluation_once(task_dir, settings):
    with pytest.raises(KeyboardInterrupt):
        run(task_dir, settings, Evaluator(CURVES, crash_after=5), parallel=2)
    evaluator = Evaluator(CURVES)
    summary = resume_campaign("c1", settings, settings.data_dir, context_factory=team(evaluator))
    store = RunStore(settings.data_dir)
    logged = store.evaluations("c1--l1_gelu") + store.evaluations("c1--l1_relu_like")
    assert len(logged) == len(set(logged)) == 24 == summary.evaluations
    assert 5 + len(evaluator.calls) == 24  # nothing re-evaluated after the kill


def test_parallel_must_be_positive(task_dir, settings):
    with pytest.raises(CampaignError, match="--parallel 0"):
        run(task_dir, settings, Evaluator(CURVES), parallel=0)
