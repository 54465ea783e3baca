"""The vendor implementation space for GEMM, convolution and attention anchors.

On the CPU the library is torch's own (oneDNN / MKL, what eager runs), called on zero-copy
views of our buffers. Two forms per anchor (``g<i>.vform``): ``fused`` absorbs the bias and one
activation as oneDNN post-ops (``vendor_fuse``), so the epilogue is not a second pass; ``blas``
is the plain library call followed by our epilogue kernel. The operands are strided views:
each operand's index map is probed, and when it is a single affine load of a buffer (a
transpose, a batch of matrices, a slice) its strides are used directly; otherwise the operand
is a buffer the scheduler realized already.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dialect import CPP
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Attention, Conv, Gemm, Node
from kernelwright.tools.lower.vendor_fuse import FusedEpilogue

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

    fused: FusedEpilogue | None = None
    bias: tuple[str, list[int], int] | None = None
    layout: tuple[int, ...] | None = None  # the output's dims in memory order, if not row-major

    def step(self) -> dict[str, Any]:
        g = self.gemm
        a_shape = list(g.batch) + [g.m, g.kdim]
        b_shape = list(g.batch) + [g.kdim, g.n]
        f = self.fused
        if f is not None:  # oneDNN inner product: W is [N, K], the b operand transposed
            (bn, (sk, sn), bo), n = self.b, g.n
            return {"vendor": "linear", "name": self.name,
                    "x": [self.a[0], a_shape, self.a[1], self.a[2]],
                    "w": [bn, [n, g.kdim], [sn, sk], bo],
                    "bias": None if self.bias is None else [self.bias[0], [n], self.bias[1],
                                                            self.bias[2]],
                    "attr": f.attr, "scalars": list(f.scalars), "algorithm": f.algorithm,
                    "out": [self.out, list(g.shape)]}
        return {"vendor": "matmul", "name": self.name,
                "a": [self.a[0], a_shape, self.a[1], self.a[2]],
                "b": [self.b[0], b_shape, self.b[1], self.b[2]],
                "out": [self.out, list(g.shape)]}


def vendor_step(gemm: Gemm, names: dict[int, str], name: str,
                fused: FusedEpilogue | None = None) -> VendorStep | None:
    """A library step for ``gemm`` when its operands are strided buffer views, else None.

    With ``fused`` the step computes ``fused.end`` (bias and activation as post-ops) into
    ``names[fused.end.id]``, which the caller must have named.
    """
    if gemm.dtype not in VENDOR_DTYPES or gemm.operands is None:
        return None
    a = strided_view(gemm.operands[0], names)
    b = strided_view(gemm.operands[1], names)
    if a is None or b is None:
        return None
    bias = None
    if fused is not None:
        bias = strided_view(fused.bias, names) if fused.bias is not None else None
        if gemm.batch or (fused.bias is not None and bias is None):
            fused = None
    target = fused.end if fused is not None else gemm
    if target.id not in names:
        return None
    out = names[target.id]
    reads = [a[0], b[0]] + ([bias[0]] if fused is not None and bias else [])
    step = VendorStep(name, gemm, a, b, out, args=reads + [out], fused=fused,
                      bias=bias if fused is not None else None)
    nodes = [gemm.name] + ([f"{fused.end.name} ({fused.text})"] if fused else [])
    step.info = {"kind": "vendor_linear" if fused else "vendor_gemm", "nodes": nodes,
                 "reads": reads}
    return step


@dataclass
class VendorConv(VendorStep):
    """A convolution through torch's oneDNN/MKL path, written into our buffer."""

    conv: Conv | None = None

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
                "attr": self.fused.attr if self.fused else "none",
                "scalars": list(self.fused.scalars) if self.fused else [],
                "algorithm": self.fused.algorithm if self.fused else "",
                "channels_last": self.layout is not None,
                "out": [self.out, list(c.shape)]}


def channels_last_order(ndim: int) -> tuple[int, ...]:
    """The memory order of an N, C, spatial... tensor in channels-last form."""
    return (0, *range(2, ndim), 1)


def vendor_conv(conv: Conv, names: dict[int, str], name: str,
                fused: FusedEpilogue | None = None,
                channels_last: bool = False) -> VendorConv | None:
    """A library step for ``conv``; ``channels_last`` runs it on channels-last copies of the
    input and weight (oneDNN's fast layout for few channels) and leaves the result in that
    layout, which the kernels reading it are told (``VendorStep.layout``)."""
    if conv.dtype not in VENDOR_DTYPES:
        return None
    target = fused.end if fused is not None else conv
    if target.id not in names:
        return None
    x = strided_view(conv.x, names)
    w = strided_view(conv.w, names)
    bias = strided_view(conv.bias, names) if conv.bias is not None else None
    if x is None or w is None or (conv.bias is not None and bias is None):
        return None
    out = names[target.id]
    reads = [x[0], w[0]] + ([bias[0]] if bias else [])
    step = VendorConv(name, None, x, w, out, args=reads + [out],  # type: ignore[arg-type]
                      conv=conv, bias=bias, fused=fused,
                      layout=channels_last_order(len(conv.shape)) if channels_last else None)
    nodes = [conv.name] + ([f"{fused.end.name} ({fused.text})"] if fused else [])
    step.info = {"kind": "vendor_conv_channels_last" if channels_last else "vendor_conv",
                 "nodes": nodes, "reads": reads}
    return step


def flash_attention_fits(a: Attention) -> bool:
    """Whether torch's fused CPU attention kernel takes ``a`` as it is: (batch, heads, rows,
    width) operands with the same batch and heads, keys and values of one width."""
    q, k, v = a.deps
    return (len(q.shape) == len(k.shape) == len(v.shape) == 4 and a.d == a.dv
            and tuple(q.shape[:2]) == tuple(k.shape[:2]) == tuple(v.shape[:2]))


@dataclass
class VendorAttention(VendorStep):
    """Attention through torch's own fused CPU kernel (what eager runs for it), on views of
    our buffers (``flash_attention_fits``)."""

    attention: Attention | None = None
    v: tuple[str, list[int], int] | None = None

    def step(self) -> dict[str, Any]:
        a = self.attention
        assert a is not None and self.v is not None
        q, k, v = a.deps
        return {"vendor": "attention", "name": self.name,
                "q": [self.a[0], list(q.shape), self.a[1], self.a[2]],
                "k": [self.b[0], list(k.shape), self.b[1], self.b[2]],
                "v": [self.v[0], list(v.shape), self.v[1], self.v[2]],
                "causal": a.causal, "scale": a.scale, "out": [self.out, list(a.shape)]}


def vendor_attention(a: Attention, names: dict[int, str], name: str,
                     fused: FusedEpilogue | None = None) -> VendorAttention | None:
    """A library step for ``a`` when its operands are strided buffer views, else None
    (``fused`` is ignored: torch's attention kernel takes no post-ops)."""
    if a.dtype not in VENDOR_DTYPES or a.id not in names or not flash_attention_fits(a):
        return None
    views = [strided_view(x, names) for x in a.deps]
    if any(v is None for v in views):
        return None
    q, k, v = views
    assert q is not None and k is not None and v is not None
    reads = [q[0], k[0], v[0]]
    step = VendorAttention(name, None, q, k, names[a.id],  # type: ignore[arg-type]
                           args=reads + [names[a.id]], attention=a, v=v)
    step.info = {"kind": "vendor_attention", "nodes": [a.name], "reads": reads}
    return step


def run_vendor(step: dict[str, Any], t: dict[str, torch.Tensor]) -> None:
    """Execute a plan's vendor step on the named buffers ``t`` (see ``vendor_run``)."""
    from kernelwright.tools.lower.vendor_run import run_vendor as run

    run(step, t)
