"""The orchestrator's handles on its runner processes: start, request with a deadline, freeze,
kill. This module runs only in the trusted parent.

- :class:`ReferenceRunner`: a child process that imports the task (hard limits, a scrubbed
  environment); it also derives the contract, so a hanging reference meets a deadline.
- :class:`ForkServer`: the sandboxed fork server (bubblewrap when available); ``spawn`` gives a
  :class:`CandidateRunner`, a fresh process per candidate.

Every request carries an absolute deadline; a runner's reply must be one of the types it may
send now (:func:`protocol.check_runner_message`), and nothing may arrive unasked. A violation
kills the runner. While one side runs a timed batch the other side's processes are stopped
(``SIGSTOP``), so neither can steal the other's CPU; a candidate's detached threads cannot
finish its work after it answered.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from kernelwright.config import Settings
from kernelwright.errors import WorkerError
from kernelwright.tools.evaluate import protocol, sandbox

log = logging.getLogger(__name__)

START_TIMEOUT_S = 180.0  # importing torch on a loaded 2-core machine can take a while
LOG_TAIL_CHARS = 3000
LOG_TAIL_BYTES = 64 << 10  # a runner's log is read from its tail only, whatever its size


class RunnerFailed(Exception):
    """A runner crashed, timed out or broke the protocol; ``kind`` says which."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "crash" | "timeout" | "violation"


class Channel:
    """One socket to one runner process (or process tree), with deadlines and freezing."""

    def __init__(self, sock: socket.socket, root_pid: int, log_file: Any,
                 tree_root: int | None = None) -> None:
        self.sock = sock
        self.root_pid = root_pid  # host pid whose subtree is this runner
        # A candidate's processes are everything below its fork server (which reaps what the
        # candidate double-forks away: it is their subreaper), not only below its runner.
        self.tree_root = tree_root
        self.log_file = log_file
        self.log_start = _size(log_file)
        self.frozen: list[int] = []
        self.stopped = False  # frozen now: freezing again is a no-op, as is thawing a runner
        self.group: Any = None  # the candidate's cgroups.CandidateGroup, when there is one

    def pids(self) -> list[int]:
        if self.tree_root is not None:
            found = sandbox.descendants(self.tree_root)
        else:
            found = [self.root_pid, *sandbox.descendants(self.root_pid)]
        if self.group is not None:  # also what left the tree (re-parented elsewhere)
            found += [p for p in self.group.pids() if p not in found]
        return found

    def request(self, message: dict[str, Any], timeout: float, expect: frozenset[str],
                fds: list[int] = ()) -> dict[str, Any]:
        """Send ``message``; return the reply (type in ``expect`` or ``"error"``).

        Raises:
            RunnerFailed: crash, timeout (after ``timeout`` s, absolute) or violation.
        """
        if protocol.readable(self.sock, 0):
            self._unasked()
        try:
            protocol.send(self.sock, message, list(fds))
        except OSError as exc:
            raise RunnerFailed("crash", f"the runner is gone ({exc})") from exc
        return self.wait(time.monotonic() + timeout, expect, timeout)

    def wait(self, deadline: float, expect: frozenset[str], timeout: float) -> dict[str, Any]:
        try:
            reply = protocol.receive(self.sock, deadline)
            protocol.check_runner_message(reply, expect)
        except protocol.ChannelTimeout as exc:
            raise RunnerFailed("timeout", f"timed out after {timeout:g} s") from exc
        except (protocol.ChannelClosed, ConnectionError) as exc:
            raise RunnerFailed("crash", "the runner exited unexpectedly") from exc
        except protocol.ProtocolViolation as exc:
            raise RunnerFailed("violation", f"protocol violation: the runner sent {exc}") from exc
        return reply

    def _unasked(self) -> None:
        try:
            data = self.sock.recv(64, socket.MSG_PEEK)
        except OSError:
            data = b""
        if data:
            raise RunnerFailed("violation", "protocol violation: the runner sent a message "
                                            "nobody asked for")
        raise RunnerFailed("crash", "the runner exited unexpectedly")

    def freeze(self) -> None:
        """Stop every process of this runner (until :meth:`thaw`): its cgroup's freezer
        when it has one, and ``SIGSTOP`` to every process found (the fallback). Freezing
        waits until the group has settled (~1 ms), so callers hold a runner frozen across
        steps instead of freezing it for each."""
        if self.stopped:
            return
        self.stopped = True
        self.frozen = []
        if self.group is not None:
            try:
                if self.group.freeze():
                    return
            except OSError:
                pass
        for _ in range(4):  # again, for processes forked while the first pass ran
            new = [p for p in self.pids() if p not in self.frozen]
            if not new:
                break
            sandbox.signal_all(new, signal.SIGSTOP)
            self.frozen += new

    def thaw(self) -> None:
        if not self.stopped:
            return
        self.stopped = False
        if self.group is not None:
            try:
                self.group.thaw()
            except OSError:
                pass
        sandbox.signal_all(self.frozen, signal.SIGCONT)
        self.frozen = []

    def log_tail(self) -> str:
        if self.log_file is None:
            return ""
        end = _size(self.log_file)
        start = max(self.log_start, end - LOG_TAIL_BYTES)
        self.log_file.seek(start)
        text = self.log_file.read(end - start).decode(errors="replace").strip()
        return text[-LOG_TAIL_CHARS:]


