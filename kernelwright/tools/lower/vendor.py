"""The vendor implementation space for GEMM anchors: a BLAS call, then our epilogue kernel.

On the CPU device the BLAS that wins is the host's (numpy's OpenBLAS on the same memory, zero
copy; see notes/lowering.md), not oneMKL through a SYCL queue. The operands are passed as
strided views of our buffers: each operand's index map is probed, and when it is a single
affine load of a buffer (a transpose, a batch of matrices, a slice) its strides are used
directly; otherwise the operand is a buffer the scheduler realized already.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dialect import CPP
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Gemm, Node

VENDOR_DTYPES = (torch.float32, torch.float64)


class _Probe(KernelCtx):
    def load_buffer(self, name: str, node: Node, idx: list[Ix]) -> str:
        from kernelwright.tools.lower.index import linear

        self.loads.append((name, node, linear(idx, node.shape)))
        return f"__probe{len(self.loads)}__"


def strided_view(node: Node, names: dict[int, str]) -> tuple[str, list[int], int] | None:
    """``(buffer, strides, offset)`` when ``node[i] = buffer[offset + sum(strides * i)]``."""
    k = _Probe(CPP, dict(names))
    k.loads = []  # type: ignore[attr-defined]
    probe = [Ix.var(f"__v{d}", s) for d, s in enumerate(node.shape)]
    try:
        out = node.load(k, probe)
    except Exception:
        return None
    loads = k.loads  # type: ignore[attr-defined]
    if len(loads) != 1 or out != "__probe1__" or loads[0][1].dtype != node.dtype:
        return None
    name, _, flat = loads[0]
    coefs = dict(flat.terms)
    if set(coefs) - {f"__v{d}" for d in range(len(node.shape))}:
        return None
    strides = [coefs.get(f"__v{d}", 0) for d in range(len(node.shape))]
    return name, strides, flat.const


@dataclass
class VendorStep:
    """``out = a @ b`` through the host BLAS; looks like a kernel to the plan builder."""

    name: str
    gemm: Gemm
    a: tuple[str, list[int], int]
    b: tuple[str, list[int], int]
    out: str
    args: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    units: int = 0
    local: int = 1
    cooperative: bool = False
    text: str = ""

    def step(self) -> dict[str, Any]:
        g = self.gemm
        a_shape = list(g.batch) + [g.m, g.kdim]
        b_shape = list(g.batch) + [g.kdim, g.n]
        return {"vendor": "matmul", "name": self.name,
                "a": [self.a[0], a_shape, self.a[1], self.a[2]],
                "b": [self.b[0], b_shape, self.b[1], self.b[2]],
                "out": [self.out, list(g.shape)]}


def vendor_step(gemm: Gemm, names: dict[int, str], name: str) -> VendorStep | None:
    """A BLAS step for ``gemm`` when its operands are strided buffer views, else None."""
    if gemm.dtype not in VENDOR_DTYPES or gemm.operands is None or gemm.id not in names:
        return None
    a = strided_view(gemm.operands[0], names)
    b = strided_view(gemm.operands[1], names)
    if a is None or b is None:
        return None
    out = names[gemm.id]
    step = VendorStep(name, gemm, a, b, out, args=[a[0], b[0], out])
    step.info = {"kind": "vendor_gemm", "nodes": [gemm.name], "reads": [a[0], b[0]]}
    return step


def run_vendor(step: dict[str, Any], t: dict[str, torch.Tensor]) -> None:
    """Execute a plan's vendor step on the buffers ``t`` (numpy matmul, zero copy)."""
    import numpy as np

    def view(spec):
        name, shape, strides, offset = spec
        base = t[name]
        return torch.as_strided(base, shape, strides, offset).numpy()

    out_name, shape = step["out"]
    out = t[out_name].view(shape).numpy()
    np.matmul(view(step["a"]), view(step["b"]), out=out)
