"""C++/OpenMP: units of work are iterations of an OpenMP ``parallel for``; rows, pointwise
rows, GEMM columns and convolution positions are OpenMP ``simd`` loops."""

from __future__ import annotations

import itertools
import math
from typing import Any

from kernelwright.tools.lower.backends.base import CHOICES, Codegen, register
from kernelwright.tools.lower.backends.cpp_attention import (
    ATTENTION_CHOICES,
    attention_body_cpp,
    attention_defaults,
)
from kernelwright.tools.lower.backends.cpp_columns import default_column
from kernelwright.tools.lower.backends.cpp_conv import conv_body_cpp
from kernelwright.tools.lower.backends.cpp_gemm import gemm_body_cpp
from kernelwright.tools.lower.backends.cpp_packed import packed_gemm_cpp, uses_packed
from kernelwright.tools.lower.backends.cpp_rows import (
    ROW_DEFAULTS,
    RowPlan,
    cpp_rows_body,
    row_space,
)
from kernelwright.tools.lower.backends.cpp_scan import (
    SCAN_BLOCKS,
    SCAN_LINES,
    blocked_scan_cpp,
    default_scan_lines,
    lockstep_scan_cpp,
)
from kernelwright.tools.lower.codegen import KernelCtx
from kernelwright.tools.lower.dialect import CPP
from kernelwright.tools.lower.emit.common import (
    KernelSource,
    index_vars,
    new_ctx,
    signature,
    work_of,
)
from kernelwright.tools.lower.emit.pointwise import write_element
from kernelwright.tools.lower.emit.rows import StashMismatch
from kernelwright.tools.lower.index import Ix
from kernelwright.tools.lower.ir import Node
from kernelwright.tools.lower.microkernels.lowered import gemm_choices
from kernelwright.tools.lower.schedule import Group

# C++: below this many elements of work a kernel runs on the calling thread (waking the
# OpenMP team costs more than it saves; torch's own grain size is 32768 too)
PARALLEL_GRAIN = 32768
# the threshold is tunable per group (``grain``): these are its choices
GRAIN_CHOICES = [8192, PARALLEL_GRAIN, 131072]
SIMDLEN_CHOICES = [0, 8, 16]  # pointwise rows: the simd loop's simdlen clause (0: none)
# GEMM tiles: columns are an OpenMP simd loop, so wider choices
CPP_CHOICES = {("gemm", "rn"): [4, 8, 16, 32]}
CPP_THREADS = ("auto", "team", "one")
# parameters the C++ emitters do not read (work-groups; pointwise rows are simd loops)
CPP_UNUSED = {"pointwise": ("wg", "ipw"), "rows": ("wg", "strategy", "lanes")}


