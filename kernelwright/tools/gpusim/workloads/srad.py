"""srad-like anisotropic diffusion stencil (Rodinia srad_v2): 2 launches per iteration."""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelwright.tools.gpusim.workloads.base import Launcher, Workload, blocks


def _q0sqr(j: np.ndarray) -> np.float32:
    roi = j[: max(1, j.shape[0] // 4), : max(1, j.shape[1] // 4)].astype(np.float64)
    mean, var = roi.mean(), roi.var()
    return np.float32(var / (mean * mean))


class SradWorkload(Workload):
    """``iterations`` diffusion steps of a rows x cols speckled image."""

    name = "srad"
    source = "srad.cu"
    defaults = {"rows": 64, "cols": 64, "iterations": 3, "lam": 0.5}

    def inputs(self, rng: np.random.Generator, p: dict[str, Any]) -> dict[str, np.ndarray]:
        img = rng.uniform(0.5, 1.5, (p["rows"], p["cols"])).astype(np.float32)
        return {"J": np.exp(img).astype(np.float32)}

    def _execute(self, launch: Launcher, p: dict[str, Any], d: dict[str, np.ndarray]):
        r, c, j = p["rows"], p["cols"], d["J"]
        cc, dn, ds, dw, de = (np.zeros_like(j) for _ in range(5))
        grid, block = (blocks(c, 16), blocks(r, 16)), (16, 16)
        for _ in range(p["iterations"]):
            launch("srad_coeff", grid, block, j, cc, dn, ds, dw, de, r, c, _q0sqr(j))
            launch("srad_update", grid, block, j, cc, dn, ds, dw, de, r, c, np.float32(p["lam"]))
        return {"J": j}

    def reference(self, p: dict[str, Any], d: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        j = d["J"].copy()
        f = np.float32
        for _ in range(p["iterations"]):
            q0 = _q0sqr(j)
            jp = np.pad(j, 1, mode="edge")
            n, s = jp[:-2, 1:-1] - j, jp[2:, 1:-1] - j
            w, e = jp[1:-1, :-2] - j, jp[1:-1, 2:] - j
            g2 = (n * n + s * s + w * w + e * e) / (j * j)
            lap = (n + s + w + e) / j
            num = f(0.5) * g2 - f(0.0625) * lap * lap
            den = f(1) + f(0.25) * lap
            qsqr = num / (den * den)
            den = (qsqr - q0) / (q0 * (f(1) + q0))
            c = np.clip(f(1) / (f(1) + den), 0, 1)
            cp = np.pad(c, 1, mode="edge")
            div = c * n + cp[2:, 1:-1] * s + c * w + cp[1:-1, 2:] * e
            j = j + f(0.25) * f(p["lam"]) * div
        return {"J": j}
