"""Limits on a candidate's whole process tree, enforced from outside it.

The runner's rlimits are per process: forked children each stay under the address-space
limit but together can hold several times the memory. Without a per-candidate cgroup (see
docs/SECURITY.md), the orchestrator polls the tree below the candidate's fork server and kills
all of it when the processes *together* hold more resident memory than the limit, are more
than the process limit, or have used more CPU time than the limit (each process's own and
that of the children it reaped, so a forked spinner counts). The candidate cannot see or stop
this thread.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable

from kernelwright.tools.evaluate import sandbox

POLL_S = 0.1
_PAGE = os.sysconf("SC_PAGE_SIZE")


_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """CPU time of ``pid`` and of its reaped children (0 if it is gone)."""
    fields = sandbox.stat_fields(pid)
    if fields is None:  # gone
        return 0.0
    try:
        return sum(int(fields[i]) for i in (11, 12, 13, 14)) / _TICK  # utime..cstime
    except (ValueError, IndexError):  # malformed
        return 0.0


def resident_bytes(pid: int) -> int:
    """Resident memory of ``pid`` that is not file-backed or shared (0 if it is gone): the
    libraries every runner maps are not counted once per process."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            fields = f.read().split()
        return max(0, int(fields[1]) - int(fields[2])) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


class TreeWatchdog:
    """Polls ``pids()`` until :meth:`stop`; kills them all when a limit is passed and says
    why in :attr:`tripped`."""

    def __init__(self, pids: Callable[[], list[int]], memory_mb: int,
                 processes: int = sandbox.MAX_PROCESSES, cpu_s: float | None = None) -> None:
        self.pids, self.limit = pids, memory_mb << 20
        self.processes, self.cpu_s = processes, cpu_s
        self.spent: dict[int, float] = {}  # CPU time last seen per process (dead ones too)
        self.tripped: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kw-tree-watchdog", daemon=True)

    def start(self) -> TreeWatchdog:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def check(self) -> str | None:
        """One poll: the reason to kill the tree now, or ``None``."""
        pids = self.pids()
        if len(pids) > self.processes:
            return (f"the candidate's processes together exceeded the process limit "
                    f"({len(pids)} > {self.processes})")
        if self.cpu_s is not None:
            for p in pids:
                self.spent[p] = max(self.spent.get(p, 0.0), cpu_seconds(p))
            used = sum(self.spent.values())
            if used > self.cpu_s:
                return (f"the candidate's processes together exceeded the CPU-time limit "
                        f"({used:.1f} s > {self.cpu_s:g} s; forked children count too)")
        total = sum(resident_bytes(p) for p in pids)
        if total > self.limit:
            return (f"the candidate's processes together exceeded the memory limit "
                    f"({total >> 20} MB resident > {self.limit >> 20} MB; forked children "
                    "count too)")
        return None

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            reason = self.check()
            if reason is not None:
                self.tripped = reason
                sandbox.signal_all(self.pids(), signal.SIGKILL)
                return
