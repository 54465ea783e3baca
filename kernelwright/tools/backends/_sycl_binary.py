"""Device binaries of built SYCL sources, so that a source built before skips the compiler.

The kernel compiler's own cache (``SYCL_CACHE_DIR``) finds its entry by preprocessing the
whole source, ``sycl.hpp`` included: 0.15-0.2 s for every kernel it already holds, paid by
every candidate process that loads one (measured: ``perf`` shows clang's lexer). After a build,
the backend keeps the bundle's device binary (one OpenCL program) beside the C++ builds as
``sycl-<key>.clbin``: a header line with the OpenCL name of each kernel, then the binary. A
later build of the same source, options, runtime, driver and target ISA loads that program
directly (``clCreateProgramWithBinary``); its kernels launch through the same interop path as
OpenCL C kernels.

Trust: the file is an ordinary build-cache entry. A trusted process loads it only when the
cache's integrity record vouches for it (:func:`trusted_file`) and records what it writes; a
sandboxed runner reads the cache the orchestrator verified and writes only its private view
(its new builds reach the shared cache when the trusted builder builds their sources again).
Anything unreadable, refused by the driver or missing a kernel falls back to compiling.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from kernelwright.tools.backends._compile import write_atomically
from kernelwright.tools.backends._source import source_hash
from kernelwright.tools.backends.cache_record import record_file, trusted_file
from kernelwright.tools.backends.sycl_env import cpu_target_arch

if TYPE_CHECKING:
    from kernelwright.config import Settings
    from kernelwright.tools.backends._sycl_runtime import OpenCLProgram, SyclRuntime

log = logging.getLogger(__name__)

MAGIC = b"KWCLBIN1\n"


def binary_path(settings: Settings, key: str, runtime: SyclRuntime) -> Path:
    """Where the device binary of build ``key`` for this device and target ISA is kept."""
    device = source_hash(key, runtime.device.name, runtime.device.driver_version,
                         cpu_target_arch() or "")
    return settings.build_cache_dir / f"sycl-{device}.clbin"


def save(path: Path, runtime: SyclRuntime, bundle: int, kernels: list[str],
         settings: Settings) -> bool:
    """Keep the device binary of a fresh build; False when the runtime gave none."""
    got = runtime.bundle_binary(bundle, kernels)
    if got is None:
        return False
    binary, cl_names = got
    header = json.dumps(dict(zip(kernels, cl_names, strict=True))).encode()
    try:
        write_atomically(path, MAGIC + header + b"\n" + binary)
    except OSError as exc:  # a read-only cache: the next process compiles again
        log.debug("could not keep the device binary %s: %s", path, exc)
        return False
    record_file(path, settings)
    return True


def load(path: Path, runtime: SyclRuntime,
         settings: Settings) -> tuple[OpenCLProgram, dict[str, int]] | None:
    """The program and kernel handles of a kept binary, or ``None`` (compile instead)."""
    if not path.is_file() or not trusted_file(path, settings):
        return None
    try:
        data = path.read_bytes()
        header, _, binary = data[len(MAGIC):].partition(b"\n")
        names = json.loads(header) if data.startswith(MAGIC) else None
    except (OSError, ValueError):
        names = None
    if not isinstance(names, dict) or not binary:
        log.debug("unreadable device binary %s; compiling instead", path)
        return None
    program, why = runtime.load_binary(binary)
    if program is None:
        log.debug("device binary %s refused (%s); compiling instead", path, why)
        return None
    kernels = {str(n): program.kernel(str(cl)) for n, cl in names.items()}
    if not all(kernels.values()):
        return None
    return program, kernels