class ReferenceRunner:
    """The task's runner process (imports the task only)."""

    def __init__(self, task_path: Path, settings: Settings) -> None:
        parent, child = socket.socketpair()
        self.log = tempfile.TemporaryFile()
        scratch = Path(tempfile.mkdtemp(prefix="kw-ref-"))
        cmd = sandbox.python_module(
            "kernelwright.tools.evaluate.reference_runner", "--fd", str(child.fileno()),
            "--task", str(task_path), "--memory-mb", str(settings.memory_limit_mb),
            "--cpu-s", str(_cpu_budget(settings)), "--threads", str(settings.worker_threads))
        self.proc = subprocess.Popen(
            cmd, pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL, stdout=self.log,
            stderr=subprocess.STDOUT, env=sandbox.runner_env(settings, scratch, False),
            start_new_session=True, cwd=scratch)
        child.close()
        self.channel = Channel(parent, self.proc.pid, self.log)
        self.scratch = scratch
        reply = self.channel.wait(time.monotonic() + START_TIMEOUT_S, frozenset({"ready"}),
                                  START_TIMEOUT_S)
        if reply["type"] == "error":
            self.close()
            raise WorkerError(f"the reference runner could not load {task_path}: "
                              f"{reply.get('error')}")

    def request(self, message: dict[str, Any], timeout: float, expect=frozenset({"done"}),
                fds: list[int] = ()) -> dict[str, Any]:
        return self.channel.request(message, timeout, expect, fds)

    def close(self) -> None:
        _kill_tree(self.proc.pid)
        self.proc.wait()
        self.channel.sock.close()
        self.log.close()
        _rmtree(self.scratch)


class CandidateRunner:
    """One candidate's fresh runner, forked by the :class:`ForkServer`."""

    def __init__(self, server: ForkServer, channel: Channel, scratch: Path) -> None:
        self.server, self.channel, self.scratch = server, channel, scratch

    def request(self, message: dict[str, Any], timeout: float, expect=frozenset({"done"}),
                fds: list[int] = ()) -> dict[str, Any]:
        return self.channel.request(message, timeout, expect, fds)

    def close(self) -> dict[str, int]:
        """Kill everything this candidate started and remove its scratch directory."""
        self.channel.thaw()
        try:
            self.channel.sock.close()
        except OSError:
            pass
        group, self.channel.group = self.channel.group, None
        if group is not None:
            group.close()  # kills what escaped the tree too
        return self.server.reap(self.scratch)


