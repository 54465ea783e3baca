"""C++/OpenMP on the host: ``extern "C"`` functions built by g++ and called through ctypes.

Example:
    >>> from kernelwright.tools.backends import cpp
    >>> lib = cpp.load_inline(SRC)  # doctest: +SKIP
    >>> lib.vadd(a, b, c, n)  # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwright.errors import BackendUnavailableError
from kernelwright.tools.backends._args import convert_args
from kernelwright.tools.backends._compile import (
    compile_atomically,
    tool_version,
    write_atomically,
)
from kernelwright.tools.backends._source import extern_c_functions, source_hash
from kernelwright.tools.backends.base import (
    Backend,
    BackendStatus,
    BuildResult,
    Kernel,
    KernelModule,
    module_functions,
)
from kernelwright.tools.backends.cache_record import record_file, trusted_file
from kernelwright.tools.backends.native_imports import check_library
from kernelwright.tools.cpuinfo import cpu_signature

if TYPE_CHECKING:
    from kernelwright.config import Settings

DEFAULT_FLAGS = ("-O3", "-march=native", "-fopenmp")
REQUIRED_FLAGS = ("-fPIC", "-shared")
GXX_FIX = "install g++ (Debian/Ubuntu: apt-get install g++)"
_RESTYPES: dict[str, Any] = {
    "void": None, "int": ctypes.c_int, "unsigned": ctypes.c_uint, "float": ctypes.c_float,
    "double": ctypes.c_double, "long": ctypes.c_long, "int32_t": ctypes.c_int32,
    "int64_t": ctypes.c_int64, "uint32_t": ctypes.c_uint32, "uint64_t": ctypes.c_uint64,
    "size_t": ctypes.c_size_t, "bool": ctypes.c_bool,
}


def restype_of(declared: str) -> Any:
    """The ctypes return type for a declared C return type (``None`` for void/unknown)."""
    if "*" in declared:
        return ctypes.c_void_p
    words = declared.split()
    return _RESTYPES.get(words[-1] if words else "void")


class CppKernel(Kernel):
    """An ``extern "C"`` function; calling it returns when it is done (its return value)."""

    def __init__(self, name: str, function: Any) -> None:
        self.name = name
        self._function = function

    def __call__(self, *args: Any, **launch: Any) -> Any:
        """Call with tensors/arrays as pointers, int -> int32, float -> float32."""
        if launch:
            raise TypeError(f"{self.name}: C++ functions take no launch keywords, got "
                            f"{sorted(launch)}")
        return self._function(*[a.value for a in convert_args(args)])

    def __repr__(self) -> str:
        return f"CppKernel({self.name!r})"


class CppBackend(Backend):
    """Compile C++/OpenMP with ``g++ -O3 -march=native -fopenmp -fPIC -shared``; cache on disk.

    Args:
        settings: ``build_cache_dir`` holds the shared objects.
        compiler: The C++ compiler to run.
        flags: Replaces the default optimisation flags (``-fPIC -shared`` are always added);
            ``build(options=...)`` appends per build.
    """

    name = "cpp"
    languages = ("cpp",)
    runs_without_numpy = True  # ctypes only

    def __init__(self, settings: Settings, *, compiler: str = "g++",
                 flags: Sequence[str] = DEFAULT_FLAGS) -> None:
        self.settings = settings
        self.compiler = compiler
        self.flags = tuple(flags)
        self._modules: dict[str, KernelModule] = {}

    def status(self) -> BackendStatus:
        if shutil.which(self.compiler) is None:
            return BackendStatus(name=self.name, can_compile=False, can_run=False,
                                 detail=f"{self.compiler} not found on PATH", fix=GXX_FIX)
        return BackendStatus(name=self.name, can_compile=True, can_run=True, device="host CPU",
                             version=tool_version(self.compiler),
                             detail=f"flags: {' '.join(self.flags + REQUIRED_FLAGS)}")

    def command(self, source: Path, output: Path, options: Sequence[str] = ()) -> list[str]:
        """The compiler command line for one build."""
        return [self.compiler, *self.flags, *REQUIRED_FLAGS, *options, str(source), "-o",
                str(output)]

    def build(
        self, source: str, *, language: str | None = None, options: Sequence[str] = ()
    ) -> BuildResult:
        if language not in (None, "cpp"):
            raise ValueError(f"unknown language {language!r} for cpp; choose: cpp")
        if shutil.which(self.compiler) is None:
            raise BackendUnavailableError(f"{self.compiler} is not on PATH. Fix: {GXX_FIX}")
        opts = list(options)
        key = source_hash(source, self.command(Path("-"), Path("-"), opts),
                          tool_version(self.compiler), cpu_signature())
        target = self.settings.build_cache_dir / f"cpp-{key}.so"
        names = [name for _, name in extern_c_functions(source)]
        start = time.perf_counter()
        # a trusted process loads only what the cache's integrity record vouches for
        cached, log, ok = target.is_file() and trusted_file(target, self.settings), "", True
        if not cached:
            ok, log = self._compile(source, key, target, opts)
            if ok:
                record_file(target, self.settings)
        return BuildResult(backend=self.name, language="cpp", ok=ok, source_hash=key,
                           options=opts, log=log, seconds=time.perf_counter() - start,
                           cached=cached, artifact=str(target) if ok else None,
                           kernels=names if ok else [])

    def _compile(self, source: str, key: str, target: Path, opts: list[str]) -> tuple[bool, str]:
        src = self.settings.build_cache_dir / f"cpp-{key}.cpp"
        write_atomically(src, source)
        outcome = compile_atomically(target, lambda out: self.command(src, out, opts))
        return outcome.path is not None, outcome.log

    def load(self, build: BuildResult) -> KernelModule:
        if not build.ok or build.artifact is None:
            raise ValueError("cannot load a failed build; read build.log for the compiler error")
        if build.source_hash not in self._modules:
            self._modules[build.source_hash] = _load_library(build)
        return self._modules[build.source_hash]

    def synchronize(self) -> None:
        """Nothing to wait for: every call returns when its function has returned."""

    def __repr__(self) -> str:
        return f"CppBackend(compiler={self.compiler!r}, flags={list(self.flags)})"


def _load_library(build: BuildResult) -> KernelModule:
    check_library(Path(str(build.artifact)))  # what a custom-only contract refuses, if in force
    lib = ctypes.CDLL(str(build.artifact))
    source = Path(str(build.artifact)).with_suffix(".cpp")
    declared = dict((n, r) for r, n in extern_c_functions(source.read_text())) \
        if source.is_file() else {}
    kernels: dict[str, Kernel] = {}
    for name in build.kernels:
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = restype_of(declared.get(name, "void"))
            kernels[name] = CppKernel(name, fn)
    return KernelModule(build, kernels)


load_inline, synchronize = module_functions("cpp")
