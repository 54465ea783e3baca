"""The interface every backend's code generator implements, and the registry of them.

A :class:`Codegen` owns everything that differs between SYCL, C++/OpenMP and CUDA: its
dialect (math spellings, prelude), which body emits each kind of group and the kernel
wrapper around it, its part of the schedule space and its defaults, and how the runtime
launches its kernels. Everything else in ``tools/lower`` asks the codegen object; nothing
outside ``backends/`` compares backend names (``tests/test_architecture.py`` checks).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dialect import Dialect
from kernelwright.tools.lower.emit.anchor import conv_body, gemm_body
from kernelwright.tools.lower.emit.attention import attention_body
from kernelwright.tools.lower.emit.common import KernelSource, kernel_info, new_ctx, work_of
from kernelwright.tools.lower.emit.pointwise import pointwise_body, scan_body
from kernelwright.tools.lower.emit.rows import StashMismatch, rows_body
from kernelwright.tools.lower.schedule import Group

# tunable parameters per group kind on the device backends (SYCL, CUDA)
CHOICES: dict[str, dict[str, list[Any]]] = {
    "pointwise": {"wg": [64, 128, 256, 512], "ipw": [1, 2, 4, 8]},
    "rows": {"strategy": ["lanes", "subgroup", "item", "group"],
             "wg": [4, 8, 16, 32, 64, 128, 256, 512], "lanes": [4, 8, 16, 32]},
    "scan": {"wg": [16, 64, 128]},
    "gemm": {"rm": [1, 2, 4, 8], "rn": [1, 2, 4, 8], "wg": [16, 64, 128, 256]},
    "conv": {"ocb": [1, 2, 4, 8], "wg": [16, 64, 128, 256]},
    "attention": {"wg": [16, 32, 64, 128]},  # query rows per work-group
}

Steps = list[dict[str, Any]]


class Codegen(ABC):
    """One backend's code generation, schedule space and launch glue."""

    name: ClassVar[str]
    dialect: ClassVar[Dialect]
    compile_options: ClassVar[tuple[str, ...]] = ()  # extra compiler flags of the module
    vendor_library: ClassVar[bool] = False  # GEMM/conv may call the host's vendor library
    launch_modes: ClassVar[tuple[str, ...]] = ()  # schedule parameter ``launch`` (first: default)
    body_depth: ClassVar[int] = 1  # indentation of kernel bodies inside the wrapper
    simd_loops: ClassVar[bool] = False  # mark row loops OpenMP simd
    cooperative_rows: ClassVar[bool] = True  # rows may run one work-group per row
    # kernels identical but for their buffers launch one emitted function (shared_kernels.py)
    shares_kernels: ClassVar[bool] = False
    launch_offsets: ClassVar[bool] = False  # its runner adds a step's ``offsets`` to pointers
    # default strategy of a row group whose reduced run ends with the contiguous last dim
    contiguous_rows: ClassVar[str] = "lanes"
    subgroup_size: ClassVar[int] = 32  # work-group of strategy=subgroup
    subgroup_kernels: ClassVar[bool] = False  # subgroup rows reduce over a real sub-group
    gemm_tile: ClassVar[tuple[int, int]] = (8, 1)  # default (rm, rn) before any search

    # -- source ----------------------------------------------------------------------------

    def prelude(self) -> str:
        """Everything the kernels of one module share, before the first kernel."""
        return self.dialect.prelude()

    # -- emission --------------------------------------------------------------------------

    def emit_group(self, grp: Group, real: dict[int, str], names: dict[int, str],
                   params: dict[str, Any], idx_type: str = "int") -> KernelSource:
        """Emit ``grp`` as a kernel named ``grp.name`` (raises NotFusable to split it)."""
        cooperative = False
        wg = int(params.get("wg", 128))
        if grp.kind == "rows":
            k, units, cooperative, wg = self._emit_rows(grp, real, names, params, idx_type, wg)
        elif grp.kind == "attention" and self.cooperative_rows:  # a work-group of rows
            k = new_ctx(self, real, grp, idx_type)
            units, cooperative = attention_body(k, grp, names, "u", "l", wg), True
        else:
            emitter = {"pointwise": self.emit_pointwise, "scan": self.emit_scan,
                       "gemm": self.emit_gemm, "conv": self.emit_conv,
                       "attention": self.emit_attention}.get(grp.kind)
            if emitter is None:
                raise ValueError(grp.kind)
            k = new_ctx(self, real, grp, idx_type)
            units = emitter(k, grp, names, params)
        src = self.wrap(grp.name, k, units, wg, cooperative, work_of(grp),
                        str(params.get("threads", "auto")))
        src.info = kernel_info(grp, k)
        return src

    def _emit_rows(self, grp: Group, real: dict[int, str], names: dict[int, str],
                   params: dict[str, Any], idx_type: str, wg: int):
        strategy = str(params.get("strategy", "item"))
        cooperative, lanes, subgroup, wg = self.rows_layout(strategy, params, wg)

        def attempt(stash: bool) -> tuple[KernelCtx, int]:
            k = new_ctx(self, real, grp, idx_type)
            k.lanes, k.subgroup = lanes, subgroup
            return k, rows_body(k, grp, names, "u", "l" if cooperative else None, wg,
                                stash=stash)

        try:
            k, units = attempt(True)
        except StashMismatch:  # the epilogue reads the stash at another index: no stash
            k, units = attempt(False)
        return k, units, cooperative, wg

    def rows_layout(self, strategy: str, params: dict[str, Any], wg: int
                    ) -> tuple[bool, int, bool, int]:
        """``(cooperative, lanes, subgroup, wg)`` of a row group under ``strategy``."""
        cooperative = self.cooperative_rows and strategy in ("group", "subgroup")
        lanes = int(params.get("lanes", 16)) if strategy == "lanes" else 0
        subgroup = False
        if cooperative and strategy == "subgroup":
            wg, subgroup = self.subgroup_size, self.subgroup_kernels
        return cooperative, lanes, subgroup, wg

    def emit_pointwise(self, k: KernelCtx, grp: Group, names: dict[int, str],
                       params: dict[str, Any]) -> int:
        return pointwise_body(k, grp, names, "u", int(params.get("ipw", 1)))

    def emit_scan(self, k: KernelCtx, grp: Group, names: dict[int, str],
                  params: dict[str, Any]) -> int:
        return scan_body(k, grp, names, "u")

    def emit_gemm(self, k: KernelCtx, grp: Group, names: dict[int, str],
                  params: dict[str, Any]) -> int:
        return gemm_body(k, grp, names, "u", int(params.get("rm", 2)), int(params.get("rn", 4)))

    def emit_conv(self, k: KernelCtx, grp: Group, names: dict[int, str],
                  params: dict[str, Any]) -> int:
        return conv_body(k, grp, names, "u", int(params.get("ocb", 4)))

    def emit_attention(self, k: KernelCtx, grp: Group, names: dict[int, str],
                       params: dict[str, Any]) -> int:
        """One query row per unit (backends without work-groups override it)."""
        return attention_body(k, grp, names, "u")

    def group_reduce(self, value: str, ctype: str, op: str, subgroup: bool) -> str:
        """Combine ``value`` over the work-group (or sub-group) with ``op``."""
        raise NotImplementedError(f"{self.name} has no cooperative row kernels")

    @abstractmethod
    def wrap(self, name: str, k: KernelCtx, units: int, wg: int, cooperative: bool,
             work: int | None = None, threads: str = "auto") -> KernelSource:
        """The kernel's text around its body."""

    # -- schedule space --------------------------------------------------------------------

    def group_space(self, grp: Group) -> dict[str, list[Any]]:
        """Tunable parameters of one group (names without the ``g<i>.`` prefix)."""
        return {p: list(c) for p, c in CHOICES[grp.kind].items()}

    def group_defaults(self, grp: Group) -> dict[str, Any]:
        """Defaults of this backend's own parameters of one group (names without the prefix)
        that ``space.choose_defaults`` does not set itself."""
        return {}

    def anchor_defaults(self, grp: Group) -> dict[str, Any] | None:
        """Defaults of a GEMM/convolution group's backend-own kernel parameters (``algo`` and
        its blocking); None: the shared packed micro-kernel's rule (``space.choose_defaults``)."""
        return None

    # -- runtime ---------------------------------------------------------------------------

    def launcher(self, kernels: Any, device: Any) -> Callable[[Steps, dict[str, Any]], None]:
        """``run(steps, tensors)``: launch a plan's steps one by one (library steps bind their
        result in ``tensors``), then wait for the device when the backend is asynchronous."""
        from kernelwright.tools.lower.vendor import run_vendor

        def run(steps: Steps, t: dict[str, Any]) -> None:
            for s in steps:
                if "vendor" in s:
                    run_vendor(s, t)
                    continue
                self.launch_step(kernels[s["kernel"]], [t[a] for a in s["args"]], s)
            if self.asynchronous:
                device.synchronize()

        return run

    asynchronous: ClassVar[bool] = True  # launches return before the kernel ends

    def launch_step(self, kernel: Any, args: list[Any], step: dict[str, Any]) -> None:
        """Launch one kernel of a plan with its arguments and launch configuration."""
        kernel(*args)

    def prepared(self, owner: Any, plan: dict[str, Any]) -> Callable | None:
        """A runner with the per-call work prepared once (None: launch step by step)."""
        return None


_REGISTRY: dict[str, type[Codegen]] = {}


def register(cls: type[Codegen]) -> type[Codegen]:
    """Class decorator: make ``cls`` the code generator of backend ``cls.name``."""
    _REGISTRY[cls.name.lower()] = cls
    return cls


def backend_names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def codegen_for(name: str) -> Codegen:
    """The code generator of backend ``name`` (case-insensitive)."""
    cls = _REGISTRY.get(str(name).lower())
    if cls is None:
        raise ValueError(f"unknown backend {name!r}; choose one of: {', '.join(_REGISTRY)}")
    return cls()
