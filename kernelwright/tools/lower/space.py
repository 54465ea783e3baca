"""Tunable schedule parameters per fusion group and the defaults chosen before any search."""

from __future__ import annotations

from typing import Any

from kernelwright.tools.lower.vendor_fuse import post_ops

CHOICES = {
    "pointwise": {"wg": [64, 128, 256, 512], "ipw": [1, 2, 4, 8]},
    "rows": {"strategy": ["lanes", "subgroup", "item", "group"],
             "wg": [4, 8, 16, 32, 64, 128, 256, 512], "lanes": [4, 8, 16, 32]},
    "scan": {"wg": [16, 64, 128]},
    "gemm": {"rm": [1, 2, 4, 8], "rn": [1, 2, 4, 8], "wg": [16, 64, 128, 256]},
    "conv": {"ocb": [1, 2, 4, 8], "wg": [16, 64, 128, 256]},
}


# C++ GEMM tiles: columns are an OpenMP simd loop, so wider choices
CPP_CHOICES = {("gemm", "rn"): [4, 8, 16, 32]}
CPP_THREADS = ("auto", "team", "one")
# parameters the C++ emitter does not read (work-groups; pointwise rows are simd loops)
CPP_UNUSED = {"pointwise": ("wg", "ipw"), "rows": ("wg", "strategy", "lanes")}


def group_space(prog, contract) -> dict[str, list[Any]]:
    """``g<i>.<param>`` for every group of the nominal signature."""
    space: dict[str, list[Any]] = {}
    if prog.backend == "sycl":
        space["launch"] = ["chain", "steps"]
    for gi, grp in enumerate(prog.variants[0].sched.groups):
        for p, choices in CHOICES[grp.kind].items():
            if prog.backend == "cpp" and p in CPP_UNUSED.get(grp.kind, ("wg", "strategy")):
                continue
            space[f"g{gi}.{p}"] = list(CPP_CHOICES.get((grp.kind, p), choices)
                                        if prog.backend == "cpp" else choices)
        if prog.backend == "cpp":  # who runs the units: the rule, the OpenMP team, one thread
            space[f"g{gi}.threads"] = list(CPP_THREADS)
        if grp.kind == "gemm" and prog.backend == "cpp":
            space[f"g{gi}.form"] = ["auto", "nvec", "kdot"]
        if grp.kind == "conv" and prog.backend == "cpp" and not grp.main[0].transposed:
            space[f"g{gi}.pw"] = [8, 16, 32]
        if grp.kind in ("gemm", "conv") and vendor_allowed(prog, contract):
            space[f"g{gi}.impl"] = ["kernel", "vendor"]
            var = prog.variants[0]
            if post_ops(var.graph, var.sched, grp) is not None:  # oneDNN post-ops or BLAS +
                space[f"g{gi}.vform"] = ["fused", "blas"]  # our epilogue kernel
    return space


def vendor_allowed(prog, contract) -> bool:
    return (contract is not None and contract.allows("vendor_library")
            and prog.backend in ("sycl", "cpp"))


VENDOR_MIN_FLOPS = 2 * 64**3


def choose_defaults(prog, contract) -> dict[str, Any]:
    """Heuristic starting point: row groups cooperate when rows are long and few."""
    params: dict[str, Any] = {}
    if "launch" in prog.space:
        params["launch"] = "chain"
    for gi, grp in enumerate(prog.variants[0].sched.groups):
        pre = f"g{gi}."
        if f"{pre}threads" in prog.space:
            params[f"{pre}threads"] = "auto"
        if grp.kind == "rows":
            dom = grp.domain
            if f"{pre}strategy" in prog.space:
                # the reduced dims end with the source's last (contiguous) dim: one work-item
                # per row, lanes along the row, work-groups of 8 (below the device's 16-wide
                # implicit vectoriser, which would put rows in lanes and gather); otherwise
                # one work-item per row in groups of 64, whose lanes are then neighbouring
                # (contiguous) outer positions.
                last = len(dom.src_shape) - 1
                # float accumulators only: a work-group of 8 with double sums (rows past
                # 4096 floats) crashes the device compiler's loop vectoriser
                lanes = (dom.red_dims and dom.red_dims[-1] == last
                         and dom.src_shape[last] >= 16
                         and all(r.acc_ctype() == "float" for r in grp.main))
                rows, length = dom.numel, dom.red_numel
                coop = not lanes and length >= 64 and rows < 4096  # the earlier default
                params[f"{pre}strategy"] = "lanes" if lanes else ("group" if coop else "item")
                params[f"{pre}wg"] = 8 if lanes else (_pow2_at_most(length, 256) if coop
                                                      else 64)
                params[f"{pre}lanes"] = 16
        elif grp.kind == "pointwise":
            if f"{pre}wg" in prog.space:
                params[f"{pre}wg"] = 256
            if f"{pre}ipw" in prog.space:
                params[f"{pre}ipw"] = 1
        elif grp.kind == "gemm":
            if prog.backend == "cpp":  # see emit.gemm_body_cpp
                params[f"{pre}rm"], params[f"{pre}rn"] = 4, 16
                params[f"{pre}form"] = "auto"
            else:
                params[f"{pre}rm"], params[f"{pre}rn"] = 8, 1
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
            c = grp.main[0]
            flops = 2 * c.numel * c.cost
            if f"{pre}vform" in prog.space:
                params[f"{pre}vform"] = "fused"
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
    return params


def _pow2_at_most(n: int, cap: int) -> int:
    p = 16
    while p * 2 <= min(n, cap):
        p *= 2
    return p if n >= 16 else 16
