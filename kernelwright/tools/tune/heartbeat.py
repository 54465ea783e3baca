"""Heartbeats of a tuner's running trials on a shared (PostgreSQL) Optuna study.

Optuna records heartbeats only inside ``Study.optimize``; the tuner asks and tells, so it
beats itself: one daemon thread records a heartbeat for every trial between ``ask`` and
``tell``, and exits when none is running. A process that dies stops beating; once a trial is
unheard for the storage's grace period it is stale, and only stale trials are failed and
re-enqueued by the next tuner opening the study (``OptunaTuner._recover``), so a second live
process on the same study never fails the first one's running trials.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

logger = logging.getLogger(__name__)

HEARTBEAT_S = 10  # how often a running trial's heartbeat is recorded
GRACE_S = 60  # unheard this long: the trial's process is gone


class Heartbeats:
    """Record a heartbeat every ``interval_s`` for each running trial (by Optuna trial id)."""

    def __init__(self, storage: Any, interval_s: float) -> None:
        self.storage = storage
        self.interval_s = interval_s
        self._trials: dict[int, int] = {}  # trial number -> storage trial id
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, number: int, trial_id: int) -> None:
        self.storage.record_heartbeat(trial_id)  # beating before ask returns
        with self._lock:
            self._trials[number] = trial_id
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="kw-optuna-heartbeat",
                                                daemon=True)
                self._thread.start()

    def remove(self, number: int) -> None:
        with self._lock:
            self._trials.pop(number, None)

    @property
    def running(self) -> list[int]:
        with self._lock:
            return sorted(self._trials)

    def _run(self) -> None:
        while True:
            time.sleep(self.interval_s)
            with self._lock:
                ids = list(self._trials.values())
                if not ids:
                    self._thread = None
                    return
            for trial_id in ids:
                try:
                    self.storage.record_heartbeat(trial_id)
                except Exception as exc:  # a lost connection: the next beat retries
                    logger.warning("heartbeat of trial id %d not recorded: %s", trial_id, exc)