@register
class CppCodegen(Codegen):
    name = "cpp"
    dialect = CPP
    # -fno-trapping-math lets g++ if-convert (and so vectorise) loops whose selects guard
    # float arithmetic, such as the prelude's kw_expf; -fno-math-errno lets it vectorise
    # loops that call sqrt (batch and group norms: "control flow in loop" otherwise, as the
    # branch to libm sets errno for a negative argument). Results are unchanged: only FP
    # exception flags and errno, which no kernel reads (benchmarks/vector_audit.py).
    compile_options = ("-fno-trapping-math", "-fno-math-errno")
    vendor_library = True  # host BLAS / oneDNN through torch
    body_depth = 2
    simd_loops = True
    shares_kernels = True
    launch_offsets = True  # CppChain
    cooperative_rows = False  # one thread per row; the row is a simd loop
    gemm_tile = (4, 16)

    # -- emission --------------------------------------------------------------------------

    def emit_group(self, grp: Group, real: dict[int, str], names: dict[int, str],
                   params: dict[str, Any], idx_type: str = "int") -> KernelSource:
        if uses_packed(grp, params):
            return packed_gemm_cpp(new_ctx(self, real, grp, idx_type), grp, names, params)
        self._grain = int(params.get("grain", PARALLEL_GRAIN))
        return super().emit_group(grp, real, names, params, idx_type)

    def _team(self, threads: str, work: int | None) -> bool:
        """Whether a kernel of ``work`` element operations runs on the OpenMP team."""
        grain = getattr(self, "_grain", PARALLEL_GRAIN)
        return {"team": True, "one": False}.get(threads, work is None or work >= grain)

    def _emit_rows(self, grp: Group, real: dict[int, str], names: dict[int, str],
                   params: dict[str, Any], idx_type: str, wg: int):
        team = self._team(str(params.get("threads", "auto")), work_of(grp))

        def attempt(stash: bool) -> tuple[KernelCtx, int]:
            k = new_ctx(self, real, grp, idx_type)
            return k, cpp_rows_body(k, grp, names, "u", RowPlan(params, team), stash=stash)

        try:
            k, units = attempt(True)
        except StashMismatch:  # the epilogue reads the stash at another index: no stash
            k, units = attempt(False)
        return k, units, False, wg

    def rows_layout(self, strategy: str, params: dict[str, Any], wg: int
                    ) -> tuple[bool, int, bool, int]:
        return False, 0, False, wg

    def emit_pointwise(self, k: KernelCtx, grp: Group, names: dict[int, str],
                       params: dict[str, Any]) -> int:
        node = grp.main[0]
        if node.shape and node.shape[-1] >= 8:
            return pointwise_rows_cpp(k, node, names, "u", int(params.get("simdlen", 0)))
        return super().emit_pointwise(k, grp, names, params)

    def emit_scan(self, k: KernelCtx, grp: Group, names: dict[int, str],
                  params: dict[str, Any]) -> int:
        team = self._team(str(params.get("threads", "auto")), work_of(grp))
        block = int(params.get("scan_block", 0))
        if block <= 0:
            return lockstep_scan_cpp(k, grp, names, "u", int(params.get("scan_lines", 1)))
        return blocked_scan_cpp(k, grp, names, "u", block, team)

    def emit_gemm(self, k: KernelCtx, grp: Group, names: dict[int, str],
                  params: dict[str, Any]) -> int:
        return gemm_body_cpp(k, grp, names, "u", int(params.get("rm", 4)),
                             int(params.get("rn", 16)), str(params.get("form", "auto")))

    def emit_conv(self, k: KernelCtx, grp: Group, names: dict[int, str],
                  params: dict[str, Any]) -> int:
        if grp.main[0].transposed:  # type: ignore[attr-defined]
            return super().emit_conv(k, grp, names, params)
        return conv_body_cpp(k, grp, names, "u", int(params.get("ocb", 4)),
                             int(params.get("pw", 16)))

    def emit_attention(self, k: KernelCtx, grp: Group, names: dict[int, str],
                       params: dict[str, Any]) -> int:
        return attention_body_cpp(k, grp, names, "u", int(params.get("br", 8)),
                                  int(params.get("bc", 64)))

    def wrap(self, name: str, k: KernelCtx, units: int, wg: int, cooperative: bool,
             work: int | None = None, threads: str = "auto") -> KernelSource:
        """``threads``: ``auto`` runs the units on the OpenMP team when the work reaches
        ``PARALLEL_GRAIN``, ``team`` always, ``one`` never."""
        args, decl = signature(k)
        body = "\n".join(k.lines)
        team = self._team(threads, work)
        par = "#pragma omp parallel for schedule(static)\n" if units > 1 and team else ""
        text = (f'extern "C" void {name}({decl}) {{\n'
                f"{par}"
                f"  for (int u = 0; u < {units}; ++u) {{\n{body}\n  }}\n}}\n")
        return KernelSource(name, text, args, units, 1)

    # -- schedule space --------------------------------------------------------------------

    def group_space(self, grp: Group) -> dict[str, list[Any]]:
        space = {p: list(CPP_CHOICES.get((grp.kind, p), c))
                 for p, c in CHOICES[grp.kind].items()
                 if p not in CPP_UNUSED.get(grp.kind, ("wg", "strategy"))}
        space["threads"] = list(CPP_THREADS)  # the rule, the OpenMP team, one thread
        if grp.kind in ("rows", "pointwise", "scan"):
            space["grain"] = list(GRAIN_CHOICES)  # the rule's threshold
        if grp.kind == "rows":
            space.update(row_space(grp))
        if grp.kind == "pointwise":
            space["simdlen"] = list(SIMDLEN_CHOICES)
        if grp.kind == "scan":
            space["scan_block"] = list(SCAN_BLOCKS)  # 0: lines per unit; else blocked
            space["scan_lines"] = list(SCAN_LINES)  # lines walked side by side (block 0)
        if grp.kind == "gemm":
            space["form"] = ["auto", "nvec", "kdot"]
            space.update(gemm_choices())  # the packed micro-kernel: algo and its blocking
        if grp.kind == "conv":
            if not grp.main[0].transposed:  # type: ignore[attr-defined]
                space["pw"] = [8, 16, 32]  # the row-vectorised direct kernel's tile
            space.update(gemm_choices())
            space["algo"] = ["gemm", "direct"]
        if grp.kind == "attention":
            space.update({p: list(c) for p, c in ATTENTION_CHOICES.items()})
        return space

    def group_defaults(self, grp: Group) -> dict[str, Any]:
        out: dict[str, Any] = {"grain": PARALLEL_GRAIN, "simdlen": 0}
        if grp.kind == "rows":
            out.update(ROW_DEFAULTS, column=default_column(grp))
        if grp.kind == "attention":
            out.update(attention_defaults(grp.main[0]))  # type: ignore[arg-type]
        if grp.kind == "scan":
            # blocked only where it buys threads: a single long line on the team
            s = grp.main[0]
            single = s.numel == s.shape[s.dim] >= 2 * SCAN_BLOCKS[-1]  # type: ignore[attr-defined]
            out["scan_block"] = SCAN_BLOCKS[-1] if single and work_of(grp) >= PARALLEL_GRAIN \
                else 0
            out["scan_lines"] = default_scan_lines(s)  # type: ignore[arg-type]
        return out

    # -- runtime ---------------------------------------------------------------------------

    asynchronous = False  # a C call returns when the kernel is done

    def prepared(self, owner: Any, plan: dict[str, Any]):
        """One ctypes call per kernel, slots resolved once; library steps between them."""
        from kernelwright.tools.lower.chains import CppChain

        return CppChain(owner, plan)


