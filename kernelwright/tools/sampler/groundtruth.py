"""Per-invocation cycles from the reference timing model: what samplers are scored against.

Samplers never receive these (they get :class:`~.invocations.WorkloadTraces`, which has no
cycles); only :mod:`.score` and the benchmark read them. Every figure is "versus the reference
model", not a measurement.

Each kernel is read once and simulated under every requested GPU configuration (caches cold at
every launch, the timing model's default). Invocations with identical traces (same digest) get
the simulated result of the first: the model is deterministic, so this is exact, not an
approximation. Results are cached as JSON under ``<cache_dir>/sampler-cycles/`` keyed by the
folder's fingerprint, the configuration's full field values and the timing model's sources.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kernelwright.config import Settings
from kernelwright.tools.gpusim.gpus import GPUConfig, gpu_by_name
from kernelwright.tools.gpusim.timing import simulate_kernel
from kernelwright.tools.gpusim.traces import InMemoryKernel, iter_kernels
from kernelwright.tools.gpusim.workloads import gpusim_source_digest
from kernelwright.tools.sampler.invocations import (
    folder_fingerprint,
    kernel_body_digest,
    trace_digest,
)


def robustness_configs(base: GPUConfig | str = "rtx2080ti") -> dict[str, GPUConfig]:
    """The base GPU and four variants: L2 x2 / x0.5 and SMs x2 / x0.5."""
    g = gpu_by_name(base)

    def l2(f: float) -> GPUConfig:
        return g.model_copy(update={"l2_bytes": round(g.l2_bytes * f),
                                    "name": f"{g.name}-l2x{f:g}"})  # fmt: skip

    return {"base": g, "L2 x2": l2(2.0), "L2 x0.5": l2(0.5),
            "SMs x2": g.scaled(sms=2.0), "SMs x0.5": g.scaled(sms=0.5)}  # fmt: skip


def _config_key(gpu: GPUConfig) -> str:
    """The configuration's fields and the timing model's sources (a model change re-simulates)."""
    blob = gpu.model_dump_json() + gpusim_source_digest()
    return hashlib.sha1(blob.encode()).hexdigest()[:12]


def invocation_cycles(trace_dir: str | Path, gpus: Sequence[GPUConfig | str], *,
                      settings: Settings | None = None) -> dict[str, np.ndarray]:  # fmt: skip
    """Cycles of every invocation under each of ``gpus`` (keyed by config name)."""
    settings = settings or Settings()
    root = Path(trace_dir)
    configs = [gpu_by_name(g) for g in gpus]
    fp = folder_fingerprint(root)
    cache = Path(settings.cache_dir) / "sampler-cycles"
    files = {g.name: cache / f"{root.name}-{fp[:12]}-{_config_key(g)}.json" for g in configs}
    out = {n: np.array(json.loads(f.read_text())["cycles"], float)
           for n, f in files.items() if f.is_file()}  # fmt: skip
    todo = [g for g in configs if g.name not in out]
    if todo:
        fresh, seconds = _simulate(root, todo)
        cache.mkdir(parents=True, exist_ok=True)
        for g in todo:
            files[g.name].write_text(json.dumps({"gpu": g.name, "seconds": seconds,
                                                 "cycles": fresh[g.name].tolist()}))  # fmt: skip
            out[g.name] = fresh[g.name]
    return out


def _simulate(root: Path, gpus: list[GPUConfig]) -> tuple[dict[str, np.ndarray], float]:
    t0 = time.perf_counter()
    memo: dict[str, dict[str, int]] = {}
    body_memo: dict[str, dict[str, int]] = {}
    rows: list[dict[str, int]] = []
    for kernel in iter_kernels(root):
        body = kernel_body_digest(kernel.path)
        if body not in body_memo:
            warps = list(kernel.warps())
            key = trace_digest(kernel.info, warps)
            if key not in memo:
                mem = InMemoryKernel(kernel.info, warps)
                memo[key] = {g.name: simulate_kernel(mem, g).cycles for g in gpus}
            body_memo[body] = memo[key]
        rows.append(body_memo[body])
    return {g.name: np.array([r[g.name] for r in rows], float) for g in gpus}, (
        time.perf_counter() - t0)
