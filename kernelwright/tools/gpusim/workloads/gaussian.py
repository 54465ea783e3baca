"""Rodinia gaussian elimination: Fan1 + Fan2 per column, 2 (N - 1) launches; work declines."""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelwright.tools.gpusim.workloads.base import Launcher, Workload, blocks


class GaussianWorkload(Workload):
    """Solve A x = b by forward elimination on the emulator and back substitution on the host."""

    name = "gaussian"
    source = "gaussian.cu"
    defaults = {"size": 32}

    def inputs(self, rng: np.random.Generator, p: dict[str, Any]) -> dict[str, np.ndarray]:
        n = p["size"]
        a = rng.random((n, n), dtype=np.float32) + np.eye(n, dtype=np.float32) * n
        return {"a": a, "b": rng.random(n, dtype=np.float32)}

    def _execute(self, launch: Launcher, p: dict[str, Any], d: dict[str, np.ndarray]):
        n, a, b = p["size"], d["a"], d["b"]
        mult = np.zeros((n, n), np.float32)
        for t in range(n - 1):
            launch("fan1", blocks(n, 64), 64, mult, a, n, t)
            launch("fan2", (blocks(n, 16), blocks(n, 16)), (16, 16), mult, a, b, n, t)
        x = np.zeros(n, np.float64)
        for i in range(n - 1, -1, -1):
            x[i] = (b[i] - a[i, i + 1 :] @ x[i + 1 :]) / a[i, i]
        return {"x": x}

    def reference(self, p: dict[str, Any], d: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"x": np.linalg.solve(d["a"].astype(np.float64), d["b"].astype(np.float64))}
