"""cfd-like explicit solver (Rodinia euler3d shape): 3 + iterations x 7 near-identical launches."""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelwright.tools.gpusim.workloads.base import Launcher, Workload, blocks

NNB, NVAR, RK = 4, 5, 3
FF = np.array([1.4, 0.3, 0.1, 0.05, 6.0], np.float32)


class CfdWorkload(Workload):
    """``iterations`` Runge-Kutta steps of a diffusive 5-variable flux on a random mesh."""

    name = "cfd"
    source = "cfd.cu"
    defaults = {"elements": 1024, "iterations": 4, "block": 128}

    def inputs(self, rng: np.random.Generator, p: dict[str, Any]) -> dict[str, np.ndarray]:
        n = p["elements"]
        nbr = rng.integers(0, n, (n, NNB)).astype(np.int32)
        nbr[rng.random((n, NNB)) < 0.05] = -1  # boundary faces take the far field
        return {"nbr": nbr, "normals": rng.uniform(0.01, 0.05, (n, NNB)).astype(np.float32),
                "areas": rng.uniform(0.5, 2.0, n).astype(np.float32)}  # fmt: skip

    def _execute(self, launch: Launcher, p: dict[str, Any], d: dict[str, np.ndarray]):
        n, bs = p["elements"], p["block"]
        g = blocks(n, bs)
        ff, ff_flux = FF.copy(), np.zeros(NVAR, np.float32)
        vars_, old = np.zeros(NVAR * n, np.float32), np.zeros(NVAR * n, np.float32)
        step, flux = np.zeros(n, np.float32), np.zeros(NVAR * n, np.float32)
        launch("cfd_initialize", g, bs, vars_, ff, n)
        launch("cfd_far_field", 1, 32, ff, ff_flux)
        launch("cfd_copy", blocks(NVAR * n, bs), bs, old, vars_, NVAR * n)
        for _ in range(p["iterations"]):
            launch("cfd_step_factor", g, bs, vars_, old, d["areas"], step, n)
            for stage in range(RK):
                launch("cfd_flux", g, bs, vars_, d["nbr"], d["normals"], ff_flux, flux, n)
                launch("cfd_time_step", g, bs, stage, vars_, old, step, flux, n)
        return {"vars": vars_.reshape(NVAR, n)}

    def reference(self, p: dict[str, Any], d: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        n = p["elements"]
        f32 = np.float32
        bump = f32(1) + f32(0.01) * (np.arange(n) % 17).astype(f32)
        v = FF[:, None] * bump[None, :]
        ff_flux = f32(0.5) * FF
        for _ in range(p["iterations"]):
            old = v.copy()
            rho, m = v[0], v[1:4]
            m2 = (m * m).sum(axis=0)
            pres = f32(0.4) * (v[4] - f32(0.5) * m2 / rho)
            speed = np.sqrt(m2) / rho + np.sqrt(f32(1.4) * pres / rho)
            step = f32(0.5) / (np.sqrt(d["areas"]) * speed)
            for stage in range(RK):
                flux = np.zeros_like(v)
                for k in range(NNB):
                    j, w = d["nbr"][:, k], d["normals"][:, k]
                    inner = v[:, np.maximum(j, 0)] - v
                    outer = ff_flux[:, None] - f32(0.5) * v
                    flux += w * np.where(j >= 0, inner, outer)
                v = old + step / f32(RK - stage) * flux
        return {"vars": v}
