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
from kernelwright.tools.lower.ir import Conv, Gemm, Node

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


@dataclass
class VendorConv(VendorStep):
    """A convolution through torch's oneDNN/MKL path, written into our buffer."""

    conv: Conv | None = None
    bias: tuple[str, list[int], int] | None = None

    def step(self) -> dict[str, Any]:
        c = self.conv
        assert c is not None
        x, w = c.x, c.w
        nd = len(x.shape) - 2
        extra = []
        if c.transposed:
            for d in range(nd):
                base = ((x.shape[2 + d] - 1) * c.stride[d] - 2 * c.padding[d]
                        + c.dilation[d] * (w.shape[2 + d] - 1) + 1)
                extra.append(c.shape[2 + d] - base)
        return {"vendor": "conv", "name": self.name,
                "x": [self.a[0], list(x.shape), self.a[1], self.a[2]],
                "w": [self.b[0], list(w.shape), self.b[1], self.b[2]],
                "bias": None if self.bias is None else [self.bias[0], [c.shape[1]],
                                                        self.bias[1], self.bias[2]],
                "stride": list(c.stride), "padding": list(c.padding),
                "dilation": list(c.dilation), "groups": c.groups,
                "transposed": c.transposed, "output_padding": extra,
                "out": [self.out, list(c.shape)]}


def vendor_conv(conv: Conv, names: dict[int, str], name: str) -> VendorConv | None:
    if conv.dtype not in VENDOR_DTYPES or conv.id not in names:
        return None
    x = strided_view(conv.x, names)
    w = strided_view(conv.w, names)
    bias = strided_view(conv.bias, names) if conv.bias is not None else None
    if x is None or w is None or (conv.bias is not None and bias is None):
        return None
    out = names[conv.id]
    reads = [x[0], w[0]] + ([bias[0]] if bias else [])
    step = VendorConv(name, None, x, w, out, args=reads + [out],  # type: ignore[arg-type]
                      conv=conv, bias=bias)
    step.info = {"kind": "vendor_conv", "nodes": [conv.name], "reads": reads}
    return step


def _conv(step: dict[str, Any], t: dict[str, torch.Tensor]) -> None:
    from torch.nn import functional as F

    def view(spec):
        name, shape, strides, offset = spec
        return torch.as_strided(t[name], shape, strides, offset)

    x, w = view(step["x"]), view(step["w"])
    b = view(step["bias"]) if step["bias"] is not None else None
    nd = x.dim() - 2
    if step["transposed"]:
        fn = getattr(F, f"conv_transpose{nd}d")
        y = fn(x, w, b, step["stride"], step["padding"], step["output_padding"],
               step["groups"], step["dilation"])
    else:
        fn = getattr(F, f"conv{nd}d")
        y = fn(x, w, b, step["stride"], step["padding"], step["dilation"], step["groups"])
    out_name, shape = step["out"]
    t[out_name].view(shape).copy_(y)


def run_vendor(step: dict[str, Any], t: dict[str, torch.Tensor]) -> None:
    """Execute a plan's vendor step on the buffers ``t`` (BLAS matmul on zero-copy numpy
    views; convolution through torch's oneDNN path)."""
    import numpy as np

    if step["vendor"] == "conv":
        _conv(step, t)
        return

    def view(spec):
        name, shape, strides, offset = spec
        base = t[name]
        return torch.as_strided(base, shape, strides, offset).numpy()

    out_name, shape = step["out"]
    out = t[out_name].view(shape).numpy()
    np.matmul(view(step["a"]), view(step["b"]), out=out)
