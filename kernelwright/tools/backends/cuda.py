"""CUDA C++: nvcc to PTX and cubin (with ptxas statistics); run on a GPU or the PTX emulator.

With a CUDA device, kernels launch through CuPy on torch CUDA tensors. Without one, they run
on ``kernelwright.tools.gpusim.launch`` (the PTX emulator) on CPU tensors/arrays.

Example:
    >>> from kernelwright.tools.backends import cuda
    >>> mod = cuda.load_inline(SRC)  # doctest: +SKIP
    >>> mod.vadd(a, b, c, n, grid=((n + 255) // 256,), block=(256,))  # doctest: +SKIP
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwright.errors import BackendUnavailableError
from kernelwright.tools.backends._compile import (
    CompileOutcome,
    compile_atomically,
    tool_version,
    write_atomically,
)
from kernelwright.tools.backends._cuda_run import (
    EMULATOR_FIX,
    CupyRunner,
    EmulatorRunner,
    cuda_device,
    dim3,
    emulator_available,
)
from kernelwright.tools.backends._source import source_hash
from kernelwright.tools.backends.base import (
    Backend,
    BackendStatus,
    BuildResult,
    Kernel,
    KernelModule,
    KernelStats,
    module_functions,
)
from kernelwright.tools.backends.cache_record import record_file, trusted_file
from kernelwright.tools.ptxas import entry_names, parse_ptxas, ptx_entries

if TYPE_CHECKING:
    from kernelwright.config import Settings

NVCC_FIX = "install the CUDA toolkit (nvcc and ptxas on PATH), e.g. CUDA 13"


class CudaKernel(Kernel):
    """One ``__global__`` entry; ``stats`` holds its ptxas statistics."""

    def __init__(self, name: str, entry: str, runner: Any, stats: KernelStats) -> None:
        self.name = name
        self.entry = entry  # the PTX entry (mangled for C++ linkage)
        self.stats = stats
        self._runner = runner

    def __call__(self, *args: Any, grid: Any = None, block: Any = None,
                 shared_mem: int = 0) -> Any:
        """Launch ``grid`` blocks of ``block`` threads (1–3 ints each) with dynamic shared
        memory ``shared_mem`` bytes."""
        if grid is None or block is None:
            raise TypeError(f"{self.name}: give grid=(gx, gy, gz) and block=(bx, by, bz)")
        return self._runner(self.entry, dim3(grid, "grid"), dim3(block, "block"), args,
                            int(shared_mem))

    def __repr__(self) -> str:
        return f"CudaKernel({self.name!r}, entry={self.entry!r})"


class CudaBackend(Backend):
    """Compile CUDA C++ with nvcc for ``settings.cuda_arch``; report ptxas statistics.

    Args:
        settings: ``cuda_arch`` and ``build_cache_dir``.
        nvcc: The nvcc executable.
    """

    name = "cuda"
    languages = ("cuda",)

    def __init__(self, settings: Settings, *, nvcc: str = "nvcc") -> None:
        self.settings = settings
        self.nvcc = nvcc
        self._runners: list[Any] = []
        self._modules: dict[str, KernelModule] = {}

    @property
    def arch(self) -> str:
        return self.settings.cuda_arch

    def status(self) -> BackendStatus:
        can_compile = shutil.which(self.nvcc) is not None
        version = tool_version(self.nvcc) if can_compile else None
        device = None if self.settings.cuda_emulator else cuda_device()
        if device is not None:
            return BackendStatus(name=self.name, can_compile=can_compile, can_run=True,
                                 device=device, version=version, detail="runs through CuPy",
                                 fix=None if can_compile else NVCC_FIX)
        emu = emulator_available()
        detail = "compiles, no device" + ("; runs on the PTX emulator" if emu else "")
        fix = None if can_compile else NVCC_FIX
        if fix is None and not emu:
            fix = EMULATOR_FIX
        return BackendStatus(name=self.name, can_compile=can_compile, can_run=emu,
                             device="PTX emulator (CPU)" if emu else None, version=version,
                             detail=detail, fix=fix)

    def commands(self, src: Path, options: Sequence[str]) -> dict[str, Any]:
        """nvcc command builders for the PTX and the cubin (``-Xptxas -v``) of one build."""
        base = [self.nvcc, f"-arch={self.arch}", *options]
        return {
            "ptx": lambda out: [*base, "-ptx", str(src), "-o", str(out)],
            "cubin": lambda out: [*base, "-cubin", "-Xptxas", "-v", str(src), "-o", str(out)],
        }

    def build(
        self, source: str, *, language: str | None = None, options: Sequence[str] = ()
    ) -> BuildResult:
        if language not in (None, "cuda"):
            raise ValueError(f"unknown language {language!r} for cuda; choose: cuda")
        if shutil.which(self.nvcc) is None:
            raise BackendUnavailableError(f"{self.nvcc} is not on PATH. Fix: {NVCC_FIX}")
        opts = list(options)
        key = source_hash(source, self.arch, opts, tool_version(self.nvcc))
        stem = self.settings.build_cache_dir / f"cuda-{key}"
        start = time.perf_counter()
        files = [stem.with_suffix(s) for s in (".ptx", ".cubin", ".ptxas")]
        # a trusted process loads only what the cache's integrity record vouches for
        cached = all(f.is_file() and trusted_file(f, self.settings) for f in files)
        ok, log = True, ""
        if not cached:
            ok, log = self._compile(source, stem, opts)
            for f in files if ok else []:
                record_file(f, self.settings)
        return self._result(key, stem, opts, ok, log, cached, time.perf_counter() - start)

    def _compile(self, source: str, stem: Path, opts: list[str]) -> tuple[bool, str]:
        src = stem.with_suffix(".cu")
        write_atomically(src, source)
        cmds = self.commands(src, opts)
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {kind: pool.submit(compile_atomically, stem.with_suffix(f".{kind}"), cmd)
                       for kind, cmd in cmds.items()}
            out: dict[str, CompileOutcome] = {k: f.result() for k, f in futures.items()}
        if out["ptx"].path is None or out["cubin"].path is None:
            failed = out["ptx"] if out["ptx"].path is None else out["cubin"]
            return False, failed.log
        write_atomically(stem.with_suffix(".ptxas"), out["cubin"].log)
        return True, out["cubin"].log

    def _result(self, key: str, stem: Path, opts: list[str], ok: bool, log: str, cached: bool,
                seconds: float) -> BuildResult:
        names: dict[str, str] = {}
        stats: dict[str, KernelStats] = {}
        if ok:
            log = log or stem.with_suffix(".ptxas").read_text()
            names = entry_names(ptx_entries(stem.with_suffix(".ptx").read_text()))
            by_entry = parse_ptxas(log)
            stats = {names[e]: s for e, s in by_entry.items() if e in names}
        return BuildResult(backend=self.name, language="cuda", ok=ok, source_hash=key,
                           options=opts, log=log, seconds=seconds, cached=cached,
                           artifact=str(stem.with_suffix(".ptx")) if ok else None,
                           kernels=list(names.values()), stats=stats)

    def load(self, build: BuildResult) -> KernelModule:
        if not build.ok or build.artifact is None:
            raise ValueError("cannot load a failed build; read build.log for the compiler error")
        if build.source_hash not in self._modules:
            self._modules[build.source_hash] = self._load(build)
        return self._modules[build.source_hash]

    def _load(self, build: BuildResult) -> KernelModule:
        ptx_path = Path(build.artifact or "")
        ptx = ptx_path.read_text()
        runner = self._runner(ptx_path, ptx)
        self._runners.append(runner)
        kernels: dict[str, Kernel] = {
            name: CudaKernel(name, entry, runner, build.stats.get(name, KernelStats()))
            for entry, name in entry_names(ptx_entries(ptx)).items()
        }
        return KernelModule(build, kernels)

    @property
    def emulated(self) -> bool:
        """True when kernels run on the PTX emulator: no GPU, or ``settings.cuda_emulator``."""
        return self.settings.cuda_emulator or cuda_device() is None

    def _runner(self, ptx_path: Path, ptx: str) -> Any:
        if self.emulated:
            return EmulatorRunner(ptx)
        return CupyRunner(str(self._module_file(ptx_path)))

    def _module_file(self, ptx_path: Path) -> Path:
        """The cubin when it matches the device's architecture, else the PTX (driver JIT)."""
        import cupy

        cc = cupy.cuda.Device(0).compute_capability
        cubin = ptx_path.with_suffix(".cubin")
        return cubin if self.arch == f"sm_{cc}" and cubin.is_file() else ptx_path

    def synchronize(self) -> None:
        for runner in self._runners:
            runner.synchronize()

    def __repr__(self) -> str:
        return f"CudaBackend(arch={self.arch!r}, nvcc={self.nvcc!r})"


load_inline, synchronize = module_functions("cuda")
