"""Optimisation runs started in the background: one ``kernelwright optimize`` process per run.

A separate process per run keeps the server responsive, lets ``cancel`` stop a run for real
(its process group gets SIGTERM, then SIGKILL), and means a crashing run cannot take the
server down. Runs are checkpointed as usual, so a cancelled or interrupted run can be continued
with ``kernelwright resume RUN_ID``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from kernelwright.errors import ConfigError

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_run_id(run_id: str) -> str:
    """A run id that is safe as a directory name (no separators, no leading dot)."""
    if not RUN_ID.match(run_id):
        raise ConfigError(
            f"run id {run_id!r} is not valid: use letters, digits, '.', '_' or '-' "
            "(at most 128, not starting with '.' or '-'); list ids with list_runs"
        )
    return run_id


@dataclass
class RunProcess:
    run_id: str
    process: subprocess.Popen
    log_path: Path
    cancelled: bool = False

    @property
    def state(self) -> str:
        """``running``, ``finished``, ``failed`` or ``cancelled`` (from the process).

        ``optimize`` exits 1 when a run ends without a correct kernel: the run finished (its
        ``reason`` is in the store); only other exit codes mean the process failed.
        """
        code = self.process.poll()
        if self.cancelled:
            return "cancelled"
        if code is None:
            return "running"
        return "finished" if code in (0, 1) else "failed"

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


class BackgroundRuns:
    """The runs this server started, by id.

    Example:
        >>> runs = BackgroundRuns(store_root)  # doctest: +SKIP
        >>> runs.start("run-1", Path("task.py"), backend="cpp", budget=8)  # doctest: +SKIP
    """

    def __init__(self, store_root: Path, python: str = sys.executable) -> None:
        self.store_root = store_root if "://" in str(store_root) else Path(store_root)
        self.python = python
        self.logs = Path(tempfile.mkdtemp(prefix="kernelwright-serve-"))
        self._runs: dict[str, RunProcess] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"BackgroundRuns(store={str(self.store_root)!r}, runs={sorted(self._runs)})"

    def start(
        self, run_id: str, task_path: Path, *, backend: str, budget: int,
        time_limit_s: float | None = None, extra_args: list[str] | None = None,
    ) -> RunProcess:  # fmt: skip
        """Start ``kernelwright optimize`` for ``task_path`` as run ``run_id``; return at once.

        ``extra_args`` are more ``optimize`` flags (the LLM endpoint and budgets).
        """
        check_run_id(run_id)
        args = [self.python, "-m", "kernelwright.cli", "optimize", str(task_path),
                "--backend", backend, "--budget", str(budget), "--run-id", run_id,
                "--store", str(self.store_root), "--json"]  # fmt: skip
        if time_limit_s is not None:
            args += ["--time-limit", str(time_limit_s)]
        args += extra_args or []
        log_path = self.logs / f"{run_id}.log"
        with self._lock:
            if run_id in self._runs and self._runs[run_id].state == "running":
                raise ConfigError(f"run {run_id!r} is already running: pick another run id")
            with open(log_path, "wb") as log:
                process = subprocess.Popen(
                    args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True, env=_child_env(),
                )  # fmt: skip
            self._runs[run_id] = RunProcess(run_id, process, log_path)
            return self._runs[run_id]

    def get(self, run_id: str) -> RunProcess | None:
        return self._runs.get(run_id)

    def cancel(self, run_id: str, grace_s: float = 10.0) -> RunProcess:
        """Stop a running run: SIGTERM to its process group, SIGKILL after ``grace_s``."""
        run = self._runs.get(run_id)
        if run is None or run.process.poll() is not None:
            raise ConfigError(
                f"run {run_id!r} is not running in this server: only runs started here with "
                "optimize_kernel and still running can be cancelled (see run_status)"
            )
        run.cancelled = True
        workers = _children(run.process.pid)  # evaluation workers run in their own sessions
        _signal_group(run.process.pid, signal.SIGTERM)
        try:
            run.process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            _signal_group(run.process.pid, signal.SIGKILL)
            run.process.wait()
        for pid in workers:  # a worker in the middle of a candidate call would finish it first
            _signal_group(pid, signal.SIGKILL)
        return run

    def shutdown(self) -> None:
        """Stop every run still running (the server is going away)."""
        for run_id, run in list(self._runs.items()):
            if run.process.poll() is None:
                self.cancel(run_id, grace_s=5.0)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` that lead their own process group (Linux /proc)."""
    found: list[int] = []
    for children in Path(f"/proc/{pid}/task").glob("*/children"):  # any thread may be parent
        try:
            found += [int(c) for c in children.read_text().split()]
        except OSError:
            continue
    return [c for c in found if _group_leader(c)]


def _group_leader(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except ProcessLookupError:
        return False


def _child_env() -> dict[str, str]:
    """The server's environment plus its import path, so the child runs this same kernelwright."""
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return env
