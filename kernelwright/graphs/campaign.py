"""A campaign: many tasks, one budget, one checkpointed run.

    choose --(up to `parallel` tasks)--> work x N --> choose ... --(deadline, budget or tasks
    exhausted)--> finish

``choose`` asks the bandit (``bandit.SlidingWindowUCB``: sliding-window UCB on the improvement
of each task's best speedup per evaluation) which tasks get the next slices of evaluations,
up to ``parallel`` distinct ones (one per evaluation worker of a cluster); one ``work`` per
chosen task, run at once, grows that task's own optimisation run by one slice
(``campaign_slice.SliceRunner``);
``finish`` computes the campaign's figures (ours and KernelBench's). The campaign's thread lives
in the same checkpoint database as its task runs (thread id = campaign id, task run ids
``<campaign id>--<task name>``), with ``durability="sync"``: a kill -9 at any moment resumes
with ``kernelwright resume CAMPAIGN_ID`` and counts every evaluation once (``work`` is
idempotent; each slice record is written once, by the checkpoint that ends ``work``; of
parallel slices, those that finished before a kill are kept as the step's pending writes and
only the others run again).

Stops: the wall-clock deadline (``--hours``; checked between slices and, by the task run's
critic, between the rounds of a slice, so a campaign overruns by at most one round of
evaluations; ``resume CAMPAIGN --hours H`` moves it to H hours from then, kept in the
campaign's meta), the LLM token and cost budgets (summed over the task runs' usage ledgers),
or no task left with budget and ideas.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from kernelwright.errors import CampaignError
from kernelwright.graphs.bandit import Pull, SlidingWindowUCB, slice_gain
from kernelwright.graphs.campaign_metrics import campaign_summary
from kernelwright.graphs.campaign_slice import SliceRunner
from kernelwright.graphs.store import RunStore


def _add(a: list, b: list) -> list:
    return [*(a or []), *(b or [])]


class CampaignState(TypedDict, total=False):
    campaign_id: str
    tasks: list[str]  # task file paths, in a fixed order
    budget_per_task: int
    slice_evals: int
    deadline: float  # epoch seconds
    max_tokens: int | None
    max_cost: float | None
    slices: Annotated[list[dict[str, Any]], _add]  # one record per finished slice
    parallel: int  # tasks sliced at once (default 1)
    next_tasks: list[str]  # what ``choose`` picked for the next step's slices
    next_task: str | None  # the single pick of checkpoints made before ``parallel``
    task: str  # a ``work`` branch's task (its Send payload; never written)
    stop_reason: str
    status: str


def task_run_id(campaign_id: str, task_path: str) -> str:
    return f"{campaign_id}--{Path(task_path).stem}"


def task_dir_files(task_dir: str | Path) -> list[str]:
    """The KernelBench-format task files of a folder (``*.py`` not starting with ``_``)."""
    folder = Path(task_dir)
    if not folder.is_dir():
        raise CampaignError(f"task folder {task_dir} does not exist: pass a folder of task files")
    files = sorted(str(p.resolve()) for p in folder.glob("*.py") if not p.name.startswith("_"))
    if not files:
        raise CampaignError(
            f"no task files in {task_dir}: put KernelBench-format *.py files there "
            "(class Model, get_inputs, get_init_inputs)"
        )
    return files


def task_standing(state: CampaignState) -> dict[str, dict[str, Any]]:
    """Per task: evaluations spent, best speedup, exhausted flag, from the slice records."""
    standing = {
        t: {"spent": 0, "best": None, "exhausted": False, "slices": 0} for t in state["tasks"]
    }
    for record in state.get("slices") or []:
        entry = standing[record["task"]]
        entry.update(spent=record["spent"], best=record["best_after"])
        entry["exhausted"] = record["exhausted"]
        entry["slices"] += 1
    return standing


def usage_so_far(state: CampaignState) -> tuple[int, float | None]:
    """LLM tokens and cost of the campaign: the latest ledger totals of each task run."""
    latest: dict[str, dict[str, Any]] = {}
    for record in state.get("slices") or []:
        latest[record["task"]] = record
    tokens = sum(r["tokens"] for r in latest.values())
    costs = [r["cost"] for r in latest.values()]
    return tokens, None if None in costs else float(sum(costs))


def build_campaign_graph(
    runner: SliceRunner,
    bandit: SlidingWindowUCB | None = None,
    checkpointer=None,
    observer=None,
) -> CompiledStateGraph:
    """Compile the campaign loop; ``observer(event, data)`` hears of each slice."""
    nodes = _CampaignNodes(runner, bandit or SlidingWindowUCB(), observer)
    graph = StateGraph(CampaignState)
    graph.add_node("choose", nodes.choose)
    graph.add_node("work", nodes.work)
    graph.add_node("finish", nodes.finish)
    graph.add_edge(START, "choose")
    graph.add_conditional_edges("choose", _slices_or_finish, ["work", "finish"])
    graph.add_edge("work", "choose")
    graph.add_edge("finish", END)
    return graph.compile(checkpointer=checkpointer)


def _slices_or_finish(state: CampaignState) -> list[Send] | str:
    """One ``work`` branch per chosen task, run in the same step; ``finish`` when none."""
    tasks = state.get("next_tasks") or ([state["next_task"]] if state.get("next_task") else [])
    if not tasks:
        return "finish"
    return [Send("work", {**state, "task": t}) for t in tasks]


class _CampaignNodes:
    def __init__(self, runner: SliceRunner, bandit: SlidingWindowUCB, observer) -> None:
        self.runner = runner
        self.bandit = bandit
        self.observer = observer

    def _tell(self, event: str, data: dict[str, Any]) -> None:
        if self.observer is not None:
            self.observer(event, data)

    def choose(self, state: CampaignState) -> dict:
        standing = task_standing(state)
        active = [
            t for t, s in standing.items()
            if not s["exhausted"] and s["spent"] < state["budget_per_task"]
        ]  # fmt: skip
        why = self._stop_reason(state, active)
        if why is not None:
            return {"next_tasks": [], "next_task": None, "stop_reason": why}
        pulls = [Pull(r["task"], r["evals"], r["gain"]) for r in state.get("slices") or []]
        chosen: list[str] = []
        for _ in range(min(max(1, int(state.get("parallel") or 1)), len(active))):
            chosen.append(self.bandit.choose([t for t in active if t not in chosen], pulls))
        return {"next_tasks": chosen, "next_task": None}

    def _stop_reason(self, state: CampaignState, active: list[str]) -> str | None:
        if not active:
            return "every task spent its budget or ran out of ideas"
        if time.time() >= self.deadline(state):
            return "the campaign's time limit was reached"
        tokens, cost = usage_so_far(state)
        if state.get("max_tokens") is not None and tokens >= state["max_tokens"]:
            return f"LLM token budget spent ({tokens} >= {state['max_tokens']})"
        if state.get("max_cost") is not None and cost is not None and cost >= state["max_cost"]:
            return f"LLM cost budget spent ({cost:.4f} >= {state['max_cost']} USD)"
        return None

    def deadline(self, state: CampaignState) -> float:
        """The deadline in force: the one ``resume --hours`` set (meta), else the state's."""
        meta = self.runner.runs.meta(state["campaign_id"])
        return float(meta.get("deadline") or state["deadline"])

    def work(self, state: CampaignState) -> dict:
        task = state.get("task") or state["next_task"]
        before = task_standing(state)[task]
        target = min(before["spent"] + state["slice_evals"], state["budget_per_task"])
        run_id = task_run_id(state["campaign_id"], task)
        began = time.time()
        self._tell("slice", {"task": task, "run_id": run_id, "target": target,
                             "spent_before": before["spent"],
                             "budget_per_task": state["budget_per_task"]})  # fmt: skip
        meta = {"kind": "campaign-task", "campaign": state["campaign_id"]}
        out = self.runner.run(run_id, task, target, meta, deadline=self.deadline(state))
        evals = out.spent - before["spent"]
        record = {
            "task": task,
            "run_id": run_id,
            "evals": evals,
            "spent": out.spent,
            "target": target,
            "best_before": before["best"],
            "best_after": out.best,
            "best_low": out.best_low,
            "best_high": out.best_high,
            "chosen": out.chosen,
            "gain": slice_gain(before["best"], out.best, evals),
            "exhausted": out.stopped_early,
            "tokens": out.tokens,
            "cost": out.cost,
            "began": began,
            "at": time.time(),
        }
        self._tell("sliced", record)
        return {"slices": [record]}

    def finish(self, state: CampaignState) -> dict:
        summary = campaign_summary(state, self.runner.runs)
        runs = self.runner.runs
        runs.save_summary(state["campaign_id"], summary.model_dump_json(indent=1))
        runs.update_meta(
            state["campaign_id"],
            status="done",
            stop_reason=state.get("stop_reason"),
            evaluations=summary.evaluations,
            best_speedup=summary.kernelbench.geomean_speedup,
        )
        self._tell("finished", {"stop_reason": state.get("stop_reason")})
        return {"status": "done"}


def new_campaign_state(
    campaign_id: str,
    tasks: list[str],
    *,
    hours: float,
    budget_per_task: int,
    slice_evals: int,
    started: float,
    max_tokens: int | None = None,
    max_cost: float | None = None,
    parallel: int = 1,
) -> dict[str, Any]:
    return {
        "parallel": parallel,
        "campaign_id": campaign_id,
        "tasks": tasks,
        "budget_per_task": budget_per_task,
        "slice_evals": slice_evals,
        "deadline": started + hours * 3600.0,
        "max_tokens": max_tokens,
        "max_cost": max_cost,
        "status": "running",
    }


def campaign_meta(runs: RunStore, campaign_id: str) -> dict[str, Any]:
    meta = runs.meta(campaign_id)
    if meta.get("kind") != "campaign":
        raise CampaignError(
            f"run {campaign_id} is not a campaign: continue it with `kernelwright resume "
            f"{campaign_id}` (a single run) or start one with `kernelwright campaign TASK_DIR`"
        )
    return meta
