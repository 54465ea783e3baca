"""Limits over a candidate's whole process tree: the CPU-time watchdog and the per-candidate
cgroup (memory, pids, freezer), which also holds processes that left the tree."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from kernelwright.tools.evaluate import cgroups
from kernelwright.tools.evaluate.watchdog import TreeWatchdog, cpu_seconds

SPIN_IN_CHILD = ("import os, time\nif os.fork() == 0:\n    while True: pass\n"
                 "time.sleep(120)\n")
# the parent exits at once: the spinner is re-parented and left the parent's tree
ESCAPE = ("import os, sys, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
          "        print(os.getpid(), flush=True)\n        while True: pass\n    os._exit(0)\n"
          "os.wait()\ntime.sleep(120)\n")


def _tree(pid: int) -> list[int]:
    from kernelwright.tools.evaluate.sandbox import descendants

    return [pid, *descendants(pid)]


def test_the_watchdog_kills_a_tree_whose_forked_spinner_passes_the_cpu_limit():
    proc = subprocess.Popen([sys.executable, "-c", SPIN_IN_CHILD])
    try:
        dog = TreeWatchdog(lambda: _tree(proc.pid), 100_000, cpu_s=1.5).start()
        deadline = time.monotonic() + 60
        while dog.tripped is None and time.monotonic() < deadline:
            time.sleep(0.05)
        dog.stop()
        assert dog.tripped and "CPU-time limit" in dog.tripped, dog.tripped
        assert proc.wait(timeout=10) == -9
        assert cpu_seconds(os.getpid()) > 0
        assert TreeWatchdog(lambda: [os.getpid()], 100_000, cpu_s=1e6).check() is None
    finally:
        proc.kill()


def test_without_cgroups_the_reason_is_stated():
    reason = cgroups._try(cgroups.Path("/nonexistent-cgroup-root"))
    assert reason and "no per-candidate cgroup" in reason and "not mounted" in reason


@pytest.mark.skipif(cgroups.unavailable() is not None,
                    reason=f"no per-candidate cgroups here: {cgroups.unavailable()}")
def test_a_candidate_group_holds_freezes_and_kills_escaped_processes():
    group = cgroups.CandidateGroup.create(cgroups.ROOT, memory_mb=512, pids=16)
    proc = subprocess.Popen([sys.executable, "-c", ESCAPE], stdout=subprocess.PIPE, text=True,
                            preexec_fn=lambda: group.add(os.getpid()))
    try:
        escaped = int(proc.stdout.readline())
        assert escaped not in _tree(proc.pid)  # out of the tree...
        assert escaped in group.pids()  # ...not out of the group
        assert group.freeze()
        before = cpu_seconds(escaped)
        time.sleep(0.5)
        assert cpu_seconds(escaped) - before < 0.05  # frozen: it computes nothing
        group.thaw()
        time.sleep(0.3)
        assert cpu_seconds(escaped) > before
    finally:
        group.close()
    assert proc.wait(timeout=10) == -9
    assert not os.path.exists(f"/proc/{escaped}") or _zombie(escaped)
    for d in group.dirs.values():
        assert not d.exists()


@pytest.mark.skipif(cgroups.unavailable() is not None,
                    reason=f"no per-candidate cgroups here: {cgroups.unavailable()}")
def test_a_candidate_group_caps_the_process_count_of_the_tree():
    group = cgroups.CandidateGroup.create(cgroups.ROOT, memory_mb=512, pids=4)
    code = ("import os, time\nok = 0\nfor _ in range(10):\n    try:\n"
            "        if os.fork() == 0:\n            time.sleep(30); os._exit(0)\n"
            "        ok += 1\n    except OSError:\n        break\nprint(ok, flush=True)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            preexec_fn=lambda: group.add(os.getpid()))
    try:
        forked = int(proc.stdout.readline())
        assert forked == 3, forked  # itself and three children: pids.max = 4
    finally:
        group.close()
        proc.wait(timeout=10)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
