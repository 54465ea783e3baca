"""The parent's handle on one worker process: start, request with a timeout, kill, close."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from kernelwright.config import Settings
from kernelwright.errors import WorkerError
from kernelwright.spec import Contract, Task
from kernelwright.tools.evaluate import _protocol
from kernelwright.tools.evaluate.sandbox import network_prefix, worker_env

log = logging.getLogger(__name__)

LOG_TAIL_CHARS = 3000
START_TIMEOUT_S = 120.0  # importing torch on a loaded machine can take many seconds


class WorkerFailed(Exception):
    """The worker died or timed out during a request; the message is the EvalResult error."""


class WorkerProcess:
    """A sandboxed worker for one task (see :mod:`worker`).

    Example:
        >>> w = WorkerProcess(task, contract, Settings())  # doctest: +SKIP
        >>> w.call({"op": "eval", ...}, timeout=60)  # doctest: +SKIP
    """

    def __init__(self, task: Task, contract: Contract, settings: Settings) -> None:
        self.task = task
        self.memory_mb: dict[str, int] = {}  # VmPeak / VmHWM after the last request
        started = time.monotonic()
        child_in, self._w = os.pipe()
        self._r, child_out = os.pipe()
        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            self._command(settings, child_in, child_out),
            pass_fds=(child_in, child_out),
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            env=worker_env(settings), start_new_session=True,
        )
        os.close(child_in)
        os.close(child_out)
        init = {"op": "init", "task_path": str(task.path),
                "contract": contract.model_dump(mode="json")}
        try:
            reply = self.call(init, max(settings.call_timeout_s, START_TIMEOUT_S))
        except WorkerFailed as exc:
            self.close()
            raise WorkerError(f"the evaluation worker for {task.name} did not start: {exc}. "
                              "Check that the task file imports in a fresh process.") from exc
        if "fatal" in reply:
            self.close()
            raise WorkerError(f"the worker could not load task {task.name}: {reply['fatal']}")
        self.start_s = time.monotonic() - started

    @staticmethod
    def _command(settings: Settings, fd_in: int, fd_out: int) -> list[str]:
        prefix = network_prefix() if settings.isolate_network else ()
        return [*prefix, sys.executable, "-m", "kernelwright.tools.evaluate.worker",
                "--in", str(fd_in), "--out", str(fd_out),
                "--memory-mb", str(settings.memory_limit_mb)]

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def call(self, message: dict[str, Any], timeout: float,
             on_phase: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Send ``message``; return the final reply. Each phase event restarts the timeout.

        Raises:
            WorkerFailed: The worker crashed, or was killed after ``timeout`` seconds.
        """
        log_start = os.fstat(self._log.fileno()).st_size
        try:
            _protocol.send(self._w, message)
        except OSError as exc:
            raise WorkerFailed(self._crash_text(log_start)) from exc
        deadline = time.monotonic() + timeout
        while True:
            try:
                reply = _protocol.receive(self._r, deadline)
            except _protocol.ChannelTimeout as exc:
                self.kill()
                raise WorkerFailed(f"timed out after {timeout:g} s") from exc
            except _protocol.ChannelClosed as exc:
                raise WorkerFailed(self._crash_text(log_start)) from exc
            if "phase" not in reply:
                self.memory_mb = reply.get("memory_mb", self.memory_mb)
                return reply
            if on_phase is not None:
                on_phase(reply["phase"])
            deadline = time.monotonic() + timeout

    def _crash_text(self, log_start: int) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        if code is not None and code < 0:
            how = f"killed by {signal.Signals(-code).name}"
        else:
            how = f"exited with code {code}"
        tail = self._log_tail(log_start)
        return f"worker crashed ({how})" + (f"; its last output:\n{tail}" if tail else "")

    def _log_tail(self, start: int) -> str:
        self._log.seek(start)
        text = self._log.read().decode(errors="replace").strip()
        return text[-LOG_TAIL_CHARS:]

    def kill(self) -> None:
        """Kill the worker's whole process group (candidate children included)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()

    def close(self) -> None:
        """Ask the worker to exit; kill it if it does not within a few seconds."""
        if self.alive:
            try:
                _protocol.send(self._w, {"op": "exit"})
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._log.close()

    def __repr__(self) -> str:
        return f"WorkerProcess(task={self.task.name!r}, pid={self.proc.pid}, alive={self.alive})"
