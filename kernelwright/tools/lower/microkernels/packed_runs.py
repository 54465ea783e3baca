"""Packing a convolution's B panel run by run (``GemmProblem.b_run``): consecutive columns
that read consecutive (or evenly spaced) input elements are copied as a block, with zeros
where a run leaves the input (padding), instead of one gather per element."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kernelwright.tools.lower.microkernels.packed_gemm import GemmProblem

# a B panel of convolution columns packs run by run up to this many runs past its first
RUN_MAX_CUTS = 3


@dataclass(frozen=True)
class PackedRun:
    """One run of a B panel (``GemmProblem.b_run``), as C++ fragments valid inside the run.

    ``inside`` is the run's uniform condition (outer positions, taps): where it is false the
    whole run is zeros. ``whole``: every lane lies inside the source along the stepping
    dimension (the common case, checked first). Otherwise lanes ``[lo, hi)`` do and the rest
    are zeros (padding), so a run that touches the border still packs its interior with
    plain loads. Lane ``kw_l``'s value is ``lane_value`` after ``lane_stmts``, read without
    clamping; ``first`` (after ``first_stmts``) is ``buf[offset]`` of lane ``kw_lo`` where the
    lanes are consecutive elements of a buffer (copied as a block), else None.
    """

    stmts: list[str]
    inside: str
    whole: str
    lo: str
    hi: str
    lane_stmts: list[str]
    lane_value: str
    first_stmts: list[str]
    first: str | None



def run_joined(p: GemmProblem) -> str:
    """The condition under which column ``kw_s`` continues the run of column ``kw_s - 1``
    (``GemmProblem.b_run`` over the ``kw_cv`` arrays)."""
    same, stepping, step = p.b_run
    return " && ".join([*(f"kw_cv{j}[kw_s] == kw_cv{j}[kw_s - 1]" for j in same),
                        f"kw_cv{stepping}[kw_s] == kw_cv{stepping}[kw_s - 1] + {step}"])


def run_piece(run: PackedRun, interior: list[str], zeros) -> list[str]:
    """One run from ``kw_s0`` to ``kw_s1``: ``interior`` over lanes ``[kw_lo, kw_hi)`` inside
    the source, ``zeros(start, stop)`` (lane offsets from ``kw_s0``) where it leaves it."""
    return ["{", *run.stmts, f"if (({run.inside}) && ({run.whole})) {{",
            "const int kw_lo = 0, kw_hi = kw_s1 - kw_s0;", *interior,
            f"}} else if ({run.inside}) {{",  # the run touches padding: zeros at its ends
            f"const int kw_lo = {run.lo};", f"const int kw_hi = {run.hi};",
            zeros("0", "kw_lo"), "if (kw_hi > kw_lo) {", *interior, "}",
            zeros("kw_hi", "kw_s1 - kw_s0"),
            "} else {", zeros("0", "kw_s1 - kw_s0"), "}", "}"]


def pack_b_runs(p: GemmProblem, nr: int, b_of: str, gather: list[str],
                k_loops: list[str]) -> list[str]:
    """A panel of ``b_columns`` cut into its runs (``GemmProblem.b_run``): with at most
    ``RUN_MAX_CUTS`` of them each run is zeros where it leaves the source and plain loads
    (a block copy where contiguous) inside; otherwise (short runs) ``gather`` over the whole
    panel."""
    if p.b_run is None or p.load_b_run is None or not p.k_shape:
        return gather
    ct = p.ctype
    run = p.load_b_run("kw_b", "kw_s0", "kw_s1 - kw_s0")
    dst = f"kw_dst[kw_kk * {nr} + kw_s]"

    def zeros(start: str, stop: str) -> str:
        return (f"for (int kw_s = kw_s0 + {start}; kw_s < kw_s0 + {stop}; ++kw_s) "
                f"{dst} = ({ct})0;")

    if run.first is not None:  # consecutive lanes: whole vectors, then a masked one
        interior = [*run.first_stmts, f"kw_copy_{ct[0]}(kw_dst + kw_kk * {nr} + kw_s0 + kw_lo, "
                    f"&{run.first}, kw_hi - kw_lo);"]
    else:
        interior = ["#pragma omp simd",
                    "for (int kw_s = kw_s0 + kw_lo; kw_s < kw_s0 + kw_hi; ++kw_s) {",
                    "const int kw_l = kw_s - kw_s0;", *run.lane_stmts,
                    f"{dst} = ({ct})({run.lane_value});", "}"]
    runs = ["{", f"const int kw_b = {b_of};", "(void)kw_b;", *k_loops,
            "for (int kw_g = 0; kw_g < kw_nrun; ++kw_g) {",
            "const int kw_s0 = kw_cut[kw_g], kw_s1 = kw_cut[kw_g + 1];",
            *run_piece(run, interior, zeros), "}",
            f"for (int kw_s = kw_nv; kw_s < {nr}; ++kw_s) {dst} = ({ct})0;",
            "}" * len(p.k_shape), "}"]
    return [f"int kw_cut[{nr + 1}];", "int kw_nrun = 0;", "kw_cut[0] = 0;",
            "for (int kw_s = 1; kw_s < kw_nv; ++kw_s) {", f"if ({run_joined(p)}) continue;",
            f"if (kw_nrun == {RUN_MAX_CUTS}) {{ kw_nrun = -1; break; }}",
            "kw_cut[++kw_nrun] = kw_s;", "}",
            "if (kw_nrun >= 0) {", "kw_cut[++kw_nrun] = kw_nv;", *runs, "} else", *gather]
