"""The teams of agents a run can use: offline (the lowering compiler + rules) or LLM-driven.

A team is a context manager yielding an ``OptimizeContext``; it owns the warm evaluation worker
and, for the LLM team, the chat client whose usage ledger and meta-prompt archive are persisted
in the run store so a resumed run keeps counting against its budget.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator
from pathlib import Path

from kernelwright.config import Settings
from kernelwright.graphs.hierarchy import R3Search
from kernelwright.graphs.optimize import OptimizeContext
from kernelwright.graphs.store import RunStore


@contextlib.contextmanager
def offline_team(settings: Settings, store: RunStore, run_id: str,
                 pool=None) -> Iterator[OptimizeContext]:
    """Lowering planner, lowered-program coder, roofline profiler, rule critic, sandboxed
    harness; with ``settings.llm`` enabled, LLM policies wrap them (the offline ones stay as
    seed, fallbacks and hard stops). ``pool``: an evaluation pool the caller owns and shares
    (a campaign's cluster workers); by default the team opens its own."""
    from kernelwright.agents.coder import LoweredCoder
    from kernelwright.agents.critic import HierarchyCritic, RuleCritic
    from kernelwright.agents.lowered import SourceCache
    from kernelwright.agents.planner import LoweringPlanner
    from kernelwright.agents.profiler import RooflineProfiler
    from kernelwright.tools.cluster import open_pool
    from kernelwright.tools.evaluate import evaluate
    from kernelwright.tools.peaks import machine_peaks, peaks_dir

    lowered = SourceCache()  # one lowering per task and shape signature, shared by the team
    search = R3Search(store, run_id, settings, lowered) if settings.hierarchy else None
    limits = {"time_limit_s": settings.time_limit_s, "max_idle_rounds": settings.max_idle_rounds}
    critic = (
        HierarchyCritic(inner_share=settings.inner_share, **limits)
        if search is not None
        else RuleCritic(**limits)
    )
    planner = LoweringPlanner(cache=lowered)
    coder = LoweredCoder(seed=settings.seed, cache=lowered)
    persist = None
    llm = settings.llm
    peaks = machine_peaks(peaks_dir(settings))  # measured once per machine and runtime
    if llm.enabled:
        # The key's variable may have any name: never let candidate code see it.
        settings = settings.model_copy(
            update={"secret_env": [*settings.secret_env, llm.api_key_env]}
        )
        planner, coder, critic, persist = _llm_policies(
            settings, store, run_id, planner, coder, critic, peaks, lowered
        )
    owned = open_pool(settings) if pool is None else contextlib.nullcontext(pool)
    with owned as pool:  # in-process, or Ray workers with --cluster
        yield OptimizeContext(
            settings=settings,
            store=store,
            planner=planner,
            coder=coder,
            profiler=RooflineProfiler(peaks),
            critic=critic,
            evaluate=lambda task, cand: evaluate(task, cand, settings=settings, pool=pool),
            contract_of=pool.contract,
            remeasure=lambda task, cand: evaluate(
                task, cand, settings=confirm_settings(settings), pool=pool
            ),
            challenge=lambda task, cand: evaluate(
                task, cand, settings=challenge_settings(settings), pool=pool
            ),
            evaluate_reference=True,
            batch_size=settings.max_concurrent_evals * 2,
            persist=persist,
            search=search.inner if search is not None else None,
            choose_parent=search.parent if search is not None else None,
        )


def confirm_settings(settings: Settings) -> Settings:
    """The final re-measurement's settings, per round: ``confirm_time_factor`` times the
    measuring time split over ``confirm_rounds`` rounds, torch.compile beside it."""
    factor = max(1.0, settings.confirm_time_factor / settings.confirm_rounds)
    return settings.model_copy(
        update={
            "min_time_s": settings.min_time_s * factor,
            "time_compile": settings.time_compile or settings.confirm_compile,
            "seeds": 1,  # correct on every seed already; each round still checks every
            # shape variant and the outputs of timed calls
        }
    )


def challenge_settings(settings: Settings) -> Settings:
    """A challenge's settings (graphs/challenge.py): short, without torch.compile, one seed
    (the candidate was verified on every seed by its first evaluation)."""
    return settings.model_copy(
        update={"min_time_s": settings.min_time_s * settings.challenge_time_factor,
                "time_compile": False, "seeds": 1}
    )


def _llm_policies(settings, store: RunStore, run_id: str, planner, coder, critic, peaks, lowered):
    from kernelwright.agents.journal import CallJournal
    from kernelwright.agents.llm_team import make_llm_policies
    from kernelwright.agents.prompting import machine_text
    from kernelwright.agents.usage import UsageLedger

    saved = store.load_usage(run_id)
    ledger = UsageLedger.model_validate_json(saved) if saved is not None else UsageLedger()
    journal = CallJournal(store.transcript_path(run_id))
    llm = capped_llm_settings(settings)
    ledger = ledger_with_journal(ledger, journal, llm)  # calls a kill cut off from the ledger
    limit = settings.time_limit_s
    started = store.meta(run_id).get("started")
    deadline = started + limit if limit is not None and started is not None else None
    team = make_llm_policies(
        llm,
        planner,
        coder,
        critic,
        sources=lambda cid: _load_or_none(store, run_id, cid),
        ledger=ledger,
        prompt_family_dir=Path(settings.data_dir) / "meta_prompts",
        seed=settings.seed,
        machine=machine_text(peaks, settings.backend),
        context=lambda: task_context(store, run_id),
        can_search=lambda history: tuner_has_points(store, run_id, settings.backend, lowered,
                                                    history),
        journal=journal,
        deadline=deadline,
    )

    def save_usage() -> None:
        store.save_usage(run_id, team.client.ledger.model_dump_json())

    def persist() -> None:
        save_usage()
        if team.metaprompter is not None and len(team.metaprompter.archive):
            team.metaprompter.archive.save(store.prompts_path(run_id))  # for `show`

    team.client.on_call = save_usage  # the ledger is on disk after every paid call

    return team.planner, team.coder, team.critic, persist


def ledger_with_journal(ledger, journal, settings):
    """``ledger`` plus the transcript's calls it lacks (a kill between the two writes)."""
    from kernelwright.agents.usage import Usage

    entries = journal.entries()
    for agent in {e["agent"] for e in entries}:
        mine = [e for e in entries if e["agent"] == agent]
        counted = ledger.per_agent.get(agent, Usage()).calls
        for entry in mine[counted:]:
            usage = {k: entry[k] for k in ("input_tokens", "output_tokens")}
            ledger.add(agent, usage, price=settings.price_for(None))
    return ledger


def task_context(store: RunStore, run_id: str) -> tuple[str | None, str | None]:
    """The run's contract text (saved with the plan) and its task's reference source."""
    contract = store.run_dir(run_id) / "contract.txt"
    task_path = store.meta(run_id).get("task_path")
    try:
        reference = Path(task_path).read_text() if task_path else None
    except OSError:
        reference = None
    return (contract.read_text() if contract.exists() else None), reference


def tuner_has_points(store: RunStore, run_id: str, backend: str, lowered, history) -> bool:
    """Whether the lowered program's schedule space has a point no profile has measured yet."""
    from kernelwright.errors import LoweringError
    from kernelwright.spec import Task

    try:
        task = Task.from_path(store.meta(run_id)["task_path"])
        space = lowered.get(task, None, backend).space()
    except (LoweringError, OSError, KeyError):
        return False
    size = math.prod(len(v) for v in space.values()) if space else 0
    tried = {json.dumps(p.params, sort_keys=True, default=str) for p in history.profiles
             if p.source == "lowered"}
    return size > len(tried)


def _load_or_none(store: RunStore, run_id: str, candidate_id: str):
    try:
        return store.load_candidate(run_id, candidate_id)
    except FileNotFoundError:
        return None


def capped_llm_settings(settings: Settings):
    """The run's LLM settings with a request cap: the one given, else budget x requests/eval.

    Even a run with no token or cost limit cannot send more than that many requests (a model
    that keeps repeating itself must not turn into a bill).
    """
    llm = settings.llm
    if llm.max_requests is not None:
        return llm
    return llm.model_copy(
        update={"max_requests": settings.budget * settings.llm_requests_per_eval}
    )
