"""Control-flow graph of a kernel and the reconvergence point of every branch.

A divergent branch reconverges at the immediate post-dominator of its basic block: the first
block every path from the branch to the exit must pass through (ipdom(b) = the post-dominator
of b dominated by all its other strict post-dominators). Post-dominators are computed by the
iterative data-flow rule pdom(b) = {b} U (intersection of pdom(s) over successors s).
"""

from __future__ import annotations

from kernelwright.tools.gpusim.ptx import Kernel


def basic_blocks(kernel: Kernel) -> tuple[list[int], dict[int, list[int]]]:
    """Block leader instruction indices and each block's successor blocks (-1 = exit)."""
    ins = kernel.instructions
    n = len(ins)
    leaders = {0} | set(kernel.labels.values())
    for i, x in enumerate(ins):
        if x.base in ("bra", "ret", "exit") and i + 1 < n:
            leaders.add(i + 1)
    starts = sorted(s for s in leaders if s < n)
    block_of = {s: k for k, s in enumerate(starts)}
    succ: dict[int, list[int]] = {}
    for k in range(len(starts)):
        end = starts[k + 1] if k + 1 < len(starts) else n
        last = ins[end - 1]
        out: list[int] = []
        if last.base == "bra":
            out.append(block_of.get(kernel.labels[last.operands[-1].name], -1))
        if last.base in ("ret", "exit") and last.pred is None:
            out.append(-1)
        elif not (last.base == "bra" and last.pred is None):
            out.append(block_of[end] if end < n else -1)
            if last.base in ("ret", "exit"):
                out.append(-1)
        succ[k] = out
    return starts, succ


def reconvergence_points(kernel: Kernel) -> dict[int, int]:
    """For each branch instruction index, the instruction index where its paths reconverge.

    ``len(kernel.instructions)`` stands for "at kernel exit" (no reconvergence before exit).
    """
    starts, succ = basic_blocks(kernel)
    nb = len(starts)
    exit_node = nb
    every = frozenset(range(nb + 1))
    pdom = {b: every for b in range(nb)}
    pdom[exit_node] = frozenset({exit_node})
    changed = True
    while changed:
        changed = False
        for b in reversed(range(nb)):
            ss = [exit_node if s < 0 else s for s in succ[b]] or [exit_node]
            new = frozenset({b}).union(frozenset.intersection(*(pdom[s] for s in ss)))
            if new != pdom[b]:
                pdom[b], changed = new, True
    n = len(kernel.instructions)
    out: dict[int, int] = {}
    for k in range(len(starts)):
        end = starts[k + 1] if k + 1 < nb else n
        if kernel.instructions[end - 1].base == "bra":
            ip = _immediate(pdom, k)
            out[end - 1] = n if ip == exit_node else starts[ip]
    return out


def _immediate(pdom: dict[int, frozenset[int]], b: int) -> int:
    strict = pdom[b] - {b}
    # the immediate post-dominator is the strict post-dominator with the largest pdom set
    return max(strict, key=lambda x: len(pdom[x]))
