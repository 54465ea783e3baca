"""C++ scans (cumsum/cumprod along one dim): lines walked in lockstep, or a blocked parallel scan.

``scan_block`` 0: each unit walks ``scan_lines`` lines side by side, one running value each
(1 is the earlier form). A running value is one add per element, whose latency (4 cycles for a
double) bounds a single line; R independent lines fill the adder's pipeline instead, and where
the lines are neighbours in memory (a scan over a leading dim) each step reads R consecutive
elements. The last unit takes the lines left over when R does not divide their number.
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
SCAN_LINES = [1, 2, 4, 8]


def default_scan_lines(s: Scan) -> int:
    """Lines per unit, keeping at least two units for the team: up to 8 where the lines are
    neighbours in memory (one step reads R consecutive elements), up to 4 where each line is
    its own stream (more streams than that outrun the prefetchers: on l1_89, 128 lines of
    32768, 4 lines ran in 0.96 ms and 8 in 1.17 ms)."""
    lines = s.numel // s.shape[s.dim]
    cap = 8 if math.prod(s.shape[s.dim + 1:]) > 1 else 4
    return max(r for r in SCAN_LINES if r == 1 or (r <= cap and 2 * r <= lines))


def _accumulation(s: Scan) -> tuple[str, str, str]:
    """The running value's type (double for float data, as torch's CPU scans), its operator
    and its start."""
    acc_t = "double" if s.ctype == "float" else s.ctype
    return acc_t, ("+" if s.op == "sum" else "*"), literal(0 if s.op == "sum" else 1, s.dtype)


def lockstep_scan_cpp(k: KernelCtx, grp: Group, names: dict[int, str], unit: str,
                      lines_per_unit: int) -> int:
    """Unit ``u`` scans lines ``u*R .. u*R+R-1`` side by side; returns the number of units."""
    s: Scan = grp.main[0]  # type: ignore[assignment]
    shape = tuple(s.shape)
    line_shape = tuple(x for d, x in enumerate(shape) if d != s.dim)
    n = math.prod(line_shape)
    r = max(1, min(lines_per_unit, n))
    full, left = divmod(n, r)
    acc_t, op, start = _accumulation(s)

    def walk(firsts: list[Ix]) -> None:
        outers = [index_vars(k, f, line_shape, f"o{i}_") for i, f in enumerate(firsts)]
        accs = [k.var(acc_t, start) for _ in outers]
        with k.loop("j", shape[s.dim]) as j:
            for outer, acc in zip(outers, accs, strict=True):
                idx = outer[:s.dim] + [j] + outer[s.dim:]
                assert s.body is not None
                k.emit(f"{acc} {op}= {s.body(k, idx)};")
                cur = k.let(f"({s.ctype}){acc}" if acc_t != s.ctype else acc, s.ctype)
                finish_element(k, grp, names, idx, cur)

    unit_ix = Ix.atom(unit, (0, max(0, full - 1)))
    lockstep = [unit_ix * r + i for i in range(r)]
    if not left:
        walk(lockstep)
        return full
    if full:
        with k.block(f"if ({unit} < {full})"):
            walk(lockstep)
    with k.block(f"if ({unit} == {full})"):
        walk([Ix.c(full * r + i) for i in range(left)])
    return full + 1


def blocked_scan_cpp(k: KernelCtx, grp: Group, names: dict[int, str], unit: str, block: int,
                     team: bool) -> int:
    s: Scan = grp.main[0]  # type: ignore[assignment]
    shape = tuple(s.shape)
    lines = tuple(x for d, x in enumerate(shape) if d != s.dim)
    n = math.prod(lines)
    L = shape[s.dim]
    nb = -(-L // block)
    outer = index_vars(k, Ix.atom(unit, (0, max(0, n - 1))), lines, "o")
    acc_t, op, unit_v = _accumulation(s)
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
