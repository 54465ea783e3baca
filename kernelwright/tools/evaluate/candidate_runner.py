"""The candidate runner: a fork server inside the sandbox that forks one fresh runner per
candidate (``python -m kernelwright.tools.evaluate.candidate_runner --control N``).

The server imports torch and kernelwright's backends once (the slow part of a start), never
runs a kernel or a parallel torch operator (so forking stays safe), and never imports a
candidate. For each ``spawn`` request it forks a child that:

1. makes its own scratch directory and build-cache view (:func:`cache_view`),
2. sets its hard limits (address space, CPU time, processes, file size; soft = hard),
3. imports the candidate from source and answers ``ready`` (or an ``error``),
4. serves ``construct`` / ``map`` / ``run`` requests until the orchestrator closes it.

No state passes from one candidate to the next: each runs in a new process whose parent never
ran candidate code. The server is not dumpable (``PR_SET_DUMPABLE=0``), so a candidate
cannot ptrace it or read its memory, and it is the subreaper of everything a candidate starts
(the orchestrator kills that whole subtree after each candidate).
"""

from __future__ import annotations

import argparse
import ctypes
import faulthandler
import importlib.util
import os
import shutil
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import torch

from kernelwright.errors import RunnerError
from kernelwright.tools.backends.sycl_env import sycl_cache_name
from kernelwright.tools.evaluate import lockdown, protocol
from kernelwright.tools.evaluate._runner import ModelServer, error_text
from kernelwright.tools.evaluate.sandbox import apply_hard_limits

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


