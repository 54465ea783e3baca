"""SYCL on the Intel OpenCL CPU device: the default backend, no GPU needed.

Sources are SYCL C++ free-function kernels compiled at run time through the
``sycl_ext_oneapi_kernel_compiler`` extension (a small C++ shim, built once and cached), or
OpenCL C (``language="opencl"``). A SYCL source built before is served from its kept device
binary (:mod:`._sycl_binary`), without the kernel compiler. Kernels take torch CPU tensors and
numpy arrays as raw pointers (zero copy: the device supports system allocations).

Example:
    >>> from kernelwright.tools.backends import sycl
    >>> kern = sycl.load_inline(SRC)  # doctest: +SKIP
    >>> kern.vadd(a, b, c, n, global_size=(n,), local_size=(64,))  # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwright.errors import BackendUnavailableError, LaunchError
from kernelwright.tools.backends import _sycl_binary
from kernelwright.tools.backends._args import Arg, as_range, convert_args
from kernelwright.tools.backends._shim import runtime_version, shim_path, take_string
from kernelwright.tools.backends._source import (
    extern_c_names,
    looks_like_opencl,
    opencl_kernel_names,
    source_hash,
)
from kernelwright.tools.backends._sycl_runtime import OpenCLProgram, SyclRuntime, open_runtime
from kernelwright.tools.backends._usm import SharedCopies
from kernelwright.tools.backends.base import (
    Backend,
    BackendStatus,
    BuildResult,
    Kernel,
    KernelModule,
    module_functions,
)
from kernelwright.tools.backends.cache_record import cache_writes, record_tree, seal_tree
from kernelwright.tools.backends.sycl_env import (
    INSTALL_FIX,
    TARGET_ARCH,
    apply_runtime_env,
    cpu_target_arch,
)

if TYPE_CHECKING:
    from kernelwright.config import Settings

log = logging.getLogger(__name__)
shim_file = shim_path  # where the shim of this runtime and venv is cached (its full key)

apply_runtime_env(None)  # device discovery before the runtime loads; the runtime adds the
# cache of its own settings when it opens


@dataclass
class _Built:
    """A successful build living in this process: the bundle and its kernel handles."""

    result: BuildResult
    bundle: Any  # shim bundle handle (SYCL) or OpenCL program: kept alive with its kernels
    kernels: dict[str, int]
    module: KernelModule | None = None


class SyclKernel(Kernel):
    """One kernel of a SYCL or OpenCL build; ``last_ns`` is its last profiled time (info only)."""

    def __init__(self, backend: SyclBackend, name: str, pointer: int, owner: Any) -> None:
        self.name = name
        self.last_ns: int | None = None
        self._backend = backend
        self._pointer = pointer
        self._owner = owner  # keeps the bundle alive
        self.num_args: int = backend.runtime.lib.kw_num_args(pointer)

    def __call__(
        self, *args: Any, global_size: Any = None, local_size: Any = None, wait: bool = True
    ) -> None:
        """Launch over ``global_size`` (1–3 ints) work-items in groups of ``local_size``.

        Args:
            *args: Kernel arguments (tensors/arrays as pointers, int -> int32, float -> float32).
            global_size: The global range, e.g. ``(n,)``; required.
            local_size: The work-group size; ``None`` lets the runtime choose.
            wait: Return only when the kernel has finished (else call ``synchronize()``).
        """
        if global_size is None:
            raise LaunchError(f"{self.name}: give global_size=(n,) (and optionally local_size).")
        if self.num_args >= 0 and len(args) != self.num_args:
            raise LaunchError(f"{self.name} takes {self.num_args} arguments, got {len(args)}.")
        glob = as_range(global_size, "global_size")
        loc = None if local_size is None else as_range(local_size, "local_size")
        if loc is not None and len(loc) != len(glob):
            raise LaunchError(f"{self.name}: local_size {loc} and global_size {glob} differ "
                              "in dimensions.")
        self.last_ns = self._backend.launch(self, convert_args(args), glob, loc, wait)

    def __repr__(self) -> str:
        return f"SyclKernel({self.name!r})"


class SyclBackend(Backend):
    """Build and launch SYCL (and OpenCL C) kernels on the Intel OpenCL CPU device.

    Args:
        settings: Cache locations.
        zero_copy: Pass host pointers directly (default: when the device supports system
            allocations); ``False`` copies every array through shared USM (for measurements).
    """

    name = "sycl"
    languages = ("sycl", "opencl")
    runs_without_numpy = True  # the shim makes the queue; dpctl's Python side is not used

    def __init__(self, settings: Settings, *, zero_copy: bool | None = None) -> None:
        self.settings = settings
        self._zero_copy = zero_copy
        self._runtime: SyclRuntime | None = None
        self._builds: dict[str, _Built] = {}
        self._failed: dict[str, BuildResult] = {}

    # -- runtime ---------------------------------------------------------------------------

    @property
    def runtime(self) -> SyclRuntime:
        """The queue and shim, opened on first use (raises ``BackendUnavailableError``)."""
        if self._runtime is None:
            self._runtime = open_runtime(self.settings)
        return self._runtime

    @property
    def zero_copy(self) -> bool:
        return self.runtime.system_usm if self._zero_copy is None else self._zero_copy

    def status(self) -> BackendStatus:
        try:
            rt = self.runtime
        except BackendUnavailableError as exc:
            return BackendStatus(name=self.name, can_compile=False, can_run=False,
                                 detail=str(exc), fix=_fix_of(str(exc)))
        dev = rt.device
        can = rt.can_compile("sycl")
        detail = "SYCL-RTC compiles on this device" if can else "SYCL-RTC cannot compile here"
        detail += "; zero-copy host pointers" if self.zero_copy else "; arrays copied via USM"
        arch = cpu_target_arch()
        detail += (f"; target ISA {arch} ({TARGET_ARCH})" if arch
                   else "; target ISA: the runtime's own choice")
        return BackendStatus(
            name=self.name, can_compile=can, can_run=True, device=f"{dev.name} ({dev.backend})",
            version=f"sycl-rt {runtime_version()}, driver {dev.driver_version}",
            detail=detail, fix=None if can else INSTALL_FIX,
        )

    # -- build -----------------------------------------------------------------------------

    def build(
        self, source: str, *, language: str | None = None, options: Sequence[str] = ()
    ) -> BuildResult:
        language = language or ("opencl" if looks_like_opencl(source) else "sycl")
        if language not in self.languages:
            raise ValueError(f"unknown language {language!r} for sycl; choose: sycl, opencl")
        opts = list(options)
        key = source_hash(source, language, opts, runtime_version())
        known = self._builds[key].result if key in self._builds else self._failed.get(key)
        if known is not None:  # failures too: the same source fails the same way
            return known.model_copy(update={"cached": True, "seconds": 0.0})
        _ = self.runtime  # opened outside the lock: it may build the shim, which records it
        kept = _sycl_binary.binary_path(self.settings, key, self.runtime)
        if language == "sycl" and (hit := self._load_kept(kept, key, opts)) is not None:
            return hit
        with cache_writes(self.settings):  # from the seal to the record, no other sealer
            runtime_cache = self._sealed_runtime_cache()
            start = time.perf_counter()
            if language == "sycl":
                bundle, text = self.runtime.build("sycl", source, opts)
                pointers = {} if bundle is None else self._kernel_pointers(bundle, source)
            else:
                bundle, text = self.runtime.build_opencl(source, opts)
                pointers = {} if bundle is None else _opencl_kernels(bundle, source)
            if runtime_cache is not None:
                record_tree(runtime_cache, self.settings)
        result = self._result(language, opts, key, bundle is not None, text, start, pointers)
        if result.ok:
            self._builds[key] = _Built(result, bundle, pointers)
            if language == "sycl":
                _sycl_binary.save(kept, self.runtime, bundle, list(pointers), self.settings)
        else:
            self._failed[key] = result
        return result

    def _load_kept(self, path: Path, key: str, opts: list[str]) -> BuildResult | None:
        """A build served from its kept device binary (:mod:`._sycl_binary`), or ``None``."""
        start = time.perf_counter()
        loaded = _sycl_binary.load(path, self.runtime, self.settings)
        if loaded is None:
            return None
        program, pointers = loaded
        result = BuildResult(backend=self.name, language="sycl", ok=True, source_hash=key,
                             options=opts, seconds=time.perf_counter() - start, cached=True,
                             kernels=list(pointers))
        self._builds[key] = _Built(result, program, pointers)
        return result

    def _sealed_runtime_cache(self) -> Path | None:
        """The SYCL runtime's own kernel cache, cleared of every file the integrity record does
        not vouch for before the runtime may read it (trusted processes only; a sandbox sees
        the cache the orchestrator verified); ``None`` when the runtime keeps none."""
        _ = self.runtime  # opening the runtime sets SYCL_CACHE_DIR
        folder = os.environ.get("SYCL_CACHE_DIR")
        if not folder:
            return None
        seal_tree(Path(folder), self.settings)
        return Path(folder)

    def _kernel_pointers(self, bundle: int, source: str) -> dict[str, int]:
        found = {n: self.runtime.get_kernel(bundle, n) for n in extern_c_names(source)}
        return {n: p for n, p in found.items() if p}

    def _result(self, language: str, opts: list[str], key: str, ok: bool, text: str,
                start: float, names: dict[str, int]) -> BuildResult:
        # Not cached: a SYCL build that got here had no kept device binary, so it counts as
        # fresh even when the runtime's own cache served it (a sandboxed runner then reports
        # it, and the trusted builder keeps the binary in the shared cache: caches from before
        # binaries were kept get them this way); nothing of ours serves OpenCL C builds.
        return BuildResult(
            backend=self.name, language=language, ok=ok, source_hash=key, options=opts,
            log=text, seconds=time.perf_counter() - start, cached=False,
            kernels=list(names),
        )

    # -- load and launch -------------------------------------------------------------------

    def load(self, build: BuildResult) -> KernelModule:
        if not build.ok:
            raise ValueError("cannot load a failed build; read build.log for the compiler error")
        if build.source_hash not in self._builds:
            raise ValueError("this build was made by another process or backend instance; "
                             "call load_inline(source) here instead")
        built = self._builds[build.source_hash]
        if built.module is None:
            kernels: dict[str, Kernel] = {
                name: SyclKernel(self, name, ptr, built) for name, ptr in built.kernels.items()
            }
            built.module = KernelModule(built.result, kernels)
        return built.module

    def launch(self, kernel: SyclKernel, args: list[Arg], glob: tuple[int, ...],
               loc: tuple[int, ...] | None, wait: bool) -> int | None:
        """Submit ``kernel`` with converted ``args``; return its profiled ns when waited for."""
        if self.zero_copy:
            return self._submit(kernel, args, glob, loc, wait)
        with SharedCopies(self.runtime, args) as staged:
            return self._submit(kernel, staged, glob, loc, True)

    def _submit(self, kernel: SyclKernel, args: list[Arg], glob: tuple[int, ...],
                loc: tuple[int, ...] | None, wait: bool) -> int | None:
        rt, n = self.runtime, len(args)
        kinds = (ctypes.c_int * n)(*[0 if a.is_pointer else 1 for a in args])
        values = (ctypes.c_void_p * n)(*[ctypes.addressof(a.value) for a in args])
        sizes = (ctypes.c_size_t * n)(*[a.size for a in args])
        g = (ctypes.c_size_t * 3)(*glob)
        lo = None if loc is None else (ctypes.c_size_t * 3)(*loc)
        ns, err = ctypes.c_uint64(), ctypes.c_void_p()
        rc = rt.lib.kw_launch(rt.queue_ptr, kernel._pointer, n, kinds, values, sizes, len(glob),
                              g, lo, int(wait), ctypes.byref(ns), ctypes.byref(err))
        if rc != 0:
            raise LaunchError(f"launching {kernel.name} failed: {take_string(rt.lib, err)}")
        return ns.value if wait else None

    def prepare_chain(self, launches: Sequence[tuple[SyclKernel, Sequence[int], int, int]],
                      n_pointers: int) -> PreparedChain:
        """Marshal a fixed sequence of 1-D launches once; see :class:`PreparedChain`."""
        return PreparedChain(self, launches, n_pointers)

    def synchronize(self) -> None:
        if self._runtime is not None:
            self._runtime.wait()

    def __repr__(self) -> str:
        return f"SyclBackend(cache_dir={str(self.settings.cache_dir)!r})"


class PreparedChain:
    """Kernels launched in order with one call into the runtime (one submission per forward).

    ``launches`` are ``(kernel, pointer indices, global size, local size)``: kernel arguments
    are all pointers, taken by index from the table passed to each call. Everything but that
    table is converted once, here.

    Example:
        >>> chain = backend.prepare_chain([(k1, [0, 1], 1024, 128), (k2, [1, 2], 64, 64)], 3)
        >>> chain([x.data_ptr(), tmp.data_ptr(), y.data_ptr()])  # doctest: +SKIP
    """

    def __init__(self, backend: SyclBackend, launches, n_pointers: int) -> None:
        c = ctypes
        self._backend = backend
        self._owners = [k._owner for k, *_ in launches]  # keep the bundles alive
        self.n = len(launches)
        self.n_pointers = n_pointers
        self._table = c.c_void_p * n_pointers
        self._kernels = (c.c_void_p * self.n)(*[k._pointer for k, *_ in launches])
        self._nargs = (c.c_int * self.n)(*[len(a) for _, a, _, _ in launches])
        flat = [i for _, a, _, _ in launches for i in a]
        self._argidx = (c.c_int * max(1, len(flat)))(*flat)
        self._globals = (c.c_size_t * self.n)(*[g for *_, g, _ in launches])
        self._locals = (c.c_size_t * self.n)(*[lo for *_, lo in launches])
        self._names = [k.name for k, *_ in launches]

    def __call__(self, pointers: Sequence[int], wait: bool = True) -> None:
        rt = self._backend.runtime
        err = ctypes.c_void_p()
        rc = rt.lib.kw_launch_chain(rt.queue_ptr, self.n, self._kernels, self._nargs,
                                    self._argidx, self._globals, self._locals,
                                    self._table(*pointers), int(wait), ctypes.byref(err))
        if rc != 0:
            raise LaunchError(f"launching the chain {self._names} failed: "
                              f"{take_string(rt.lib, err)}")

    def __repr__(self) -> str:
        return f"PreparedChain({self._names})"


def _opencl_kernels(program: OpenCLProgram, source: str) -> dict[str, int]:
    """The kernels of an OpenCL program, by name (``sycl::kernel*`` handles)."""
    found = {n: program.kernel(n) for n in opencl_kernel_names(source)}
    return {n: p for n, p in found.items() if p}


def _fix_of(message: str) -> str:
    if "g++" in message:
        return "install g++ (Debian/Ubuntu: apt-get install g++)"
    return INSTALL_FIX


load_inline, synchronize = module_functions("sycl")
