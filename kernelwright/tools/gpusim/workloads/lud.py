"""Blocked LU decomposition (Rodinia lud): 3 (N/16 - 1) + 1 launches; the grid shrinks."""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelwright.tools.gpusim.workloads.base import Launcher, Workload

BS = 16


class LudWorkload(Workload):
    """In-place LU (unit lower L below the diagonal, U on and above it) of an N x N matrix."""

    name = "lud"
    source = "lud.cu"
    defaults = {"size": 64}

    def inputs(self, rng: np.random.Generator, p: dict[str, Any]) -> dict[str, np.ndarray]:
        n = p["size"]
        if n % BS:
            raise ValueError(f"lud size must be a multiple of {BS}, got {n}")
        a = rng.random((n, n), dtype=np.float32) + np.eye(n, dtype=np.float32) * n
        return {"a": a}

    def _execute(self, launch: Launcher, p: dict[str, Any], d: dict[str, np.ndarray]):
        n, a = p["size"], d["a"]
        off = 0
        for off in range(0, n - BS, BS):
            left = (n - off) // BS - 1
            launch("lud_diagonal", 1, BS, a, n, off)
            launch("lud_perimeter", left, 2 * BS, a, n, off)
            launch("lud_internal", (left, left), (BS, BS), a, n, off)
        launch("lud_diagonal", 1, BS, a, n, n - BS)
        return {"lu": a}

    def reference(self, p: dict[str, Any], d: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        a = d["a"].astype(np.float64)
        n = a.shape[0]
        for k in range(n - 1):
            a[k + 1 :, k] /= a[k, k]
            a[k + 1 :, k + 1 :] -= np.outer(a[k + 1 :, k], a[k, k + 1 :])
        return {"lu": a}
