"""Fresh, unpredictable timed inputs for every round, and the physical floor of a timing.

Each round every floating input element is the task's drawn value times its own random factor
in ``[1 - SPAN, 1 + SPAN]`` (one of ``LEVELS`` evenly spaced values: a random byte per element),
from a generator seeded by ``SystemRandom`` in the orchestrator: the candidate cannot predict a
round's inputs from the last one's (no common scale to undo, no low-rank structure to cache
against), and values stay in the drawn range (signs kept). The refresh is the orchestrator's
largest cost per round for memory-bound kernels, so contiguous float32/float64 slots take one
compiled pass (numba) that draws each element's byte from a hash of its index and a fresh
64-bit seed, scales the drawn value and writes both sides' slots: 1.1-2.3 ms for 4M floats
against 5-13 ms for the torch passes (bytes as 64-bit words, widened, scaled, multiplied,
copied), which other dtypes and layouts keep.

A candidate must at least read its inputs and write its outputs; a per-call time below
``bytes / (FLOOR_FACTOR * bandwidth)`` is physically implausible and flagged (the machine's
measured bandwidth when kernelwright has measured it, else a generous constant).
"""

from __future__ import annotations

import functools
import json
import logging
import math
import random
from pathlib import Path
from typing import Any

import torch

logger = logging.getLogger(__name__)

SPAN = 2.0**-6
LEVELS = 256
FLOOR_FACTOR = 16.0  # caches serve re-read inputs faster than DRAM: a generous margin
DEFAULT_BANDWIDTH = 200e9  # bytes/s when no measured peak is known


def refresh(ref_views: list[list[torch.Tensor | None]],
            cand_views: list[list[torch.Tensor | None]],
            pristine: list[list[torch.Tensor | None]], rng: random.Random) -> None:
    """New values in every floating input slot of the reference, copied to the candidate's."""
    gen = None
    for refs, cands, bases in zip(ref_views, cand_views, pristine, strict=False):
        for ref, cand, base in zip(refs, cands, bases, strict=True):
            if ref is None or base is None:
                continue
            if not ref.is_floating_point():
                cand.copy_(ref)
            elif _fused(base, ref, cand, rng.getrandbits(64)):
                continue
            else:
                gen = gen or torch.Generator().manual_seed(rng.getrandbits(63))
                torch.mul(base, factors(ref.shape, gen).to(ref.dtype), out=ref)
                cand.copy_(ref)


def _fused(base: torch.Tensor, ref: torch.Tensor, cand: torch.Tensor, seed: int) -> bool:
    """``ref = cand = base * factor`` in one compiled pass; False (nothing written) when the
    dtype or layout is not one it takes or numba is unavailable."""
    tensors = (base, ref, cand)
    if base.dtype not in (torch.float32, torch.float64) or any(
            t.dtype != base.dtype or not t.is_contiguous() or t.device.type != "cpu"
            for t in tensors):
        return False
    kernel = _scale_kernel()
    if kernel is None:
        return False
    kernel(*(t.detach().numpy().reshape(-1) for t in tensors), seed, SPAN, LEVELS)
    return True


@functools.cache
def _scale_kernel():
    """The compiled pass, or None where numba does not import. Imported on first use: the
    candidate's runner imports this package without numpy."""
    try:
        from kernelwright.tools.evaluate._fresh_kernel import scale_by_hashed_bytes
    except Exception as exc:  # numba raises more than ImportError when its imports break
        logger.warning("numba does not import (%s); timed inputs are refreshed with torch", exc)
        return None
    return scale_by_hashed_bytes


def factors(shape: torch.Size, gen: torch.Generator) -> torch.Tensor:
    """Independent random factors in ``[1 - SPAN, 1 + SPAN]``, ``LEVELS`` values apart."""
    count = math.prod(shape)
    words = torch.randint(-2**63, 2**63 - 1, (-(-count // 8),), dtype=torch.int64,
                          generator=gen)
    levels = words.view(torch.uint8)[:count].to(torch.float32)
    return levels.mul_(2 * SPAN / (LEVELS - 1)).add_(1 - SPAN).reshape(shape)


def floor_seconds(views: list[Any], outputs: list[Any], cache_dir: Path) -> float:
    """The least time one call can take: its inputs and outputs moved once at
    ``FLOOR_FACTOR`` times the machine's bandwidth."""
    nbytes = sum(v.numel() * v.element_size() for v in [*views, *outputs]
                 if isinstance(v, torch.Tensor))
    return nbytes / (FLOOR_FACTOR * bandwidth(cache_dir))


def bandwidth(cache_dir: Path) -> float:
    """The measured memory bandwidth (bytes/s) in ``machine_peaks.json``, else a default."""
    try:
        data = json.loads((Path(cache_dir) / "machine_peaks.json").read_text())
        value = float(data["bandwidth_gbps"]) * 1e9
    except (OSError, ValueError, KeyError, TypeError):
        return DEFAULT_BANDWIDTH
    return value if value > 0 else DEFAULT_BANDWIDTH


def capped(timing: Any, floor_s: float) -> Any:
    """``timing`` with the candidate's times raised to ``floor_s`` (its speedup capped at
    what the hardware allows), or ``None`` when it is not below the floor."""
    if floor_s <= 0 or timing.candidate_median_s >= floor_s:
        return None
    ref = timing.reference_median_s
    return timing.model_copy(update={
        "candidate_median_s": floor_s, "speedup": ref / floor_s,
        "speedup_low": min(timing.speedup_low, ref / floor_s),
        "speedup_high": min(timing.speedup_high, ref / floor_s)})
