"""The candidate's sandbox (bubblewrap), its environment, its hard limits, and its processes.

The candidate runner starts as::

    bwrap --unshare-all (user, pid, net, ipc, uts, cgroup, mount namespaces)
          --uid 65534 --gid 65534 --cap-drop ALL --die-with-parent --new-session --clearenv
          --dev /dev --proc /proc --tmpfs /tmp
          --ro-bind-try /usr /usr ... (system dirs, the Python install, a few /etc files)
          --ro-bind <build cache> <build cache>   --bind <scratch> <scratch>
          --setenv NAME VALUE ... (an allow-list)  -- python -m ...candidate_runner

so inside it is ``nobody`` with no capabilities, no network but its own loopback, no view of
the parent's processes (its own pid namespace), read-only system files, no data dir, run
store or home directory (they are not bound), and one writable scratch directory. Not binding
``/`` matters when the orchestrator runs as root: inside a user namespace the sandbox's
``nobody`` then owns every root-owned file, ``/etc/shadow`` included. Limits
(:func:`apply_hard_limits`) are set soft = hard by the runner before any candidate code is
imported, so the candidate can lower but never raise them.

Without ``bwrap`` the runner still starts (environment cleared, hard limits set), and every
result carries ``Flag.WEAK_SANDBOX``; ``kernelwright doctor`` says how to install it.
"""

from __future__ import annotations

import logging
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kernelwright.tools import allocator
from kernelwright.tools.backends.cache_record import SANDBOXED_ENV
from kernelwright.tools.backends.sycl_env import sycl_cache_name

if TYPE_CHECKING:
    from kernelwright.config import Settings

log = logging.getLogger(__name__)

NOBODY = 65534
INSTALL_HINT = ("install bubblewrap: `sudo apt-get install bubblewrap` (Debian/Ubuntu), "
                "`sudo dnf install bubblewrap` (Fedora); it must be allowed to create user "
                "namespaces (sysctl kernel.unprivileged_userns_clone=1 where that exists)")
# Variables a runner may inherit from the parent (values copied), besides those it is given.
INHERITED = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "LD_LIBRARY_PATH", "CUDA_HOME",
             "CUDA_PATH", "TZ")
MAX_PROCESSES = 256  # threads count: torch and the SYCL runtime start one per core
MAX_FILE_MB = 512


@dataclass(frozen=True)
class SandboxProbe:
    """Whether bubblewrap works here, and why not."""

    available: bool
    path: str | None
    detail: str


def probe_bwrap() -> SandboxProbe:
    """Run ``bwrap`` once with the flags the runner uses (``/bin/true`` inside)."""
    path = shutil.which("bwrap")
    if path is None:
        return SandboxProbe(False, None, "bwrap not found on PATH")
    cmd = [path, *_namespace_flags(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
           "--", "/bin/true"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxProbe(False, path, f"bwrap did not run: {exc}")
    if proc.returncode != 0:
        return SandboxProbe(False, path, f"bwrap failed: {proc.stderr.strip()[:300]}")
    return SandboxProbe(True, path, "bubblewrap works (user, pid, net, ipc, uts namespaces)")


def _namespace_flags() -> list[str]:
    return ["--unshare-all", "--uid", str(NOBODY), "--gid", str(NOBODY), "--cap-drop", "ALL",
            "--die-with-parent", "--new-session"]


def bwrap_command(bwrap: str, settings: Settings, scratch: Path, env: dict[str, str],
                  inner: list[str], cache_writable: bool = False,
                  hidden: Iterable[Path] = ()) -> list[str]:
    """The full ``bwrap`` command line that runs ``inner`` in the candidate sandbox.

    The sandbox's root is empty; only what a runner needs is bound into it, read-only: the
    system directories, a few files of ``/etc`` (not ``shadow``, not ``ssh``), the Python
    installation and the directories on ``sys.path``, and the build cache. The data dir, the
    run store, ``$HOME`` and the rest of the host do not exist inside. One scratch directory
    is writable (and the build cache, for the trusted builder only: ``cache_writable``).
    Each ``hidden`` directory is covered by an empty read-only tmpfs.
    """
    cmd = [bwrap, *_namespace_flags(), "--clearenv", "--dev", "/dev", "--proc", "/proc",
           "--tmpfs", "/tmp"]
    for path in (*SYSTEM_DIRS, *ETC_FILES):
        cmd += ["--ro-bind-try", path, path]
    for dev in DEVICE_GLOBS:
        for path in sorted(Path("/dev").glob(dev)):
            cmd += ["--dev-bind-try", str(path), str(path)]
    for path in python_paths():
        cmd += ["--ro-bind-try", str(path), str(path)]
    cache = Path(settings.cache_dir).resolve()
    cache.mkdir(parents=True, exist_ok=True)
    cmd += ["--bind" if cache_writable else "--ro-bind", str(cache), str(cache)]
    for path in hidden:
        cmd += ["--tmpfs", str(path), "--remount-ro", str(path)]
    cmd += ["--bind", str(scratch), str(scratch), "--chdir", str(scratch), "--remount-ro", "/"]
    for name, value in env.items():
        cmd += ["--setenv", name, value]
    return [*cmd, "--", *inner]


SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
               "/sys")
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/OpenCL",
             "/etc/alternatives", "/etc/localtime", "/etc/passwd", "/etc/group",
             "/etc/nsswitch.conf")
DEVICE_GLOBS = ("nvidia*", "dri", "nvidia-caps")


