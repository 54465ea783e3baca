"""The optimisation loop as a LangGraph state machine.

    planner -> coder -> evaluate (one branch per candidate, via Send) -> critic
                 ^                                                        |
                 +------------- vary / switch strategy / search <---------+
                                                                          | stop
                                        confirm (re-measure the top 3) <--+ -> END

The planner also evaluates the reference itself as a candidate when the task allows the
framework space (spec/reference.py); the critic first challenges a would-be new best with a
short interleaved re-measurement (graphs/challenge.py).

Every node is idempotent: the planner keeps an existing plan, each evaluation branch first looks
for its result in the run store (keyed by candidate hash), so a resume after a crash never
evaluates a candidate twice nor loses a finished evaluation. Runs use ``durability="sync"``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from kernelwright.agents import Coder, Critic, Planner, Profiler
from kernelwright.config import Settings
from kernelwright.graphs.challenge import challenge
from kernelwright.graphs.confirm import confirm, measure_rounds
from kernelwright.graphs.state import EvalRequest, RunState, history_of
from kernelwright.graphs.store import RunStore
from kernelwright.spec import Candidate, Contract, Task, derive_contract
from kernelwright.spec.plan import Action, Profile, best_profile
from kernelwright.spec.reference import REFERENCE_SPACE, reference_candidate
from kernelwright.spec.result import EvalResult

log = logging.getLogger(__name__)

Evaluator = Callable[[Task, Candidate], EvalResult]
SearchHook = Callable[[Task, Contract, Any, Any, int], list[Candidate]]


@dataclass
class OptimizeContext:
    """Everything the nodes use; injected, so tests and other policies can replace any part."""

    settings: Settings
    store: RunStore
    planner: Planner
    coder: Coder
    profiler: Profiler
    critic: Critic
    evaluate: Evaluator
    search: SearchHook | None = None  # the seam for the tuner / archive (R^3 inner loop)
    batch_size: int = 2
    persist: Callable[[], None] | None = None  # saves agent-side state (LLM usage) after a node
    choose_parent: Callable[[Any], Profile | None] | None = None  # R^3 outer level (archive)
    # The harness's contract of a task (derived by its reference runner); without one the
    # contract is derived here. Either way the planner and the harness judge by the same one.
    contract_of: Callable[[Task], Contract] | None = None
    # Re-measures a candidate with more repeats (and torch.compile) in the same warm session
    # before the best is named (graphs/confirm.py); None: first figures stand.
    remeasure: Evaluator | None = None
    # Short re-measurement of a would-be new best during the search (graphs/challenge.py);
    # None: the search decides on first figures.
    challenge: Evaluator | None = None
    # Evaluate the reference itself as a candidate when the task allows the framework space
    # (spec/reference.py; also needs settings.reference_candidate).
    evaluate_reference: bool = False
    # The chat graph's knobs (graphs/chat.py): polled by its critic / whether every rejection
    # reason is quoted into a task revision (an LLM reads them).
    stop_requested: Callable[[], bool] | None = None
    quote_reasons: bool = False
    _tasks: dict[str, tuple[Task, Contract]] = field(default_factory=dict)

    def task(self, path: str) -> tuple[Task, Contract]:
        """Load a task and get its contract once per process."""
        if path not in self._tasks:
            task = Task.from_path(path)
            contract = self.contract_of(task) if self.contract_of else derive_contract(task)
            self._tasks[path] = (task, contract)
        return self._tasks[path]


def build_optimize_graph(checkpointer=None) -> CompiledStateGraph:
    """Compile the planner -> coder -> evaluate -> critic loop. The graph holds no run data:
    each run passes its :class:`OptimizeContext` as LangGraph's ``context`` (``Runtime``), so
    one compiled graph serves every run of the process (see ``graphs.drive``)."""
    graph = StateGraph(RunState, context_schema=OptimizeContext)
    for name in ("planner", "coder", "search", "evaluate", "critic", "confirm"):
        graph.add_node(name, node(OptimizeNodes, name))
    fan_out, route = node(OptimizeNodes, "fan_out"), node(OptimizeNodes, "route")
    graph.add_edge(START, "planner")
    graph.add_edge("planner", "coder")
    graph.add_conditional_edges("coder", fan_out, ["evaluate", "critic"])
    graph.add_conditional_edges("search", fan_out, ["evaluate", "critic"])
    graph.add_edge("evaluate", "critic")
    graph.add_conditional_edges("critic", route, ["coder", "search", "confirm"])
    graph.add_edge("confirm", END)
    return graph.compile(checkpointer=checkpointer)


def node(nodes_class: type, name: str) -> Callable[..., Any]:
    """A node (or edge) function calling ``nodes_class(runtime.context).<name>(state)``."""

    def call(state: Any, runtime: Runtime[OptimizeContext]) -> Any:
        return getattr(nodes_class(runtime.context), name)(state)

    call.__name__ = call.__qualname__ = name
    return call


class OptimizeNodes:
    """The nodes of the loop; other graphs (chat, campaign) reuse them with their own edges."""

    def __init__(self, ctx: OptimizeContext) -> None:
        self.ctx = ctx

    def planner(self, state: RunState) -> dict:
        if state.get("plan") is not None:
            return {}
        task, contract = self.ctx.task(state["task_path"])
        plan = self.ctx.planner.plan(task, contract, state["backend"])
        store = self.ctx.store
        store.save_plan(state["run_id"], plan.model_dump_json(indent=1), contract.render())
        store.update_meta(state["run_id"], status="running", plan=plan.strategy)
        self._persist()
        reference = self._reference(state["run_id"], task, contract, plan)
        return {"plan": plan, "round": 0, "status": "running", "reference": reference}

    def _reference(self, run_id: str, task: Task, contract: Contract, plan) -> Profile | None:
        """The reference itself, evaluated as a candidate by the same harness (not counted in
        the budget), when the task allows the framework space; None otherwise."""
        if not (self.ctx.evaluate_reference and self.ctx.settings.reference_candidate
                and contract.allows("framework")):
            return None
        store, candidate = self.ctx.store, reference_candidate(task)
        store.save_candidate(run_id, candidate)
        cached = store.load_reference(run_id)
        if cached is not None and cached["profile"]["candidate_id"] == candidate.id:
            return Profile.model_validate(cached["profile"])
        result = self.ctx.evaluate(task, candidate)
        profile = self.ctx.profiler.profile(candidate, result, plan).model_copy(
            update={"space": REFERENCE_SPACE})
        store.save_reference(run_id, {"result": result.model_dump(mode="json"),
                                      "profile": profile.model_dump(mode="json")})
        log.info("the reference as a candidate: %s", f"{profile.candidate_ms} ms"
                 if profile.correct else profile.error)
        return profile

    def coder(self, state: RunState) -> dict:
        return self._propose(state, self.ctx.coder.propose, self.ctx.choose_parent)

    def search(self, state: RunState) -> dict:
        return self._propose(state, self.ctx.search or self.ctx.coder.propose, None)

    def _propose(self, state: RunState, propose, choose_parent) -> dict:
        task, contract = self.ctx.task(state["task_path"])
        history = history_of(state)
        if choose_parent is not None:
            history = history.model_copy(update={"parent": choose_parent(history)})
        n = min(self.ctx.batch_size, history.budget - history.spent)
        seen = {p.candidate_id for p in history.profiles}
        fresh = [c for c in propose(task, contract, state["plan"], history, n) if c.id not in seen]
        unique = list({c.id: c for c in fresh}.values())[: max(n, 0)]
        for candidate in unique:
            self.ctx.store.save_candidate(state["run_id"], candidate)
        self._persist()
        return {"pending": [c.id for c in unique], "round": history.round + 1}

    def fan_out(self, state: RunState):
        pending = state.get("pending") or []
        if not pending:
            return "critic"
        return [
            Send(
                "evaluate",
                EvalRequest(
                    run_id=state["run_id"],
                    task_path=state["task_path"],
                    candidate_id=cid,
                    plan=state["plan"],
                ),
            )
            for cid in pending
        ]

    def evaluate(self, request: EvalRequest) -> dict:
        run_id, cid = request["run_id"], request["candidate_id"]
        store = self.ctx.store
        cached = store.load_result(run_id, cid)
        if cached is not None:  # finished before a crash: never evaluate twice
            return {"profiles": [Profile.model_validate(cached["profile"])], "round_sizes": []}
        if self._past_time_limit(run_id):
            # The time limit bounds the work, not only the rounds: a candidate proposed
            # before it (e.g. while the coder's last request ran) is kept in the store but
            # not evaluated after it; the critic then stops on the limit.
            log.info("evaluate: time limit reached; %s kept but not evaluated", cid)
            return {"profiles": []}
        task, _ = self.ctx.task(request["task_path"])
        candidate = store.load_candidate(run_id, cid)
        result = self.ctx.evaluate(task, candidate)
        profile = self.ctx.profiler.profile(candidate, result, request["plan"])
        record = {
            "result": result.model_dump(mode="json"),
            "profile": profile.model_dump(mode="json"),
        }
        store.save_result(run_id, cid, record)
        store.log_evaluation(run_id, cid)
        return {"profiles": [profile]}

    def critic(self, state: RunState) -> dict:
        history = history_of(state)
        done_ids = {p.candidate_id for p in history.profiles}
        size = sum(cid in done_ids for cid in state.get("pending") or [])  # evaluated ones
        challenged = self._challenge(state, size)
        if challenged:
            state = {**state, "challenged": [*(state.get("challenged") or []), *challenged]}
            history = history_of(state)
        history = history.model_copy(update={"round_sizes": [*history.round_sizes, size]})
        elapsed = time.time() - state.get("started", time.time())
        decision = self.ctx.critic.decide(state["plan"], history, elapsed)
        log.info("critic: %s (%s)", decision.action.value, decision.reason)
        done = decision.action == Action.STOP
        best = history.best
        self.ctx.store.update_meta(
            state["run_id"],
            status="done" if done else "running",
            best_speedup=best.speedup if best else None,
            evaluations=history.spent,
        )
        self._persist()
        update = {"decisions": [decision], "round_sizes": [size], "pending": [],
                  "challenged": challenged}
        return {**update, "status": "done"} if done else update

    def _challenge(self, state: RunState, size: int) -> list[Profile]:
        """Re-measure this round's would-be new best against the incumbent and the
        reference before the search decides (graphs/challenge.py)."""
        rounds = self.ctx.settings.challenge_rounds
        if self.ctx.challenge is None or rounds <= 0 or size <= 0:
            return []
        history = history_of(state)
        task, _ = self.ctx.task(state["task_path"])
        run_id, store, plan = state["run_id"], self.ctx.store, state["plan"]
        return challenge(
            history.profiles, size, history.reference,
            lambda cid: store.load_candidate(run_id, cid),
            lambda cands: measure_rounds(task, plan, cands, rounds, self.ctx.challenge,
                                         self.ctx.profiler.profile))

    def confirm(self, state: RunState) -> dict:
        """Re-measure the top candidates before the best is named (graphs/confirm.py)."""
        n = self.ctx.settings.confirm_top
        if self.ctx.remeasure is None or n <= 0:
            return {"confirmed": []}
        task, _ = self.ctx.task(state["task_path"])
        run_id, store = state["run_id"], self.ctx.store
        history = history_of({**state, "confirmed": []})  # first figures or challenged ones
        reference = history.reference
        confirmed = confirm(task, state["plan"], history.profiles, n,
                            lambda cid: store.load_candidate(run_id, cid), self.ctx.remeasure,
                            self.ctx.profiler.profile,
                            reference=(store.load_candidate(run_id, reference.candidate_id)
                                       if reference is not None and reference.correct
                                       else None),
                            rounds=self.ctx.settings.confirm_rounds)
        best = best_profile([*(state.get("profiles") or []), *confirmed])
        store.update_meta(run_id, best_speedup=best.speedup if best else None)
        self._persist()
        return {"confirmed": confirmed}

    def _past_time_limit(self, run_id: str) -> bool:
        limit = self.ctx.settings.time_limit_s
        started = self.ctx.store.meta(run_id).get("started") if limit is not None else None
        return started is not None and time.time() >= started + limit

    def _persist(self) -> None:
        if self.ctx.persist is not None:
            self.ctx.persist()

    def route(self, state: RunState) -> str:
        action = state["decisions"][-1].action
        if action == Action.STOP:
            return "confirm"
        if action == Action.SEARCH and self.ctx.search is not None:
            return "search"
        return "coder"


def recursion_limit(budget: int, max_idle_rounds: int) -> int:
    """LangGraph steps a run may take: a bound derived from its budget, never a magic number.

    Each round is at most three steps (coder or search, the evaluation fan-out, critic). A
    productive round spends at least one evaluation and at most ``max_idle_rounds - 1`` idle
    rounds can sit between two productive ones, so a run has at most
    ``(budget + 1) * max_idle_rounds`` rounds; plus the planner and some slack.
    """
    return 3 * (budget + 1) * max_idle_rounds + 10
