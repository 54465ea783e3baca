"""Build (once, atomically) and load the C++ shim over the SYCL kernel-compiler extension.

The shim's source ships as package data (``_sycl_shim.cpp``). It is compiled with g++ against
the headers of the installed SYCL runtime and cached under ``<cache_dir>/sycl-shim/`` keyed by
the source hash, the runtime version and its prefix (the venv), so concurrent processes share
one build. The entry is looked up by that key, never by the folder's existence, and a trusted
process loads it only when it matches the cache's integrity record
(:func:`cache_record.trusted_file`); a stale, foreign or altered entry is rebuilt.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import logging
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from kernelwright.errors import BackendUnavailableError
from kernelwright.tools.backends._source import source_hash
from kernelwright.tools.backends.cache_record import record_file, trusted_file
from kernelwright.tools.backends.sycl_env import INSTALL_FIX, runtime_prefix

if TYPE_CHECKING:
    from kernelwright.config import Settings

log = logging.getLogger(__name__)

SHIM_SOURCE = Path(__file__).with_name("_sycl_shim.cpp")
_c = ctypes
_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "kw_abi_version": (_c.c_int, []),
    "kw_can_compile": (_c.c_int, [_c.c_void_p, _c.c_int]),
    "kw_build": (_c.c_int, [_c.c_void_p, _c.c_int, _c.c_char_p, _c.POINTER(_c.c_char_p), _c.c_int,
                            _c.POINTER(_c.c_void_p), _c.POINTER(_c.c_void_p)]),
    "kw_get_kernel": (_c.c_void_p, [_c.c_void_p, _c.c_char_p]),
    "kw_num_args": (_c.c_int, [_c.c_void_p]),
    "kw_launch": (_c.c_int, [_c.c_void_p, _c.c_void_p, _c.c_int, _c.POINTER(_c.c_int),
                             _c.POINTER(_c.c_void_p), _c.POINTER(_c.c_size_t), _c.c_int,
                             _c.POINTER(_c.c_size_t), _c.POINTER(_c.c_size_t), _c.c_int,
                             _c.POINTER(_c.c_uint64), _c.POINTER(_c.c_void_p)]),
    "kw_wait": (_c.c_int, [_c.c_void_p, _c.POINTER(_c.c_void_p)]),
    "kw_launch_chain": (_c.c_int, [_c.c_void_p, _c.c_int, _c.POINTER(_c.c_void_p),
                                   _c.POINTER(_c.c_int), _c.POINTER(_c.c_int),
                                   _c.POINTER(_c.c_size_t), _c.POINTER(_c.c_size_t),
                                   _c.POINTER(_c.c_void_p), _c.c_int, _c.POINTER(_c.c_void_p)]),
    "kw_make_queue": (_c.c_void_p, [_c.POINTER(_c.c_void_p)]),
    "kw_free_queue": (None, [_c.c_void_p]),
    "kw_device_info": (_c.c_void_p, [_c.c_void_p, _c.c_int]),
    "kw_malloc_shared": (_c.c_void_p, [_c.c_void_p, _c.c_size_t]),
    "kw_free_usm": (None, [_c.c_void_p, _c.c_void_p]),
    "kw_build_opencl": (_c.c_int, [_c.c_void_p, _c.c_char_p, _c.c_char_p,
                                    _c.POINTER(_c.c_void_p), _c.POINTER(_c.c_void_p)]),
    "kw_opencl_kernel": (_c.c_void_p, [_c.c_void_p, _c.c_char_p]),
    "kw_bundle_binary": (_c.c_int, [_c.c_void_p, _c.POINTER(_c.c_char_p), _c.c_int,
                                     _c.POINTER(_c.c_void_p), _c.POINTER(_c.c_size_t),
                                     _c.POINTER(_c.c_void_p), _c.POINTER(_c.c_void_p)]),
    "kw_load_binary": (_c.c_int, [_c.c_void_p, _c.c_char_p, _c.c_size_t,
                                   _c.POINTER(_c.c_void_p), _c.POINTER(_c.c_void_p)]),
    "kw_free_program": (None, [_c.c_void_p]),
    "kw_free_kernel": (None, [_c.c_void_p]),
    "kw_free_bundle": (None, [_c.c_void_p]),
    "kw_free_str": (None, [_c.c_void_p]),
}


def runtime_version() -> str:
    """Version of the installed SYCL runtime wheel (``intel-sycl-rt``), or ``"unknown"``."""
    try:
        return importlib.metadata.version("intel-sycl-rt")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def compile_command(source: Path, output: Path, prefix: Path) -> list[str]:
    """The g++ command line that builds the shim against the runtime under ``prefix``."""
    return [
        "g++", "-std=c++17", "-O2", "-fPIC", "-shared", "-DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING",
        f"-I{prefix / 'include'}", str(source), "-o", str(output),
        f"-L{prefix / 'lib'}", "-lsycl", "-lOpenCL", f"-Wl,-rpath,{prefix / 'lib'}",
        # DT_RPATH, which also serves the libraries' own dependencies: the wheel's
        # libOpenCL needs libsvml and friends from the same folder and names no path for them
        "-Wl,--disable-new-dtags",
    ]


def shim_path(settings: Settings) -> Path:
    """Where the shim for this source and runtime version is cached."""
    prefix = runtime_prefix()
    command = " ".join(compile_command(Path("shim.cpp"), Path("shim.so"), prefix))
    key = source_hash(SHIM_SOURCE.read_text(), runtime_version(), str(prefix), command)
    return settings.cache_dir / "sycl-shim" / key / "libkwsycl.so"


def _check_toolchain(prefix: Path) -> None:
    if shutil.which("g++") is None:
        raise BackendUnavailableError(
            "g++ is needed once to build the SYCL shim and was not found. "
            "Fix: install g++ (Debian/Ubuntu: apt-get install g++)."
        )
    if not (prefix / "include" / "sycl" / "sycl.hpp").is_file():
        raise BackendUnavailableError(
            f"SYCL runtime headers not found under {prefix / 'include'}. Fix: {INSTALL_FIX}"
        )


def build_shim(settings: Settings) -> Path:
    """Return the cached shim library, building it first if needed (atomic rename)."""
    target = shim_path(settings)
    if target.is_file() and trusted_file(target, settings):
        return target
    prefix = runtime_prefix()
    _check_toolchain(prefix)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)  # unrecorded or altered: never loaded, rebuilt
    except OSError as exc:
        raise BackendUnavailableError(
            f"environment error: the SYCL shim for this runtime ({target.parent.name}) is not "
            f"in the build cache and this process cannot write it ({exc.strerror}). It is "
            "built once, outside the sandbox, before candidates run. Fix: run `kernelwright "
            "doctor` (it builds the shim), then evaluate again."
        ) from exc
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)
    os.close(fd)
    log.info("building the SYCL shim into %s", target)
    proc = subprocess.run(compile_command(SHIM_SOURCE, Path(tmp), prefix),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        Path(tmp).unlink(missing_ok=True)
        raise BackendUnavailableError(
            f"building the SYCL shim failed (g++ exit {proc.returncode}):\n{proc.stderr[-4000:]}"
            f"\nFix: check g++ and the SYCL runtime ({INSTALL_FIX})."
        )
    os.replace(tmp, target)
    record_file(target, settings)
    return target


def load_shim(settings: Settings) -> ctypes.CDLL:
    """Build if needed, load, and declare the C signatures of the shim."""
    lib = ctypes.CDLL(str(build_shim(settings)))
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


def take_string(lib: ctypes.CDLL, ptr: ctypes.c_void_p) -> str:
    """Copy a string the shim malloc'd, then free it."""
    if not ptr.value:
        return ""
    try:
        return ctypes.string_at(ptr.value).decode(errors="replace")
    finally:
        lib.kw_free_str(ptr)