def python_paths() -> list[Path]:
    """The interpreter's installation, the virtual environment, and ``sys.path`` entries
    outside them (e.g. a source checkout on ``PYTHONPATH``), resolved."""
    package = Path(__file__).resolve().parents[2]  # kernelwright/ (no import of the root)
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(),
             Path(sys.executable).resolve().parent, package}
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry:
            roots.add(Path(entry, "kernelwright").resolve())
    kept = sorted((r for r in roots if r.exists()), key=lambda p: len(p.parts))
    return [r for i, r in enumerate(kept) if not any(r.is_relative_to(k) for k in kept[:i])]


def runner_env(settings: Settings, scratch: Path, sandboxed: bool) -> dict[str, str]:
    """The runner's whole environment: an allow-list, never the parent's secrets."""
    env = {k: os.environ[k] for k in INHERITED if k in os.environ}
    if env.get("PYTHONPATH"):  # the runner starts in its scratch: `PYTHONPATH=.` means here
        env["PYTHONPATH"] = os.pathsep.join(
            str(Path(e).resolve()) for e in env["PYTHONPATH"].split(os.pathsep) if e)
    home = str(scratch / "home")
    env.update({
        "HOME": home, "TMPDIR": str(scratch / "tmp"), "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1", "OMP_WAIT_POLICY": "PASSIVE",
        "KERNELWRIGHT_CACHE_DIR": str(scratch / "cache"),
        "KERNELWRIGHT_DATA_DIR": str(scratch / "data"),
        "KERNELWRIGHT_CUDA_ARCH": settings.cuda_arch,
        SANDBOXED_ENV: "1",  # the cache's integrity record is the orchestrator's, not here
    })
    env.update(allocator.ENV)  # the same allocator behaviour on both sides (tools/allocator.py)
    env.update(_runtime_env(settings))
    env["SYCL_CACHE_DIR"] = str(scratch / "cache" / sycl_cache_name())
    if settings.worker_threads:
        env["OMP_NUM_THREADS"] = str(settings.worker_threads)
    return env


def _runtime_env(settings: Settings) -> dict[str, str]:
    from kernelwright.tools.backends.sycl_env import runtime_env

    return runtime_env(settings)


def plain_command(inner: list[str]) -> list[str]:
    """Without bubblewrap: the runner as a plain child (weak sandbox)."""
    return inner


def python_module(module: str, *args: str, numeric: bool = True) -> list[str]:
    """``python -m module args``; with ``numeric=False`` the numeric packages cannot be
    imported in it (:mod:`kernelwright.tools.no_numeric`)."""
    if not numeric:
        return [interpreter(), "-m", "kernelwright.tools.no_numeric", module, *args]
    return [interpreter(), "-m", module, *args]


def interpreter() -> str:
    """``sys.executable`` as the sandbox sees it: under the resolved environment, which is what
    :func:`python_paths` binds (a virtual environment reached through a symlinked directory,
    e.g. ``checkout/.venv -> elsewhere``, does not exist inside at its unresolved path)."""
    exe = Path(sys.executable)
    if not exe.is_relative_to(sys.prefix):
        return sys.executable
    return str(Path(sys.prefix).resolve() / exe.relative_to(sys.prefix))


def numeric_package_dirs() -> list[Path]:
    """Where the numeric packages are installed, in every Python tree the sandbox binds (the
    virtual environment, the interpreter's own, the system's): a custom-kernels-only runner
    without numpy has them hidden."""
    from kernelwright.tools.no_numeric import NUMERIC_PACKAGES

    roots = {*python_paths(), Path("/usr"), Path("/usr/local")}
    found: set[Path] = set()
    for root in roots:
        for pattern in ("lib/python3*/site-packages", "lib/python3*/dist-packages",
                        "lib/python3/dist-packages"):
            for site in root.glob(pattern):
                try:
                    entries = list(site.iterdir())
                except OSError:
                    continue
                found.update(e.resolve() for e in entries if e.is_dir() and
                             e.name.removesuffix(".libs") in NUMERIC_PACKAGES)
    return sorted(found)


def apply_hard_limits(memory_mb: int, cpu_s: int, processes: int = MAX_PROCESSES,
                      file_mb: int = MAX_FILE_MB) -> None:
    """Set address space, CPU time, process count and file size limits, soft = hard.

    A process may lower a hard limit but never raise it again, so candidate code that runs
    after this call lives within these limits (and so do its children).
    """
    for which, value in ((resource.RLIMIT_AS, memory_mb << 20),
                         (resource.RLIMIT_CPU, cpu_s),
                         (resource.RLIMIT_NPROC, processes),
                         (resource.RLIMIT_FSIZE, file_mb << 20)):
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))


# -- processes seen from the host ----------------------------------------------------------


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (every thread's children), from ``/proc``."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return out


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (breadth first)."""
    found, queue = [], [pid]
    while queue:
        kids = children(queue.pop(0))
        found += kids
        queue += kids
    return found


def stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (the state first), or
    ``None`` when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def living(pids: Iterable[int]) -> list[int]:
    """``pids`` less those that are gone or zombies (dead, waiting for their parent's wait)."""
    return [pid for pid in pids
            if (fields := stat_fields(pid)) and fields[0] not in ("Z", "X")]


def inner_pid(host_pid: int) -> int | None:
    """The pid ``host_pid`` has in its innermost pid namespace (``NSpid``'s last field)."""
    try:
        with open(f"/proc/{host_pid}/status") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except OSError:
        return None
    return None


def signal_all(pids: Iterable[int], sig: signal.Signals) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
