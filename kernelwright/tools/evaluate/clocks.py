"""The clocks the orchestrator times with, saved when the harness is imported.

Candidate code never runs in the orchestrator's process, but anything else imported into it
(a plugin, an observer, a test) could replace ``time.perf_counter`` and friends. The timing
uses the saved functions, and :func:`replaced` names any module-level clock that no longer
is the saved one: a timing taken then is rejected (``Flag.TIMER_TAMPERING``).
"""

from __future__ import annotations

import time

NAMES = ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns",
         "process_time", "thread_time")
SAVED = {name: getattr(time, name) for name in NAMES}
perf_counter = SAVED["perf_counter"]


def replaced() -> list[str]:
    """The ``time`` functions that are not the ones saved at import (empty: all intact)."""
    return [f"time.{name}" for name, fn in SAVED.items() if getattr(time, name, None) is not fn]
