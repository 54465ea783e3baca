"""PolyBench 3mm: three launches of one tiled GEMM (a sampler's speedup ceiling is 3x)."""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelwright.tools.gpusim.workloads.base import Launcher, Workload, blocks


class Mm3Workload(Workload):
    """G = (A.B).(C.D) for square ``size`` x ``size`` matrices."""

    name = "mm3"
    source = "mm3.cu"
    defaults = {"size": 64}

    def inputs(self, rng: np.random.Generator, p: dict[str, Any]) -> dict[str, np.ndarray]:
        n = p["size"]
        return {k: rng.random((n, n), dtype=np.float32) for k in "ABCD"}

    def _execute(self, launch: Launcher, p: dict[str, Any], d: dict[str, np.ndarray]):
        n = p["size"]
        e, f, g = (np.zeros((n, n), np.float32) for _ in range(3))
        grid, block = (blocks(n, 16), blocks(n, 16)), (16, 16)
        launch("mm_tiled", grid, block, d["A"], d["B"], e, n, n, n)
        launch("mm_tiled", grid, block, d["C"], d["D"], f, n, n, n)
        launch("mm_tiled", grid, block, e, f, g, n, n, n)
        return {"G": g}

    def reference(self, p: dict[str, Any], d: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"G": (d["A"] @ d["B"]) @ (d["C"] @ d["D"])}
