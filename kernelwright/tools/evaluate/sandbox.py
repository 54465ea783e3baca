"""What the worker process may see and use: environment, resource limits, network.

The parent builds the environment and command line (:func:`worker_env`,
:func:`network_prefix`); the worker applies its own limits (:func:`limit_memory`,
:func:`limit_cpu_for_call`) because ``preexec_fn`` is unsafe in threaded parents.
"""

from __future__ import annotations

import logging
import os
import re
import resource
import subprocess
import sys
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kernelwright.config import Settings

log = logging.getLogger(__name__)

SECRET_NAME = re.compile(r"(_KEY|_TOKEN|_SECRET)$|PASSWORD", re.IGNORECASE)


def scrub_env(env: dict[str, str], extra: Iterable[str] = ()) -> dict[str, str]:
    """``env`` without variables that look like credentials (``*_KEY``, ``*_TOKEN``, ...) and
    without the ``extra`` names (e.g. the variable an LLM key is read from)."""
    named = set(extra)
    return {k: v for k, v in env.items() if not SECRET_NAME.search(k) and k not in named}


def worker_env(settings: Settings, base: dict[str, str] | None = None) -> dict[str, str]:
    """The worker's environment: ``base`` (default ``os.environ``) scrubbed, plus the
    variables the kernel runtimes need."""
    env = scrub_env(dict(os.environ if base is None else base), settings.secret_env)
    env.update(_runtime_env(settings))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    # Backends in the worker build with the caller's settings, not the worker's defaults.
    env["KERNELWRIGHT_CACHE_DIR"] = str(settings.cache_dir)
    env["KERNELWRIGHT_CUDA_ARCH"] = settings.cuda_arch
    # Idle OpenMP threads sleep instead of spinning against the SYCL runtime's TBB workers.
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if settings.worker_threads:
        env["OMP_NUM_THREADS"] = str(settings.worker_threads)
    return env


def _runtime_env(settings: Settings) -> dict[str, str]:
    try:
        from kernelwright.tools.backends._env import runtime_env
    except ImportError:
        icd = os.path.join(sys.prefix, "lib", "libintelocl.so")
        return {"OCL_ICD_FILENAMES": icd} if os.path.isfile(icd) else {}
    return runtime_env(settings)


@cache
def network_prefix() -> tuple[str, ...]:
    """``("unshare", "-n")`` when this OS lets us start a process without network, else ``()``.

    Probed once per process by running ``unshare -n true``.
    """
    try:
        ok = subprocess.run(
            ["unshare", "-n", "true"], capture_output=True, timeout=10, check=False
        ).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        log.info("unshare -n is not permitted here; evaluation workers keep network access")
        return ()
    return ("unshare", "-n")


def limit_memory(limit_mb: int) -> None:
    """Cap this process's address space at ``limit_mb`` MiB (allocations beyond it fail)."""
    limit = limit_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def limit_cpu_for_call(seconds: float) -> None:
    """Let this process use at most ``seconds`` more CPU time (SIGXCPU kills it beyond).

    Only the soft limit moves, so the next call can raise it again; the parent's wall-clock
    timeout remains the primary guard.
    """
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = used.ru_utime + used.ru_stime
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(spent + seconds) + 1
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