class CandidateServer(ModelServer):
    """One candidate's runner (in the forked child)."""

    def __init__(self, sock: socket.socket, source: str, scratch: Path):
        super().__init__(sock)
        self.scratch = scratch
        self.module = import_candidate(source, scratch)
        self.model_class = self.module.ModelNew

    def construct_level(self, exc: BaseException) -> str:
        from kernelwright.errors import KernelwrightError, LaunchError

        if isinstance(exc, KernelwrightError) and not isinstance(exc, LaunchError):
            return "build"
        return "runtime"

    def handle(self, op: str, request: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        if op == "construct":
            reply = super().handle(op, request, fds)
            return {**reply, "emulated": emulated_backends()}
        if op == "stats":
            return {"type": "status", "stats": kernel_stats(self.module, *self.models.values()),
                    "builds": fresh_builds()}
        return super().handle(op, request, fds)

    def caller(self, model: Any):
        sync = synchronizer()

        def call(args: list[Any]) -> Any:
            with torch.no_grad():
                value = model(*args)
                sync()
            return value

        return call


def synchronizer():
    """Wait for every backend this process loaded (their queues and streams)."""
    from kernelwright.tools.backends import active_registry

    backends = list(active_registry().built().values())

    def sync() -> None:
        for b in backends:
            b.synchronize()

    return sync


def emulated_backends() -> list[str]:
    """Loaded backends that run kernels on an emulator (their timings mean nothing)."""
    from kernelwright.tools.backends import active_registry

    return [n for n, b in active_registry().built().items() if getattr(b, "emulated", False)]


def kernel_stats(*roots: Any) -> dict[str, Any]:
    from kernelwright.tools.backends.base import KernelModule

    found: dict[str, Any] = {}
    for root in roots:
        for value in list(vars(root).values()) if hasattr(root, "__dict__") else []:
            if isinstance(value, KernelModule):
                found.update({k: v.model_dump(mode="json") for k, v in
                              value.build.stats.items()})
    return found


def import_candidate(source: str, scratch: Path):
    """Write ``source`` into the scratch directory and import it as a module."""
    path = scratch / "candidate.py"
    path.write_text(source)
    try:
        compile(source, str(path), "exec")
    except (SyntaxError, ValueError) as exc:
        raise RunnerError("syntax", f"syntax error at line {getattr(exc, 'lineno', None)}: "
                                    f"{exc}") from exc
    spec = importlib.util.spec_from_file_location("kw_candidate", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["kw_candidate"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        from kernelwright.errors import KernelwrightError, LaunchError

        build = isinstance(exc, KernelwrightError) and not isinstance(exc, LaunchError)
        raise RunnerError("build" if build else "runtime",
                          error_text(exc, "importing the candidate")) from exc
    if not isinstance(getattr(module, "ModelNew", None), type):
        raise RunnerError("runtime", "the candidate module does not define class "
                                     "ModelNew(nn.Module) with the reference Model's "
                                     "constructor signature")
    return module


def private_dirs() -> tuple[str, ...]:
    """The shared cache's directories a runner gets a writable copy of (links inside)."""
    sycl = sycl_cache_name()
    return ("builds", sycl, f"{sycl}/ext_kernel_compiler")


def cache_view(shared: Path, own: Path, rel: str = "") -> None:
    """This runner's build cache: its own writable directories whose entries are links to the
    shared (read-only) cache's, so hits are shared and new builds stay private (the trusted
    builder adds them to the shared cache afterwards)."""
    own.mkdir(parents=True, exist_ok=True)
    if not shared.is_dir():
        return
    private = private_dirs()
    for entry in shared.iterdir():
        sub = f"{rel}/{entry.name}".lstrip("/")
        if sub in private and entry.is_dir():
            cache_view(entry, own / entry.name, sub)
        elif entry.name != "digests.json":
            (own / entry.name).symlink_to(entry)


def fresh_builds() -> list[dict[str, Any]]:
    """Builds this runner made that the shared cache did not have (sources, not binaries)."""
    from kernelwright.tools.backends import active_registry

    found: list[dict[str, Any]] = []
    for backend in active_registry().built().values():
        found += list(getattr(backend, "fresh_builds", []))
    return found[:32]


def child(sock: socket.socket, request: dict[str, Any]) -> int:
    """The forked runner: limits, candidate import, then serve."""
    scratch = Path(request["scratch"])
    for sub in ("home", "tmp"):
        (scratch / sub).mkdir(parents=True, exist_ok=True)
    cache_view(Path(request["shared_cache"]), scratch / "cache")
    os.chdir(scratch)
    os.environ.update({"HOME": str(scratch / "home"), "TMPDIR": str(scratch / "tmp"),
                       "KERNELWRIGHT_CACHE_DIR": str(scratch / "cache"),
                       "SYCL_CACHE_DIR": str(scratch / "cache" / sycl_cache_name())})
    apply_hard_limits(int(request["memory_mb"]), int(request["cpu_s"]))
    threads = int(request.get("threads") or 0)
    if threads:
        torch.set_num_threads(threads)
    if request.get("lockdown") is not None:  # audit hooks: Python code cannot remove them
        lockdown.refuse_introspection()
        lockdown.refuse_native_reach([str(scratch), request["shared_cache"]])
    if request.get("hold"):  # until the orchestrator moved this process into its cgroup
        protocol.receive(sock)
    try:
        server = CandidateServer(sock, request["source"], scratch)
    except RunnerError as exc:
        protocol.send(sock, {"type": "error", "level": exc.level, "error": exc.error})
        return 1
    protocol.send(sock, {"type": "ready"})
    return server.serve()


def serve_forks(control: socket.socket) -> int:
    """The fork server's loop: ``spawn`` (one descriptor: the runner's socket), ``reap``."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    protocol.send(control, {"type": "ready", "pid": os.getpid()})
    while True:
        try:
            request, fds = protocol.receive_with_fds(control)
        except (protocol.ChannelClosed, ConnectionError):
            return 0
        op = request.get("op")
        if op == "spawn":
            if request.get("lockdown") is not None:  # once per task: its contract is fixed
                lockdown.lock(request["lockdown"])
            pid = os.fork()
            if pid == 0:
                control.close()
                os._exit(_child_main(socket.socket(fileno=fds[0]), request))
            os.close(fds[0])
            protocol.send(control, {"type": "done", "pid": pid})
        elif op == "reap":
            statuses = _reap()
            shutil.rmtree(request["scratch"], ignore_errors=True)
            protocol.send(control, {"type": "done", "statuses": statuses})
        else:
            return 0


def _child_main(sock: socket.socket, request: dict[str, Any]) -> int:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    try:
        code = child(sock, request)
    except BaseException:  # noqa: BLE001 - a runner never returns into the server's loop
        code = 1
    sys.stdout.flush()
    return code


def _reap() -> dict[str, int]:
    """Wait for every child (the orchestrator has killed them all); their wait statuses."""
    statuses: dict[str, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return statuses
        statuses[str(pid)] = status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kernelwright.tools.evaluate.candidate_runner")
    parser.add_argument("--control", type=int, required=True)
    args = parser.parse_args(argv)
    faulthandler.enable()
    preload()
    return serve_forks(socket.socket(fileno=args.control))


def preload() -> None:
    """Import, once and before any fork, what every runner needs: the backends, and the SYCL
    runtime's libraries (loading them takes ~1 s; no queue is opened, so no runtime thread
    exists when the server forks, and the runtime reads ``SYCL_CACHE_DIR`` only when a child
    first builds)."""
    import kernelwright.tools.backends.sycl  # noqa: F401  (sets the runtime's environment)
    from kernelwright.tools.backends.sycl_env import preload_runtime

    preload_runtime()  # after the environment: the libraries load as a child will use them


if __name__ == "__main__":
    sys.exit(main())