class ForkServer:
    """The sandboxed fork server of one task's candidates."""

    def __init__(self, settings: Settings, bwrap: str | None, numeric: bool = True) -> None:
        """``numeric=False``: no numeric package (numpy, scipy, ...) can be imported in the
        server or its runners, and in the bubblewrap sandbox their files are hidden."""
        self.settings = settings
        self.closed = False
        self.sandboxed = bwrap is not None
        self.root = Path(tempfile.mkdtemp(prefix="kw-sandbox-"))
        os.chmod(self.root, 0o755)
        parent, child = socket.socketpair()
        env = sandbox.runner_env(settings, self.root, self.sandboxed)
        inner = sandbox.python_module("kernelwright.tools.evaluate.candidate_runner",
                                      "--control", str(child.fileno()), numeric=numeric)
        hidden = () if numeric else sandbox.numeric_package_dirs()
        cmd = (sandbox.bwrap_command(bwrap, settings, self.root, env, inner, hidden=hidden)
               if bwrap else sandbox.plain_command(inner))
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            cmd, pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL, stdout=self.log,
            stderr=subprocess.STDOUT, env=env, start_new_session=True, cwd=self.root)
        child.close()
        self.control = Channel(parent, self.proc.pid, self.log)
        self.count = 0
        reply = self._wait_ready()
        self.inner_pid = int(reply["pid"])
        self.host_pid = self._host_pid(self.inner_pid)

    def _wait_ready(self) -> dict[str, Any]:
        try:
            reply = self.control.wait(time.monotonic() + START_TIMEOUT_S,
                                      frozenset({"ready"}), START_TIMEOUT_S)
        except RunnerFailed as exc:
            tail = self.control.log_tail()
            self.close()
            raise WorkerError(f"the sandboxed candidate runner did not start ({exc}); its "
                              f"output:\n{tail}\nRun `kernelwright doctor` to check the "
                              "sandbox.") from exc
        return reply

    def _host_pid(self, inner: int) -> int:
        for pid in [self.proc.pid, *sandbox.descendants(self.proc.pid)]:
            if (sandbox.inner_pid(pid) if self.sandboxed else pid) == inner:
                return pid
        raise WorkerError("cannot find the fork server's process; is /proc mounted?")

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def spawn(self, request: dict[str, Any], timeout: float) -> CandidateRunner:
        """Fork a runner for one candidate and wait until it imported the candidate."""
        self.count += 1
        scratch = self.root / f"c{self.count}"
        ours, theirs = socket.socketpair()
        message = {**request, "op": "spawn", "scratch": str(scratch),
                   "shared_cache": str(Path(self.settings.cache_dir).resolve())}
        reply = self.control.request(message, START_TIMEOUT_S, frozenset({"done"}),
                                     [theirs.fileno()])
        theirs.close()
        child = self._child_host_pid(int(reply["pid"]))
        runner = CandidateRunner(self, Channel(ours, child, self.log, self.host_pid), scratch)
        return runner

    def _child_host_pid(self, inner: int) -> int:
        for pid in sandbox.children(self.host_pid):
            if (sandbox.inner_pid(pid) if self.sandboxed else pid) == inner:
                return pid
        return -1  # already gone: its channel reports the crash

    def reap(self, scratch: Path) -> dict[str, int]:
        """Kill every process below the server, then let it reap them and clean up."""
        for _ in range(30):  # the dead stay below it as zombies until the server reaps them
            victims = sandbox.living(sandbox.descendants(self.host_pid))
            if not victims:
                break
            sandbox.signal_all(victims, signal.SIGKILL)
            time.sleep(0.001)
        reply = self.control.request({"op": "reap", "scratch": str(scratch)}, 30.0,
                                     frozenset({"done"}))
        return reply.get("statuses", {})

    def close(self) -> None:
        """Kill the server's tree; once only (a second kill could hit a reused pid)."""
        if self.closed:
            return
        self.closed = True
        _kill_tree(self.proc.pid)
        self.proc.wait()
        self.control.sock.close()
        self.log.close()
        _rmtree(self.root)


def _cpu_budget(settings: Settings) -> int:
    return int(20 * settings.call_timeout_s * max(1, os.cpu_count() or 1))


def _kill_tree(pid: int) -> None:
    sandbox.signal_all([pid, *sandbox.descendants(pid)], signal.SIGKILL)
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _size(f: Any) -> int:
    return os.fstat(f.fileno()).st_size if f is not None else 0
