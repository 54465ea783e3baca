"""A standalone packed GEMM over strided tensors: ``C = epilogue(A @ B)`` as an ``extern "C"``
function, for tests and benchmarks of the micro-kernel outside the lowering.

Example:
    >>> src = strided_gemm_source("mm", (1, 64, 64, 64), (0, 64, 1), (0, 64, 1))
    >>> "extern \\"C\\" void mm(" in src
    True
"""

from __future__ import annotations

from kernelwright.tools.lower.microkernels.isa import Isa, isa_named
from kernelwright.tools.lower.microkernels.packed_gemm import (
    Blocking,
    GemmProblem,
    default_blocking,
    gemm_source,
)


def strided_gemm_source(name: str, shape: tuple[int, int, int, int],
                        a_strides: tuple[int, int, int], b_strides: tuple[int, int, int],
                        ctype: str = "float", epilogue: str = "v",
                        blocking: Blocking | None = None, isa: Isa | None = None) -> str:
    """``void name(const T* A, const T* B, T* C, const T* bias, const T* res)``.

    ``shape`` is (batch, M, N, K); ``a_strides`` (batch, m, k) and ``b_strides`` (batch, k, n)
    in elements (batch stride 0: shared by the batch); C is contiguous ``batch x M x N``.
    ``epilogue`` is a C++ expression of ``v`` (the sum), ``kw_b``, ``kw_m``, ``kw_n``,
    ``bias`` and ``res`` (``res`` indexed like C, e.g. ``v * 2 + res[kw_c]``).
    """
    batch, m, n, k = shape
    isa = isa or isa_named("auto")
    bl = blocking or default_blocking(isa, ctype)
    sab, sam, sak = a_strides
    sbb, sbk, sbn = b_strides

    def load_a(b, i, kk):
        return [], f"A[(size_t){b} * {sab} + (size_t){i} * {sam} + (size_t){kk} * {sak}]"

    def load_b(b, kk, j):
        return [], f"B[(size_t){b} * {sbb} + (size_t){kk} * {sbk} + (size_t){j} * {sbn}]"

    def store(b, i, j, v):
        return [f"const size_t kw_c = ((size_t){b} * {m} + {i}) * {n} + {j};",
                f"const {ctype} v = {v};", f"C[kw_c] = ({ctype})({epilogue});"]

    prob = GemmProblem(batch, m, n, k, ctype, load_a, load_b, store,
                       a_batched=sab != 0 or batch == 1, b_batched=sbb != 0 or batch == 1,
                       a_k_contig=abs(sak) <= abs(sam), b_n_contig=abs(sbn) <= abs(sbk))
    helpers, body = gemm_source(prob, bl)
    t = ctype
    head = (f'extern "C" void {name}(const {t}* __restrict__ A, const {t}* __restrict__ B, '
            f"{t}* __restrict__ C, const {t}* __restrict__ bias, const {t}* __restrict__ res) {{")
    return "#include <cstddef>\n" + helpers + "\n".join([head, "(void)bias; (void)res;",
                                                         *body, "}"]) + "\n"
