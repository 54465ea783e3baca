"""A control group per candidate: memory, process count and freezing over its whole tree.

The orchestrator makes one group per candidate (cgroup v2 when its controllers are delegated
to us, else the v1 hierarchies ``memory``, ``pids`` and ``freezer``), moves the candidate's
runner into it before the runner imports the candidate, and so every process the candidate
ever starts (double-forked, re-parented or in a new session) is counted against one
``memory`` and one ``pids`` limit and is frozen with the rest. Without usable groups,
:func:`unavailable` says why and results carry ``Flag.WEAK_SANDBOX`` with that reason.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
V1 = ("memory", "pids", "freezer")
FREEZE_WAIT_S = 0.5
_probe: list[str | None] = []


def unavailable(root: Path = ROOT) -> str | None:
    """Why per-candidate groups cannot be made here (None: they can). Probed once."""
    if not _probe:
        _probe.append(_try(root))
    return _probe[0]


def _try(root: Path) -> str | None:
    try:
        group = CandidateGroup.create(root, memory_mb=64, pids=8)
    except OSError as exc:
        return f"no per-candidate cgroup (memory, pids, freezer) can be made here ({exc})"
    group.close()
    return None


class CandidateGroup:
    """One candidate's group; ``dirs`` maps each controller to its directory."""

    def __init__(self, dirs: dict[str, Path], v2: bool) -> None:
        self.dirs, self.v2 = dirs, v2

    @classmethod
    def create(cls, root: Path, memory_mb: int, pids: int) -> CandidateGroup:
        """A new group with the limits set; OSError when this machine cannot make one."""
        name = f"kw-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        v2 = _v2_parent(root)
        if v2 is not None:
            dirs = {c: v2 / name for c in V1}
        else:
            missing = [c for c in V1 if not (root / c / "cgroup.procs").is_file()]
            if missing:
                raise OSError(f"cgroup v2 has no delegated memory/pids controllers and the v1 "
                              f"hierarchies {', '.join(missing)} are not mounted")
            dirs = {c: root / c / name for c in V1}
        made: list[Path] = []
        try:
            for d in dict.fromkeys(dirs.values()):
                d.mkdir()
                made.append(d)
            group = cls(dirs, v2 is not None)
            group._limit(memory_mb, pids)
        except OSError:
            for d in made:
                _rmdir(d)
            raise
        return group

    def _limit(self, memory_mb: int, pids: int) -> None:
        limit = str(memory_mb << 20)
        if self.v2:
            _write(self.dirs["memory"] / "memory.max", limit)
            _write(self.dirs["memory"] / "memory.swap.max", "0", optional=True)
        else:
            _write(self.dirs["memory"] / "memory.limit_in_bytes", limit)
            _write(self.dirs["memory"] / "memory.memsw.limit_in_bytes", limit, optional=True)
        _write(self.dirs["pids"] / "pids.max", str(pids))

    def add(self, pid: int) -> None:
        for d in dict.fromkeys(self.dirs.values()):
            _write(d / "cgroup.procs", str(pid))

    def pids(self) -> list[int]:
        """Every process in the group, wherever in the process tree it is now."""
        try:
            text = (self.dirs["pids"] / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(p) for p in text.split()]

    def freeze(self) -> bool:
        """Freeze every process of the group; False if it did not settle in time."""
        return self._set_frozen(True)

    def thaw(self) -> None:
        self._set_frozen(False)

    def _set_frozen(self, frozen: bool) -> bool:
        d = self.dirs["freezer"]
        if self.v2:
            _write(d / "cgroup.freeze", "1" if frozen else "0")
            done = (lambda: "frozen 1" in (d / "cgroup.events").read_text()) if frozen else None
        else:
            _write(d / "freezer.state", "FROZEN" if frozen else "THAWED")
            done = (lambda: (d / "freezer.state").read_text().strip() == "FROZEN") \
                if frozen else None
        if done is None:
            return True
        deadline = time.monotonic() + FREEZE_WAIT_S
        while not done():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.0005)
        return True

    def close(self) -> None:
        """Kill everything in the group and remove it."""
        for _ in range(250):  # a process with large mappings takes 10-60 ms to exit
            victims = self.pids()
            if not victims:
                break
            for pid in victims:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                self.thaw()  # a frozen process dies only once thawed
            except OSError:
                pass
            time.sleep(0.001)
        for d in dict.fromkeys(self.dirs.values()):
            _rmdir(d)


def _v2_parent(root: Path) -> Path | None:
    """Our own v2 group when memory and pids are delegated to its children, else None."""
    if not (root / "cgroup.controllers").is_file():
        unified = root / "unified"
        if not (unified / "cgroup.controllers").is_file():
            return None
        root = unified
    try:
        line = next(ln for ln in Path("/proc/self/cgroup").read_text().splitlines()
                    if ln.startswith("0::"))
    except (OSError, StopIteration):
        return None
    parent = root / line[3:].lstrip("/")
    try:
        controllers = (parent / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return parent if {"memory", "pids"} <= set(controllers) else None


def _write(path: Path, value: str, optional: bool = False) -> None:
    try:
        path.write_text(value)
    except OSError:
        if not optional:
            raise


def _rmdir(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass
