"""C++ GEMM, or convolution as implicit GEMM, on the packed, cache-blocked micro-kernel of
:mod:`kernelwright.tools.lower.microkernels`: the whole kernel text (its own OpenMP loops), not
units of work for :meth:`Codegen.wrap`."""

from __future__ import annotations

from typing import Any

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.emit.anchor import operand_strides
from kernelwright.tools.lower.emit.common import (
    KernelSource,
    finish_element,
    kernel_info,
    signature,
)
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.microkernels.lowered import lowered_gemm
from kernelwright.tools.lower.microkernels.lowered_conv import lowered_conv
from kernelwright.tools.lower.schedule import Group


def uses_packed(grp: Group, params: dict[str, Any]) -> bool:
    """Whether ``params`` put ``grp`` on the packed micro-kernel."""
    algo = params.get("algo")
    if grp.kind == "gemm":
        return algo == "packed"
    return grp.kind == "conv" and algo == "gemm"


def packed_gemm_cpp(k: KernelCtx, grp: Group, names: dict[int, str],
                    params: dict[str, Any]) -> KernelSource:
    g = grp.main[0]

    def finish(idx: list[Ix], v: str) -> None:
        finish_element(k, grp, names, idx, v)

    helpers, body = (lowered_conv(k, g, params, finish) if grp.kind == "conv"
                     else lowered_gemm(k, g, params, finish, operand_strides))
    args, decl = signature(k)
    text = helpers + f'extern "C" void {grp.name}({decl}) {{\n' + "\n".join(body) + "\n}\n"
    return KernelSource(grp.name, text, args, 1, 1, info=kernel_info(grp, k))
