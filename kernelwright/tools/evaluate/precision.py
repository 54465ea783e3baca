"""Precision-downgrade check: compare candidate and fp32 reference against an fp64 reference.

Rule (float32 outputs only), with ``r64`` the reference run in float64 on the same inputs::

    flag  if  max|cand - r64|  >  max(100 * max|ref32 - r64|,  1e-5 * (1 + max|r64|))

The first term says "far worse than the reference's own rounding"; the floor (a tenth of the
default fp32 tolerance) keeps honest fp32 code with another summation order (typically
< sqrt(K) * 1.2e-7 relative) from being flagged when the reference happens to be near-exact.
fp16 (eps 4.9e-4), bf16 (3.9e-3) and TF32 arithmetic all land more than 10x above the floor.
"""

from __future__ import annotations

import logging

import torch

log = logging.getLogger(__name__)

FACTOR = 100.0
FLOOR = 1e-5


def downgrade_message(
    cand: list[torch.Tensor], ref32: list[torch.Tensor], ref64: list[torch.Tensor]
) -> str | None:
    """Why the candidate looks computed in lower precision, or ``None``."""
    for i, (c, r, r64) in enumerate(zip(cand, ref32, ref64, strict=True)):
        if r.dtype != torch.float32 or r64.shape != r.shape or not r.numel():
            continue
        err_ref = float((r.double() - r64).abs().max())
        err_cand = float((c.double() - r64).abs().max())
        bound = max(FACTOR * err_ref, FLOOR * (1.0 + float(r64.abs().max())))
        if err_cand > bound:
            return (
                f"output {i}: error vs a float64 reference is {err_cand:.3g}, the float32 "
                f"reference's own is {err_ref:.3g} (bound {bound:.3g}): the candidate looks "
                "computed in lower precision (fp16/bf16/TF32); compute and accumulate in fp32"
            )
    return None
