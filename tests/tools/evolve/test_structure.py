"""Lowered schedules land in MAP-Elites cells by their structure (tools/evolve/structure.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from kernelwright.tools.evolve import MapElitesArchive, describe
from kernelwright.tools.evolve.structure import lowered_levels
from kernelwright.tools.lower import lower_task

sys.path.insert(0, str(Path(__file__).parents[1] / "lower"))
from lower_helpers import task  # noqa: E402


def _cells(name: str, backend: str, points: list[dict]) -> set[tuple[int, ...]]:
    prog = lower_task(task(name), backend)
    prog = prog.with_params({k: "kernel" for k in prog.space if k.endswith(".impl")})
    return {tuple(describe(prog.with_params(p).candidate.source)) for p in points}


def test_structurally_different_sycl_gemm_schedules_fill_several_cells():
    # the epilogue stays in the GEMM's store (epi=pass would add a pointwise kernel, whose
    # work-group is then the program's widest)
    points = [{"g0.algo": "tile", "g0.wg": 16, "g0.epi": "fused"},
              {"g0.algo": "tile", "g0.wg": 256, "g0.epi": "fused"},
              {"g0.algo": "packed", "g0.epi": "fused"}]
    cells = _cells("gemm_epi", "sycl", points)
    assert len(cells) == 3, cells
    assert (3, 0, 0) in {(m, 0, p) for m, _, p in cells}  # packed: two-level tiling, wg 1


def test_row_strategies_and_fusion_spread_over_cells():
    points = [{"g0.strategy": s, "g0.wg": wg} for s in ("item", "lanes", "group", "subgroup")
              for wg in (8, 256)]
    rows = _cells("softmax_last", "sycl", points)
    cpp = _cells("gemm_epi", "cpp", [{"g0.algo": "packed"}, {"g0.algo": "tile",
                                                            "g0.threads": "one"}])
    archive = MapElitesArchive()
    filled = {archive.cell_of(c) for c in rows | cpp}
    assert len(filled) >= 5, filled


def test_fusion_count_is_the_compute_axis():
    prog = lower_task(task("gemm_epi"), "cpp")  # linear + gelu + scale: one fused kernel
    prog = prog.with_params({k: "kernel" for k in prog.space if k.endswith(".impl")})
    assert lowered_levels(prog.candidate.source)[1] >= 1


def test_hand_written_sources_still_use_the_patterns():
    assert lowered_levels("__shared__ float t[256]; __syncthreads();") is None
    assert tuple(describe("__shared__ float t[256]; __syncthreads();", "cuda")) == (2, 0, 1)