def pointwise_rows_cpp(k: KernelCtx, node: Node, names: dict[int, str], u: str,
                       simdlen: int = 0) -> int:
    """A unit is a row (or a chunk of one) of the last dim, an OpenMP simd loop, so index
    math is affine in the loop variable and contiguous operands load as vectors. Few long
    rows are cut into chunks so that every thread gets work."""
    lanes = permuted_lane_dim(k, node)
    if lanes is not None:
        return _permuted_lanes(k, node, names, u, lanes, simdlen)
    cols = node.shape[-1]
    rows = node.numel // cols
    nchunk = 1 if rows >= 32 else max(1, min(-(-cols // 256), -(-32 // rows)))
    ch = -(-cols // nchunk)
    if nchunk == 1:
        k.emit(f"const {k.idx_type} row = {u};")
        lo, hi = "0", str(cols)
    else:
        k.emit(f"const {k.idx_type} row = {u} / {nchunk};")
        k.emit(f"const {k.idx_type} c0 = {u} % {nchunk} * {ch};")
        k.emit(f"const {k.idx_type} c1 = kw_min(c0 + {ch}, ({k.idx_type}){cols});")
        lo, hi = "c0", "c1"
    outer = index_vars(k, Ix.atom("row", (0, rows - 1)), tuple(node.shape[:-1]), "i")
    # loops as (first, end, the range of j they cover); a windowed node's row is cut into
    # border, interior and border, so that the interior's body knows it needs no clamps
    inner = getattr(node, "interior", None)
    if nchunk == 1 and inner is not None:
        cuts = [0, inner[0], inner[1] + 1, cols]
        loops = [(a, b, (a, b - 1)) for a, b in itertools.pairwise(cuts) if a < b]
    else:
        loops = [(lo, hi, (0, cols - 1))]
    for first, end, rng in loops:
        k.emit("#pragma omp simd" + (f" simdlen({simdlen})" if simdlen else ""))
        with k.block(f"for ({k.idx_type} j = {first}; j < {end}; ++j)"):
            write_element(k, node, names, outer + [Ix.atom("j", rng)])
    return rows * nchunk


PERMUTED_LANES_MAX = 64  # the lane dim is a simd loop inside the loop over the last dim


def permuted_lane_dim(k: KernelCtx, node: Node) -> int | None:
    """The dim to run as the simd lanes instead of the last: the innermost dim of an operand
    of the node's shape stored permuted (a library convolution's channels-last result),
    when that dim is short. Along the last dim such an operand is read a channel stride
    apart (a gather, each element on its own cache line); along its innermost dim it is
    read contiguously and the node's own row-major stores are the ones scattered."""
    if len(node.shape) < 3 or getattr(node, "interior", None) is not None \
            or names_layout(k, node) is not None:
        return None
    stack, seen = list(node.deps), set()
    while stack:  # the buffers read, through the pointwise steps computed inline
        dep = stack.pop()
        if dep.id in seen:
            continue
        seen.add(dep.id)
        if dep.id not in k.realized:
            stack.extend(dep.deps if dep.kind == "pointwise" else ())
            continue
        order = names_layout(k, dep)
        if order is not None and tuple(dep.shape) == tuple(node.shape) \
                and order[-1] != len(node.shape) - 1 \
                and node.shape[order[-1]] <= PERMUTED_LANES_MAX:
            return order[-1]
    return None


def names_layout(k: KernelCtx, node: Node) -> tuple[int, ...] | None:
    name = k.realized.get(node.id)
    return None if name is None else k.layouts.get(name)


def _permuted_lanes(k: KernelCtx, node: Node, names: dict[int, str], u: str, lane: int,
                    simdlen: int) -> int:
    """A unit is every index but the lane dim and the last; inside, a loop over the last dim
    around a simd loop over the lane dim. A ConvTranspose2d's GELU epilogue over a
    channels-last result (KernelBench l2_93, 16 channels, compiled by hand, 2 threads): 2.2 ms
    along the last dim, 1.3 ms with the channels as lanes."""
    shape = tuple(node.shape)
    last = len(shape) - 1
    outer_dims = [d for d in range(len(shape)) if d not in (lane, last)]
    units = math.prod(shape[d] for d in outer_dims)
    outer = index_vars(k, Ix.atom(u, (0, units - 1)), tuple(shape[d] for d in outer_dims), "i")
    by_dim = dict(zip(outer_dims, outer, strict=True))
    with k.block(f"for ({k.idx_type} j = 0; j < {shape[last]}; ++j)"):
        k.emit("#pragma omp simd" + (f" simdlen({simdlen})" if simdlen else ""))
        with k.block(f"for ({k.idx_type} v = 0; v < {shape[lane]}; ++v)"):
            by_dim[lane] = Ix.atom("v", (0, shape[lane] - 1))
            by_dim[last] = Ix.atom("j", (0, shape[last] - 1))
            write_element(k, node, names, [by_dim[d] for d in range(len(shape))])
    return units
