"""Tunable schedule parameters per fusion group and the defaults chosen before any search."""

from __future__ import annotations

from typing import Any

from kernelwright.tools.lower.backends import codegen_for
from kernelwright.tools.lower.backends.base import CHOICES
from kernelwright.tools.lower.microkernels.lowered import gemm_defaults
from kernelwright.tools.lower.microkernels.lowered_conv import conv_defaults
from kernelwright.tools.lower.vendor import flash_attention_fits
from kernelwright.tools.lower.vendor_fuse import post_ops

__all__ = ["CHOICES", "VENDOR_MIN_FLOPS", "choose_defaults", "group_space", "vendor_allowed"]

def group_space(prog, contract) -> dict[str, list[Any]]:
    """``g<i>.<param>`` for every group of the nominal signature (the backend's codegen
    says which parameters each group has), plus ``launch`` where the backend has modes."""
    cg = codegen_for(prog.backend)
    space: dict[str, list[Any]] = {}
    if cg.launch_modes:
        space["launch"] = list(cg.launch_modes)
    for gi, grp in enumerate(prog.variants[0].sched.groups):
        for p, choices in cg.group_space(grp).items():
            space[f"g{gi}.{p}"] = choices
        if has_library_form(grp) and vendor_allowed(prog, contract):
            space[f"g{gi}.impl"] = ["kernel", "vendor"]
            var = prog.variants[0]
            if grp.kind != "attention" and post_ops(var.graph, var.sched, grp) is not None:
                # oneDNN post-ops or BLAS + our epilogue kernel
                space[f"g{gi}.vform"] = ["fused", "blas"]
            if channels_last_allowed(grp, prog.variants[0].sched):
                space[f"g{gi}.vlayout"] = ["plain", "cl"]
    return space


def channels_last_allowed(grp, sched) -> bool:
    """Whether a library convolution may leave its result channels-last: a 2-D or 3-D one,
    read only by kernels that index buffers through their layout (no other anchor: packed
    operands and library calls on strided views assume row-major buffers)."""
    return (grp.kind == "conv" and len(grp.main[0].shape) in (4, 5)
            and sum(g.kind in LIBRARY_KINDS for g in sched.groups) == 1)


def has_library_form(grp) -> bool:
    """GEMM and convolution always; attention where torch's fused kernel takes it."""
    return grp.kind in LIBRARY_KINDS and (grp.kind != "attention"
                                          or flash_attention_fits(grp.main[0]))


def vendor_allowed(prog, contract) -> bool:
    return (contract is not None and contract.allows("vendor_library")
            and codegen_for(prog.backend).vendor_library)


VENDOR_MIN_FLOPS = 2 * 64**3
LIBRARY_KINDS = ("gemm", "conv", "attention")  # groups a library call can compute


