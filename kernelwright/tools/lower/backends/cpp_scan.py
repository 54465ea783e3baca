"""C++ scans (cumsum/cumprod along one dim): one line per unit, or a blocked parallel scan.

``scan_block`` 0: each unit walks its line with one running value (the earlier form).
``scan_block`` B > 0: each line is cut into blocks of B; the blocks' totals are reduced
(vectorised, in parallel over blocks when the kernel has a single line and the team is
allowed), an exclusive prefix over the totals gives each block's offset, then every block
scans from its offset in parallel and writes its elements and the epilogue. The input is read
twice; the running values are doubles for float data, as in the line form.
"""

from __future__ import annotations

import math

from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dtypes import literal
from kernelwright.tools.lower.emit.common import finish_element, index_vars
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Scan
from kernelwright.tools.lower.schedule import Group

SCAN_BLOCKS = [0, 1024, 4096]


def blocked_scan_cpp(k: KernelCtx, grp: Group, names: dict[int, str], unit: str, block: int,
                     team: bool) -> int:
    s: Scan = grp.main[0]  # type: ignore[assignment]
    shape = tuple(s.shape)
    lines = tuple(x for d, x in enumerate(shape) if d != s.dim)
    n = math.prod(lines)
    L = shape[s.dim]
    nb = -(-L // block)
    outer = index_vars(k, Ix.atom(unit, (0, max(0, n - 1))), lines, "o")
    acc_t = "double" if s.ctype == "float" else s.ctype
    op = "+" if s.op == "sum" else "*"
    unit_v = literal(0 if s.op == "sum" else 1, s.dtype)
    par = "#pragma omp parallel for schedule(static)" if team and n == 1 else ""
    tot = k.fresh("stot")
    k.emit(f"{acc_t} {tot}[{nb}];")
    b, lo, hi, j = k.fresh("sblk"), k.fresh("slo"), k.fresh("shi"), k.fresh("sj")

    def bounds():
        k.emit(f"const int {lo} = {b} * {block};")
        k.emit(f"const int {hi} = {lo} + {block} < {L} ? {lo} + {block} : {L};")

    def element():
        idx = outer[:s.dim] + [Ix.atom(j, (0, L - 1))] + outer[s.dim:]
        assert s.body is not None
        return idx, s.body(k, idx)

    if par:
        k.emit(par)
    with k.block(f"for (int {b} = 0; {b} < {nb}; ++{b})"):
        bounds()
        a = k.var(acc_t, unit_v)
        if k.simd:
            k.emit(f"#pragma omp simd reduction({op}:{a})")
        with k.block(f"for (int {j} = {lo}; {j} < {hi}; ++{j})"):
            _, v = element()
            k.emit(f"{a} {op}= ({acc_t}){v};")
        k.emit(f"{tot}[{b}] = {a};")
    run = k.var(acc_t, unit_v)
    with k.block(f"for (int {b} = 0; {b} < {nb}; ++{b})"):  # exclusive prefix of the totals
        t = k.let(f"{tot}[{b}]", acc_t)
        k.emit(f"{tot}[{b}] = {run};")
        k.emit(f"{run} {op}= {t};")
    if par:
        k.emit(par)
    with k.block(f"for (int {b} = 0; {b} < {nb}; ++{b})"):
        bounds()
        a = k.var(acc_t, f"{tot}[{b}]")
        with k.block(f"for (int {j} = {lo}; {j} < {hi}; ++{j})"):
            idx, v = element()
            k.emit(f"{a} {op}= {v};")
            cur = k.let(f"({s.ctype}){a}" if acc_t != s.ctype else a, s.ctype)
            finish_element(k, grp, names, idx, cur)
    return n
