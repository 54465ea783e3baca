"""Bayesian tuning of schedule parameters and compiler options with Optuna (ask/tell).

R^3 (LLNL) tunes launch and compiler parameters with Optuna's TPE inside each source variant;
this is that inner loop. TPE (Bergstra et al. 2011) proposes ``argmax_x l(x) / g(x)`` where
``l`` and ``g`` are Parzen densities of the best ``γ`` share of trials and of the rest.

Crash safety: with ``storage_path`` the study lives in an append-only Optuna journal. A new
tuner on the same journal treats every RUNNING trial as stale (one driver per journal), marks
it FAIL and re-enqueues its parameters exactly once (``max_requeues`` bounds a chain of crashes
caused by the same parameters). On a PostgreSQL study several processes may share, running
trials carry heartbeats (``heartbeat.py``) and only those unheard for the grace period are
stale.
"""

from __future__ import annotations

import importlib.util
import logging
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kernelwright.errors import ConfigError, SpaceExhaustedError
from kernelwright.tools.tune.base import (
    TrialRecord,
    TrialState,
    Tuner,
    params_key,
)
from kernelwright.tools.tune.heartbeat import GRACE_S, HEARTBEAT_S, Heartbeats

if TYPE_CHECKING:
    from collections.abc import Mapping

    import optuna

    from kernelwright.tools.tune.space import Scalar, SearchSpace

logger = logging.getLogger(__name__)
SAMPLERS = ("tpe", "gp", "random", "auto")
_MAX_REASKS = 200
_MODEL_REASKS = 10
_MAX_ENUMERATE = 100_000  # duplicates in a row before a random unseen point is queued


def gp_available() -> bool:
    """GPSampler needs both torch and scipy importable."""
    return all(importlib.util.find_spec(m) is not None for m in ("torch", "scipy"))


def make_sampler(name: str, seed: int, n_startup_trials: int = 10) -> optuna.samplers.BaseSampler:
    """Build a seeded sampler: ``tpe``, ``gp`` (torch + scipy), ``random``, or ``auto``."""
    import optuna

    if name not in SAMPLERS:
        raise ConfigError(f"unknown sampler {name!r}: choose one of {', '.join(SAMPLERS)}")
    if name == "auto":
        name = "gp" if gp_available() else "tpe"
    if name == "gp":
        if not gp_available():
            raise ConfigError(
                "sampler 'gp' needs torch and scipy: run `pip install scipy` or use sampler='tpe'"
            )
        return optuna.samplers.GPSampler(seed=seed, n_startup_trials=n_startup_trials)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.TPESampler(
        seed=seed, n_startup_trials=n_startup_trials, multivariate=True
    )