def choose_defaults(prog, contract) -> dict[str, Any]:
    """Heuristic starting point: row groups cooperate when rows are long and few."""
    params: dict[str, Any] = {}
    if "launch" in prog.space:
        params["launch"] = prog.space["launch"][0]
    for gi, grp in enumerate(prog.variants[0].sched.groups):
        pre = f"g{gi}."
        if f"{pre}threads" in prog.space:
            params[f"{pre}threads"] = "auto"
        if grp.kind == "rows":
            dom = grp.domain
            if f"{pre}strategy" in prog.space:
                # the reduced dims end with the source's last (contiguous) dim: the backend's
                # strategy for contiguous rows (SYCL: a sub-group per row, whose lanes load
                # neighbouring elements; else one work-item per row, lanes along the row,
                # work-groups of 8); otherwise one work-item per row in groups of 64, whose
                # lanes are then neighbouring (contiguous) outer positions.
                last = len(dom.src_shape) - 1
                along = (dom.red_dims and dom.red_dims[-1] == last
                         and dom.src_shape[last] >= 16)
                strategy = codegen_for(prog.backend).contiguous_rows if along else ""
                # float accumulators only: a work-group of 8 with double sums (rows past
                # 4096 floats) crashes the device compiler's loop vectoriser
                if strategy == "lanes" and any(r.acc_ctype() != "float" for r in grp.main):
                    strategy = ""
                lanes = strategy == "lanes"
                rows, length = dom.numel, dom.red_numel
                coop = not lanes and length >= 64 and rows < 4096  # the earlier default
                params[f"{pre}strategy"] = strategy or ("group" if coop else "item")
                params[f"{pre}wg"] = 8 if lanes else (_pow2_at_most(length, 256) if coop
                                                      else 64)
                params[f"{pre}lanes"] = 16
        elif grp.kind == "pointwise":
            if f"{pre}wg" in prog.space:
                params[f"{pre}wg"] = 256
            if f"{pre}ipw" in prog.space:
                params[f"{pre}ipw"] = 1
        elif grp.kind == "gemm":
            params[f"{pre}rm"], params[f"{pre}rn"] = codegen_for(prog.backend).gemm_tile
            if f"{pre}form" in prog.space:
                params[f"{pre}form"] = "auto"
            own = codegen_for(prog.backend).anchor_defaults(grp)
            if f"{pre}algo" in prog.space and own is not None:  # the backend's own kernel
                params.update({pre + p: v for p, v in own.items()})
            elif f"{pre}algo" in prog.space:  # the packed micro-kernel's blocking
                params.update({pre + p: v for p, v in gemm_defaults(grp.main[0]).items()})
            g = grp.main[0]
            flops = 2 * g.m * g.n * g.kdim * (g.numel // max(1, g.m * g.n))
            if f"{pre}vform" in prog.space:
                params[f"{pre}vform"] = "fused"
            if f"{pre}impl" in prog.space:
                vendor = flops >= VENDOR_MIN_FLOPS
                params[f"{pre}impl"] = "vendor" if vendor else "kernel"
                prog.notes.append(
                    f"g{gi} gemm {g.m}x{g.n}x{g.kdim}: implementation space "
                    + ("vendor_library (oneDNN/MKL through torch, zero copy; bias and "
                       "activation as "
                       "post-ops where they fuse, else our epilogue kernel): the "
                       f"contract allows it and {flops / 1e6:.1f} MFLOP is past the "
                       f"{VENDOR_MIN_FLOPS / 1e6:.1f} MFLOP where BLAS wins" if vendor else
                       "custom_kernel: too small for a library call to pay off"))
            if f"{pre}wg" in prog.space:
                params[f"{pre}wg"] = 64
        elif grp.kind == "conv":
            params[f"{pre}ocb"] = 4
            if f"{pre}pw" in prog.space:
                params[f"{pre}pw"] = 16
            own = codegen_for(prog.backend).anchor_defaults(grp)
            if f"{pre}algo" in prog.space and own is not None:  # the backend's own kernel
                params.update({pre + p: v for p, v in own.items()})
            elif f"{pre}algo" in prog.space:  # implicit GEMM on the packed micro-kernel
                params.update({pre + p: v for p, v in gemm_defaults(None).items()
                               if p != "algo"})
                params.update({pre + p: v for p, v in conv_defaults(grp.main[0]).items()})
            c = grp.main[0]
            flops = 2 * c.numel * c.cost
            if f"{pre}vform" in prog.space:
                params[f"{pre}vform"] = "fused"
            if f"{pre}vlayout" in prog.space:  # channels-last only where measured faster
                params[f"{pre}vlayout"] = "plain"
            if f"{pre}impl" in prog.space:
                vendor = flops >= VENDOR_MIN_FLOPS
                params[f"{pre}impl"] = "vendor" if vendor else "kernel"
                prog.notes.append(
                    f"g{gi} conv {list(c.shape)}: implementation space "
                    + ("vendor_library (oneDNN through torch; activation as a post-op where "
                       "it fuses, else our epilogue kernel): the "
                       f"contract allows it and {flops / 1e6:.1f} MFLOP is past the "
                       f"{VENDOR_MIN_FLOPS / 1e6:.1f} MFLOP where the library wins"
                       if vendor else "custom_kernel: too small for a library call to pay off"))
            if f"{pre}wg" in prog.space:
                params[f"{pre}wg"] = 64
        elif grp.kind == "scan" and f"{pre}wg" in prog.space:
            params[f"{pre}wg"] = 16
        elif grp.kind == "attention":
            if f"{pre}impl" in prog.space:
                params[f"{pre}impl"] = "kernel"  # the planner times torch's own beside it
            if f"{pre}wg" in prog.space:  # a work-group's rows: no idle lanes on short ones
                params[f"{pre}wg"] = _pow2_at_most(grp.main[0].lq, 64)
        for p, v in codegen_for(prog.backend).group_defaults(grp).items():
            if pre + p in prog.space and pre + p not in params:
                params[pre + p] = v
    return params


def _pow2_at_most(n: int, cap: int) -> int:
    p = 16
    while p * 2 <= min(n, cap):
        p *= 2
    return p if n >= 16 else 16
