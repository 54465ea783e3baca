"""The teams of agents a run can use: offline (the lowering compiler + rules) or LLM-driven.

A team is a context manager yielding an ``OptimizeContext``; it owns the warm evaluation worker
and, for the LLM team, the chat client whose usage ledger and meta-prompt archive are persisted
in the run store so a resumed run keeps counting against its budget.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from kernelwright.config import Settings
from kernelwright.graphs.hierarchy import R3Search
from kernelwright.graphs.optimize import OptimizeContext
from kernelwright.graphs.store import RunStore


@contextlib.contextmanager
def offline_team(settings: Settings, store: RunStore, run_id: str) -> Iterator[OptimizeContext]:
    """Lowering planner, lowered-program coder, roofline profiler, rule critic, sandboxed
    harness; with ``settings.llm`` enabled, LLM policies wrap them (the offline ones stay as
    seed, fallbacks and hard stops)."""
    from kernelwright.agents.coder import LoweredCoder
    from kernelwright.agents.critic import HierarchyCritic, RuleCritic
    from kernelwright.agents.lowered import SourceCache
    from kernelwright.agents.planner import LoweringPlanner
    from kernelwright.agents.profiler import RooflineProfiler
    from kernelwright.tools.evaluate import WorkerPool, evaluate
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
    if llm.enabled:
        # The key's variable may have any name: never let candidate code see it.
        settings = settings.model_copy(
            update={"secret_env": [*settings.secret_env, llm.api_key_env]}
        )
        planner, coder, critic, persist = _llm_policies(
            settings, store, run_id, planner, coder, critic
        )
    with WorkerPool(settings) as pool:
        yield OptimizeContext(
            settings=settings,
            store=store,
            planner=planner,
            coder=coder,
            profiler=RooflineProfiler(machine_peaks(peaks_dir(settings))),
            critic=critic,
            evaluate=lambda task, cand: evaluate(task, cand, settings=settings, pool=pool),
            contract_of=pool.contract,
            remeasure=lambda task, cand: evaluate(
                task, cand, settings=confirm_settings(settings), pool=pool
            ),
            batch_size=settings.max_concurrent_evals * 2,
            persist=persist,
            search=search.inner if search is not None else None,
            choose_parent=search.parent if search is not None else None,
        )


def confirm_settings(settings: Settings) -> Settings:
    """The final re-measurement's settings: longer timing, torch.compile beside it."""
    return settings.model_copy(
        update={
            "min_time_s": settings.min_time_s * settings.confirm_time_factor,
            "time_compile": settings.time_compile or settings.confirm_compile,
        }
    )


def _llm_policies(settings, store: RunStore, run_id: str, planner, coder, critic):
    from kernelwright.agents.llm_team import make_llm_policies
    from kernelwright.agents.usage import UsageLedger

    saved = store.load_usage(run_id)
    ledger = UsageLedger.model_validate_json(saved) if saved is not None else None
    team = make_llm_policies(
        capped_llm_settings(settings),
        planner,
        coder,
        critic,
        sources=lambda cid: _load_or_none(store, run_id, cid),
        ledger=ledger,
        prompt_archive=store.prompts_path(run_id),
        seed=settings.seed,
    )

    def persist() -> None:
        store.save_usage(run_id, team.client.ledger.model_dump_json())

    return team.planner, team.coder, team.critic, persist


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
