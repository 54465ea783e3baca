"""The R^3 search hierarchy inside the optimisation graph.

Outer level (source variation): every evaluated candidate enters a MAP-Elites archive keyed by
its source's behaviour descriptor (KernelFoundry's memory / compute / parallelism levels); the
coder's next parent is drawn from it (explore / exploit / uniform) instead of always the best.
Inner level (schedule parameters): for the most promising source (the lowered program), an
Optuna tuner (TPE) proposes points of its declared schedule space through ask/tell, its study
kept in a journal in the run directory so tuning resumes after a crash.

Everything here is rebuilt from the run store on each call (the archive from the profiles, the
tuner from its journal), so graph nodes stay idempotent.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from kernelwright.agents.lowered import SOURCE_NAME, LoweredSource, SourceCache
from kernelwright.errors import KernelwrightError, LoweringError, SpaceExhaustedError
from kernelwright.graphs.store import RunStore
from kernelwright.spec import Candidate, Contract, Task
from kernelwright.spec.plan import History, Plan, Profile
from kernelwright.spec.result import EvalResult
from kernelwright.tools.evolve import MapElitesArchive, ParentSelector, describe
from kernelwright.tools.tune import (
    OptunaTuner,
    SearchSpace,
    TrialState,
)

if TYPE_CHECKING:
    from kernelwright.config import Settings

log = logging.getLogger(__name__)

INNER_ORIGIN = "tuner:"


class R3Search:
    """Archive outside, Optuna inside, for one run.

    Example:
        >>> search = R3Search(store, run_id, settings)  # doctest: +SKIP
        >>> ctx = OptimizeContext(..., search=search.inner,
        ...                       choose_parent=search.parent)  # doctest: +SKIP
    """

    def __init__(
        self,
        store: RunStore,
        run_id: str,
        settings: Settings,
        lowered: SourceCache | None = None,
    ) -> None:
        self.store, self.run_id, self.settings = store, run_id, settings
        self.selector = ParentSelector(seed=settings.seed)
        self.lowered = lowered or SourceCache()  # shared with the planner and coder
        self._tuners: dict[str, OptunaTuner] = {}

    def __repr__(self) -> str:
        return f"R3Search(run={self.run_id!r}, tuners={sorted(self._tuners)})"

    # -- outer level --------------------------------------------------------------------------
    def archive(self, profiles: list[Profile]) -> MapElitesArchive:
        """The archive of every evaluated candidate (rebuilt, then saved for ``show``)."""
        archive = MapElitesArchive(seed=self.settings.seed)
        for profile in profiles:
            source = self.store.load_candidate(self.run_id, profile.candidate_id).source
            cell = archive.cell_of(tuple(describe(source)))
            archive.add_scored(profile.candidate_id, cell, profile.level, profile.speedup)
            archive.end_generation()
        archive.save(self.store.archive_path(self.run_id))
        return archive

    def parent(self, history: History) -> Profile | None:
        """The outer level's next parent: a correct elite drawn explore / exploit / uniform."""
        correct = [p for p in history.profiles if p.correct]
        if not correct:
            return None
        archive = self.archive(history.profiles)
        self.selector.rng = _rng(self.settings.seed, history.round)
        chosen = self.selector.select(archive).parent.candidate_id
        return next((p for p in correct if p.candidate_id == chosen), history.best)

    # -- inner level --------------------------------------------------------------------------
    def inner(
        self, task: Task, contract: Contract, plan: Plan, history: History, n: int
    ) -> list[Candidate]:
        """Tuner proposals in the schedule space of the best candidate's source."""
        best = history.best
        if best is None or best.source != SOURCE_NAME or SOURCE_NAME not in plan.sources:
            return []
        try:
            source = self.lowered.get(task, contract, plan.backend)
        except LoweringError:
            return []
        if not source.space():  # nothing to tune (e.g. a C++ row group with fixed schedule)
            return []
        tuner = self._tuner(source, best)
        self._tell_finished(source, tuner)
        return self._ask(source, tuner, history, n)

    def _tuner(self, source: LoweredSource, best: Profile) -> OptunaTuner:
        if source.name not in self._tuners:
            import optuna

            optuna.logging.set_verbosity(optuna.logging.WARNING)  # progress goes to the CLI
            journal = self.store.tune_storage(self.run_id, source.name)
            space = source.space()
            tuner = OptunaTuner(
                SearchSpace.from_declared({k: tuple(v) for k, v in space.items()}),
                storage_path=journal,
                study_name=self.store.tune_study_name(self.run_id, source.name),
                seed=self.settings.seed,
                n_startup_trials=4,
            )
            if not tuner.trials():  # start from the source's best known point, completed
                # with the defaults: the tuner wants every parameter, and a best found by an
                # older lowering may lack newer ones
                start = {**source.default_params(), **best.params}
                tuner.enqueue({k: v for k, v in start.items() if k in space})
            self._tuners[source.name] = tuner
        return self._tuners[source.name]

    def _tell_finished(self, source: LoweredSource, tuner: OptunaTuner) -> None:
        """Tell the tuner the results of trials whose candidates were evaluated since."""
        pending = self.store.load_pending_trials(self.run_id, source.name)
        states = {t.number: t.state for t in tuner.trials()}
        for number, cid in list(pending.items()):
            record = self.store.load_result(self.run_id, cid)
            if record is None and states.get(int(number)) == TrialState.RUNNING:
                continue  # not evaluated yet
            if record is not None and states.get(int(number)) == TrialState.RUNNING:
                tuner.tell(int(number), EvalResult.model_validate(record["result"]))
            del pending[number]
        self.store.save_pending_trials(self.run_id, source.name, pending)

    def _ask(self, source: LoweredSource, tuner: OptunaTuner, history: History,
             n: int) -> list[Candidate]:
        seen = {p.candidate_id: p for p in history.profiles}
        pending = self.store.load_pending_trials(self.run_id, source.name)
        out: list[Candidate] = []
        for _ in range(8 * max(n, 1)):
            if len(out) >= n or tuner.exhausted:
                break
            try:
                number, params = tuner.ask()
            except SpaceExhaustedError:
                break
            try:
                candidate = source.candidate(params, origin=f"{INNER_ORIGIN}{source.name}")
            except (KernelwrightError, ValueError):  # the program refuses this point
                tuner.reject(number)
                continue
            cid = candidate.id
            if cid in seen:  # already measured by the outer level: tell, spend nothing
                record = self.store.load_result(self.run_id, cid)
                if record is not None:
                    tuner.tell(number, EvalResult.model_validate(record["result"]))
                    continue
            pending[str(number)] = cid
            out.append(candidate)
        self.store.save_pending_trials(self.run_id, source.name, pending)
        log.info("inner level: %d tuner proposals for %s", len(out), source.name)
        return out


def _rng(seed: int, round_: int):
    import numpy as np

    return np.random.default_rng([seed, round_, 7])