class OptunaTuner(Tuner):
    """Optuna study driven by ask/tell over a :class:`SearchSpace`, maximising speedup.

    Args:
        space: parameters to tune.
        storage_path: journal file; the study resumes from it after a crash. None keeps it in
            memory.
        study_name: study name inside the journal.
        sampler: ``tpe`` (default), ``gp``, ``random`` or ``auto`` (GP when available).
        seed: sampler seed.
        n_startup_trials: random trials before the model takes over; default
            ``min(10, max(4, d + 1))`` for ``d`` parameters (Optuna's fixed 10 wastes a third
            of a small schedule grid; measured in benchmarks/search_efficiency.py).
        dedupe: answer a repeated proposal from the history instead of evaluating it again.
        max_requeues: how often one crashed parameter set may be retried.
        incorrect: ``"fail"`` or ``"worst"`` for incorrect results.

    Example:
        >>> from kernelwright.tools.tune.space import SearchSpace
        >>> t = OptunaTuner(SearchSpace.from_declared({"block": [64, 128]}), seed=0)
        >>> number, params = t.ask()
        >>> number, sorted(params)
        (0, ['block'])
    """

    def __init__(
        self,
        space: SearchSpace,
        storage_path: str | Path | None = None,
        study_name: str = "tune",
        sampler: str = "tpe",
        seed: int = 0,
        n_startup_trials: int | None = None,
        dedupe: bool = True,
        max_requeues: int = 1,
        incorrect: str = "fail",
        heartbeat_s: int = HEARTBEAT_S,
        grace_s: int = GRACE_S,
    ) -> None:
        import optuna

        super().__init__(space, incorrect)
        if n_startup_trials is None:
            n_startup_trials = min(10, max(4, len(space.params) + 1))
        self.storage_url = storage_path if _is_db_url(storage_path) else None
        self.storage_path = Path(storage_path) if storage_path and not self.storage_url else None
        self.dedupe = dedupe
        self.max_requeues = max_requeues
        self._dists = space.distributions()
        self._running: dict[int, optuna.Trial] = {}
        self._rng = np.random.default_rng(seed)
        self._stale: list[optuna.trial.FrozenTrial] = []  # found by the heartbeat check
        self._heartbeat_s, self._grace_s = heartbeat_s, grace_s
        self.study = optuna.create_study(
            study_name=study_name,
            storage=self._storage(),
            sampler=make_sampler(sampler, seed, n_startup_trials),
            direction="maximize",
            load_if_exists=True,
        )
        self._beats = (Heartbeats(self.study._storage, heartbeat_s)
                       if self.storage_url is not None else None)
        existing = len(self.study.get_trials(deepcopy=False))
        if existing:  # a resumed study must not replay the proposals of the first process
            self.study.sampler = make_sampler(sampler, seed + existing, n_startup_trials)
        self.recovered = self._recover()
        self._seen = {params_key(t.params): t for t in self.trials() if t.evaluated}

    def __repr__(self) -> str:
        return (
            f"OptunaTuner({self.space!r}, sampler={type(self.study.sampler).__name__}, "
            f"journal={self.storage_path}, trials={len(self.study.trials)})"
        )

    def _storage(self) -> optuna.storages.BaseStorage | None:
        if self.storage_url is not None:  # a PostgreSQL run store: Optuna's RDB storage
            return rdb_storage(self.storage_url, self._heartbeat_s, self._grace_s,
                               on_stale=lambda study, trial: self._stale.append(trial))
        if self.storage_path is None:
            return None
        from optuna.storages import JournalStorage
        from optuna.storages.journal import JournalFileBackend

        self.storage_path.parent.mkdir(parents=True, exist_ok=True)
        return JournalStorage(JournalFileBackend(str(self.storage_path)))

    def _recover(self) -> list[int]:
        """Fail stale RUNNING trials; re-enqueue each one's params once. Returns their numbers.

        Stale: on a journal, every RUNNING trial (one driver per journal); on PostgreSQL,
        the RUNNING trials whose heartbeat stopped (their process is gone)."""
        from optuna.storages import fail_stale_trials
        from optuna.trial import TrialState as OptunaState

        if self._beats is not None:
            self._stale = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # fail_stale_trials is marked experimental
                fail_stale_trials(self.study)  # failed here; on_stale collects them
            stale = sorted(self._stale, key=lambda t: t.number)
        else:
            stale = [t for t in self.study.get_trials(deepcopy=False)
                     if t.state == OptunaState.RUNNING]
        requeued = {t.user_attrs.get("requeued_from")
                    for t in self.study.get_trials(deepcopy=False)}
        for t in stale:
            depth = int(t.user_attrs.get("requeue_count", 0))
            if t.number not in requeued and depth < self.max_requeues:
                attrs = {"requeued_from": t.number, "requeue_count": depth + 1}
                self.study.enqueue_trial(t.params, user_attrs=attrs)
            if t.state == OptunaState.RUNNING:
                self.study.tell(t.number, state=OptunaState.FAIL)
            logger.warning(
                "trial %d was left running by a crash: failed and re-enqueued", t.number
            )
        return [t.number for t in stale]

    # -- ask / tell ---------------------------------------------------------------------------
    def ask(self) -> tuple[int, dict[str, Scalar]]:
        for attempt in range(_MAX_REASKS):
            if self.dedupe and attempt == _MODEL_REASKS:
                self._enqueue_unseen()
            with warnings.catch_warnings():  # the tuner beats itself (heartbeat.py)
                warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed")
                trial = self.study.ask(self._dists)
            seen = self._seen.get(params_key(trial.params)) if self.dedupe else None
            if seen is None:
                break
            trial.set_user_attr("duplicate_of", seen.number)
            self._tell_optuna(trial, seen.state, seen.value)
        else:
            raise SpaceExhaustedError(
                f"{_MAX_REASKS} proposals in a row were already evaluated: the space is "
                "exhausted for this sampler; stop tuning or enlarge the space"
            )
        self._running[trial.number] = trial
        if self._beats is not None:
            self._beats.add(trial.number, trial._trial_id)
        return trial.number, dict(trial.params)

    def _enqueue_unseen(self) -> None:
        """The sampler keeps proposing evaluated points: queue a random unevaluated one."""
        for _ in range(100):
            params = self.space.sample(self._rng)
            if params_key(params) not in self._seen:
                self.study.enqueue_trial(params)
                return
        size = self.space.size
        if size is not None and size <= _MAX_ENUMERATE:
            unseen = [p for p in self.space.grid() if params_key(p) not in self._seen]
            if unseen:
                self.study.enqueue_trial(unseen[int(self._rng.integers(len(unseen)))])

    def enqueue(self, params: Mapping[str, Scalar]) -> None:
        self.study.enqueue_trial(self.space.validate(params), skip_if_exists=True)

    def _finish(self, number: int, state: TrialState, value: float | None, attrs: dict) -> None:
        trial = self._running.pop(number, None)
        if trial is None:
            raise ValueError(
                f"trial {number} is not running in this tuner: tell only numbers from ask()"
            )
        for key, val in attrs.items():
            trial.set_user_attr(key, val)
        if self._beats is not None:
            self._beats.remove(number)
        self._tell_optuna(trial, state, value)
        record = self.trials_by_number()[number]
        self._seen[params_key(record.params)] = record

    def _tell_optuna(self, trial: optuna.Trial, state: TrialState, value: float | None) -> None:
        from optuna.trial import TrialState as OptunaState

        if state is TrialState.COMPLETE:
            self.study.tell(trial, value)
        else:
            self.study.tell(trial, state=OptunaState[state.name])

    # -- reading ------------------------------------------------------------------------------
    def trials(self) -> list[TrialRecord]:
        return [
            TrialRecord(
                t.number,
                dict(t.params),
                TrialState[t.state.name],
                t.value if t.values else None,
                dict(t.user_attrs),
            )
            for t in self.study.get_trials(deepcopy=False)
        ]

    @property
    def exhausted(self) -> bool:
        return self.dedupe and self.space.size is not None and len(self._seen) >= self.space.size


def _is_db_url(storage: object) -> bool:
    return isinstance(storage, str) and storage.startswith(("postgresql://", "postgres://"))


def rdb_storage(url: str, heartbeat_s: int = HEARTBEAT_S, grace_s: int = GRACE_S,
                on_stale=None) -> optuna.storages.BaseStorage:
    """Optuna's RDB storage on a PostgreSQL server (psycopg 3), with heartbeats: the tuner
    records them itself (``heartbeat.Heartbeats``; Optuna beats only inside
    ``Study.optimize``); ``on_stale(study, trial)`` hears of each trial failed as stale."""
    from urllib.parse import urlsplit, urlunsplit

    import optuna
    from optuna.storages import RDBStorage

    parts = urlsplit(url)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return RDBStorage(urlunsplit(parts._replace(scheme="postgresql+psycopg")),
                          engine_kwargs={"pool_pre_ping": True},
                          heartbeat_interval=heartbeat_s, grace_period=grace_s,
                          heartbeat_stale_trial_callback=on_stale)
