"""The environment the SYCL runtime needs, computed without importing dpctl.

The wheels' OpenCL ICD file holds an unpatched placeholder path, so out of the box
``dpctl.get_devices()`` is empty. Pointing ``OCL_ICD_FILENAMES`` at the wheel's
``libintelocl.so`` fixes discovery. ``ONEAPI_DEVICE_SELECTOR=opencl:cpu`` would also need
``LD_LIBRARY_PATH`` set *before* the process starts (else ``UR_RESULT_ERROR_UNINITIALIZED``);
``*:cpu`` works from inside a running process too, and with ``OCL_ICD_FILENAMES`` naming only
Intel's runtime it still selects the Intel CPU device, never PoCL. So both the worker
environment and :func:`apply_runtime_env` use ``*:cpu``, and ``LD_LIBRARY_PATH`` is left
alone (prefixing it with the venv's ``lib/`` would also shadow system copies of libtbb,
libhwloc and libOpenCL for every library the worker loads).
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import re
import site
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from kernelwright.tools.cpuinfo import cpu_fields

if TYPE_CHECKING:
    from kernelwright.config import Settings

log = logging.getLogger(__name__)

ICD_LIBRARY = "libintelocl.so"
DEVICE_SELECTOR = "*:cpu"
INSTALL_FIX = "pip install dpctl==0.22.1 intel-opencl-rt==2026.2.0"
TARGET_ARCH = "CL_CONFIG_CPU_TARGET_ARCH"  # the Intel OpenCL CPU compiler's target ISA


def _candidate_lib_dirs() -> list[Path]:
    dirs = [Path(sys.prefix) / "lib"]
    try:
        site_dirs = [*site.getsitepackages(), site.getusersitepackages()]
    except AttributeError:  # some embedded interpreters lack these
        site_dirs = []
    dirs += [Path(d).parent.parent for d in site_dirs]  # <prefix>/lib/pythonX.Y/site-packages
    return list(dict.fromkeys(dirs))


def _from_metadata() -> Path | None:
    try:
        files = importlib.metadata.distribution("intel-opencl-rt").files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name == ICD_LIBRARY:
            return Path(str(f.locate())).resolve()
    return None


def find_icd_library() -> Path | None:
    """Where Intel's OpenCL CPU runtime (``libintelocl.so``) is installed, or ``None``."""
    for d in _candidate_lib_dirs():
        if (d / ICD_LIBRARY).is_file():
            return d / ICD_LIBRARY
    return _from_metadata()


def runtime_prefix() -> Path:
    """The install prefix holding the SYCL runtime's ``lib/`` and ``include/`` directories."""
    icd = find_icd_library()
    return icd.parent.parent if icd is not None else Path(sys.prefix)


def cpu_target_arch() -> str | None:
    """The ISA the OpenCL CPU compiler should target: the user's ``CL_CONFIG_CPU_TARGET_ARCH``
    when set; ``core-avx2`` on an AMD CPU with AVX2; else ``None`` (the runtime's own choice).

    On a 2-core AMD EPYC with AVX-512 the runtime's own choice (its AVX-512 code) ran the
    lowered Swish at 0.31x of eager and ``core-avx2`` at 0.73x; over 25 KernelBench problems
    with every space at budget 1, 0.93x -> 1.02x geomean with the variable exported, 1.09x
    as the default (docs/LOWERING.md). Each choice has a kernel cache of its own
    (:func:`sycl_cache_name`).
    """
    own = os.environ.get(TARGET_ARCH)
    if own:
        return own
    cpu = cpu_fields()
    if cpu.get("vendor_id") == "AuthenticAMD" and "avx2" in cpu.get("flags", "").split():
        return "core-avx2"
    return None


def sycl_cache_name() -> str:
    """The name, under a cache directory, of the SYCL runtime's persistent kernel cache:
    ``sycl`` for the runtime's own target ISA, ``sycl-isa-<isa>`` for a chosen one.

    SYCL's cache does not key its binaries on ``CL_CONFIG_CPU_TARGET_ARCH``: a binary built
    for one ISA and loaded under another fails (``UR_RESULT_ERROR_INVALID_BINARY``), so each
    setting gets a directory of its own. Every process that names the cache (the backend, the
    trusted builder, the sandbox, the fork server's runners) takes it from here.
    """
    arch = cpu_target_arch()
    return f"sycl-isa-{re.sub(r'[^A-Za-z0-9_.-]', '_', arch)}" if arch else "sycl"


def sycl_cache_dir(settings: Settings) -> Path:
    """The directory of the SYCL runtime's persistent kernel cache (:func:`sycl_cache_name`)."""
    return settings.cache_dir / sycl_cache_name()


def runtime_env(settings: Settings | None = None) -> dict[str, str]:
    """Environment variables a process using the SYCL runtime needs.

    Args:
        settings: Where the persistent kernel cache lives (``cache_dir/sycl``); ``None``
            leaves the cache out (device discovery only: what importing the backend sets; the
            backend sets its cache when it opens its runtime).

    Returns:
        Variables to merge into a worker's environment (before it imports dpctl). Empty of
        ``OCL_ICD_FILENAMES`` when the runtime is not installed (``status()`` says how to fix).
    """
    env = {"ONEAPI_DEVICE_SELECTOR": DEVICE_SELECTOR}
    arch = cpu_target_arch()
    if arch:
        env[TARGET_ARCH] = arch
    if settings is not None:
        env |= {"SYCL_CACHE_PERSISTENT": "1", "SYCL_CACHE_DIR": str(sycl_cache_dir(settings))}
    icd = find_icd_library()
    if icd is not None:
        env["OCL_ICD_FILENAMES"] = str(icd)
    else:
        log.warning("%s not found; the SYCL backend will see no device. Fix: %s",
                    ICD_LIBRARY, INSTALL_FIX)
    return env


def apply_runtime_env(settings: Settings | None = None) -> dict[str, str]:
    """Set :func:`runtime_env` in ``os.environ`` of this process, before dpctl is imported.

    Returns:
        The variables that were set (empty if dpctl was already imported: then it warns).
    """
    if "dpctl" in sys.modules:
        if os.environ.get("OCL_ICD_FILENAMES") is None:
            warnings.warn(
                "dpctl was imported before kernelwright set the SYCL runtime environment; "
                "the Intel CPU device may be missing. Fix: import kernelwright's sycl backend "
                "before dpctl, or export the variables of kernelwright.tools.backends.sycl_env."
                "runtime_env().",
                RuntimeWarning,
                stacklevel=2,
            )
        return {}
    env = runtime_env(settings)
    os.environ.update(env)
    return env


def preload_runtime() -> None:
    """Load the SYCL runtime's libraries into this process without starting the runtime (no
    platform is discovered, no thread started): a fork server does it once, so each runner
    it forks finds them mapped when it loads the shim."""
    import ctypes

    path = runtime_prefix() / "lib" / "libsycl.so"
    if path.is_file():
        try:
            ctypes.CDLL(str(path))
        except OSError as exc:  # the runner's own load then reports it, with the fix
            log.debug("could not preload %s: %s", path, exc)

