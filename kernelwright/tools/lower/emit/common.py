"""What every kernel body shares: the emitted kernel, index variables, epilogue writes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dtypes import storage_type
from kernelwright.tools.lower.index import Ix, linear, unravel
from kernelwright.tools.lower.ir import Node
from kernelwright.tools.lower.schedule import Group


@dataclass
class KernelSource:
    """One emitted kernel: its text, arguments (buffer names) and launch shape."""

    name: str
    text: str
    args: list[str]
    units: int  # work-items (SYCL/CUDA global size before rounding)
    local: int  # work-group size (1 for C++)
    cooperative: bool = False
    info: dict[str, Any] = field(default_factory=dict)


def new_ctx(target: Any, real: dict[int, str], grp: Group, idx_type: str) -> KernelCtx:
    """A kernel context for ``grp`` emitted by the codegen ``target``."""
    k = KernelCtx(target.dialect,
                  {i: n for i, n in real.items() if i not in {x.id for x in grp.nodes}},
                  idx_type=idx_type)
    k.layouts = dict(getattr(real, "layouts", {}))
    k.owned = {x.id for x in grp.nodes}
    k.depth = target.body_depth
    k.simd = target.simd_loops
    k.target = target
    return k


def index_vars(k: KernelCtx, flat: Ix, shape: tuple[int, ...], prefix: str) -> list[Ix]:
    """Declare the multi-index of ``flat`` in ``shape`` as named atoms with ranges."""
    out = []
    for j, e in enumerate(unravel(flat, shape)):
        if e.is_const:
            out.append(e)
            continue
        name = f"{prefix}{j}"
        k.emit(f"const {k.idx_type} {name} = {e.render()};")
        out.append(Ix.atom(name, (0, shape[j] - 1)))
    return out


def store_node(k: KernelCtx, node: Node, names: dict[int, str], idx: list[Ix],
               value: str) -> None:
    if node.id in names:
        k.store(names[node.id], node, idx, value)


def write_epilogue(k: KernelCtx, anchor_shape, anchor_idx: list[Ix], nodes: list[Node],
                   names: dict[int, str]) -> None:
    flat = linear(anchor_idx, anchor_shape)
    for e in nodes:
        idx = anchor_idx if tuple(e.shape) == tuple(anchor_shape) else unravel(flat, e.shape)
        v = e.load(k, idx)
        k.bind(e, e.key(idx), v)
        store_node(k, e, names, idx, v)


def finish_element(k: KernelCtx, grp: Group, names: dict[int, str], idx: list[Ix],
                   value: str) -> None:
    """An anchor's (GEMM, convolution, scan) element is done: bind its register, store it
    when it has a buffer, and write the epilogue at its index."""
    node = grp.main[0]
    k.bind(node, idx, value)
    store_node(k, node, names, idx, value)
    write_epilogue(k, node.shape, idx, grp.epilogue, names)


def signature(k: KernelCtx) -> tuple[list[str], str]:
    args, decls = [], []
    for name, (node, mode) in k.buffers.items():
        st = storage_type(node.dtype)
        const = "const " if mode == "r" else ""
        args.append(name)
        decls.append(f"{const}{st}* __restrict__ {name}")
    return args, ", ".join(decls)


def kernel_info(grp: Group, k: KernelCtx) -> dict:
    """What a kernel source records of its group: kind, nodes and the buffers it reads."""
    return {"kind": grp.kind, "nodes": [n.name for n in grp.nodes],
            "reads": sorted(nm for nm, (_, mode) in k.buffers.items() if mode == "r")}


def work_of(grp: Group) -> int:
    """Rough element operations of a group's kernel (for the C++ parallel threshold)."""
    node = grp.main[0]
    if grp.kind == "rows":
        src = math.prod(node.src_shape)  # type: ignore[attr-defined]
        return src * (len(grp.main) + (1 if grp.epilogue else 0))
    # multiply-adds are vectorised 8-16 at a time: count them per vector, so a small GEMM
    # (gemm_4d_batched: 0.4 M multiply-adds) stays on one thread
    if grp.kind == "gemm":
        return node.numel * node.kdim // 16  # type: ignore[attr-defined]
    if grp.kind in ("conv", "attention"):
        return node.numel * max(1, node.cost) // 16
    return node.numel * max(1, min(node.cost, 64))
