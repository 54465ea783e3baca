"""Comparing output lists: types, shapes, values under a tolerance, and exact agreement."""

from __future__ import annotations

from typing import Any

import torch

from kernelwright.spec import Contract

CHUNK = 1 << 15  # elements per pass of all_close: temporaries stay in the L2 cache


def errors(cand: list[torch.Tensor], ref: list[torch.Tensor], contract: Contract):
    """``(all_close, max_abs, max_rel, message)``; rel error is ``|c - r| / (|r| + atol)``."""
    ok, max_abs, max_rel, message = True, 0.0, 0.0, None
    for i, (c, r) in enumerate(zip(cand, ref, strict=True)):
        tol = contract.tolerance_for(str(r.dtype))
        abs_err, rel_err = _max_errors(c, r, max(tol.atol, 1e-12))
        max_abs, max_rel = _nanmax(max_abs, abs_err), _nanmax(max_rel, rel_err)
        # every difference within atol (NaN fails) already decides it: the full test only
        # for the rest, not a second pass over what _max_errors just read
        if ok and not (abs_err <= tol.atol or all_close(c, r, tol.atol, tol.rtol)):
            ok = False
            message = (f"output {i} differs from the reference: max abs error {abs_err:.3g}, "
                       f"max rel error {rel_err:.3g} (atol={tol.atol:g}, rtol={tol.rtol:g})")
        elif ok:
            norm_err = normwise_error(c, r)
            if norm_err > max(NORMWISE_LIMIT, tol.rtol):
                ok = False
                message = (f"output {i} is far from the reference as a whole: normwise "
                           f"relative error {norm_err:.3g} (limit {NORMWISE_LIMIT:g}), though "
                           f"every element is within atol={tol.atol:g} (an all-zero or "
                           "shrunken output passes a loose atol only element by element)")
    return ok, max_abs, max_rel, message


NORMWISE_LIMIT = 0.05  # ||c - r|| / ||r||: honest kernels are orders of magnitude below


def normwise_error(c: torch.Tensor, r: torch.Tensor) -> float:
    """``||c - r|| / ||r||`` in float64 (0 for a zero or non-floating reference)."""
    if not r.is_floating_point() or not r.numel():
        return 0.0
    rf, cf = r.detach().reshape(-1), c.detach().reshape(-1)
    ref_sq = diff_sq = 0.0
    step = CHUNK * 8
    for i in range(0, rf.numel(), step):
        rc = torch.nan_to_num(rf[i:i + step].double())
        ref_sq += float(rc.square().sum())
        diff_sq += float(torch.nan_to_num(cf[i:i + step].double() - rc).square().sum())
    if ref_sq == 0.0 or ref_sq != ref_sq:
        return 0.0
    return (diff_sq / ref_sq) ** 0.5


def all_close(c: torch.Tensor, r: torch.Tensor, atol: float, rtol: float) -> bool:
    """``torch.allclose(c, r, atol, rtol, equal_nan=True)`` semantics, ~4x faster on CPU
    (cache-sized chunks, in-place passes); exact equality for non-floating outputs."""
    if not (r.is_floating_point() or r.is_complex()):
        return torch.equal(c, r)
    cf, rf = c.reshape(-1), r.reshape(-1)
    if within_atol(cf, rf, atol):
        return True
    return all(_close_chunk(cf[i:i + CHUNK], rf[i:i + CHUNK], atol, rtol)
               for i in range(0, rf.numel(), CHUNK))


QUICK_CHUNK = 1 << 18  # elements per pass of within_atol (measured best of 32K-256K)


def within_atol(c: torch.Tensor, r: torch.Tensor, atol: float) -> bool:
    """Whether every ``|c - r| <= atol`` with no NaN or infinity in the difference, for flat
    real tensors of one dtype: a sufficient condition for :func:`all_close` in two passes
    (the difference into a reused buffer, then its min and max), where the full test takes
    eight. An honest kernel's outputs usually meet it (measured on 4M floats: 1.7 ms against
    8.5 ms); anything else falls through to the full test."""
    if c.dtype != r.dtype or r.is_complex() or not r.numel():
        return False
    buf = torch.empty(min(QUICK_CHUNK, r.numel()), dtype=r.dtype)
    for i in range(0, r.numel(), QUICK_CHUNK):
        diff = buf[:min(QUICK_CHUNK, r.numel() - i)]
        torch.sub(c[i:i + QUICK_CHUNK], r[i:i + QUICK_CHUNK], out=diff)
        low, high = torch.aminmax(diff)
        if not (float(low) >= -atol and float(high) <= atol):  # NaN fails both
            return False
    return True


def _close_chunk(c: torch.Tensor, r: torch.Tensor, atol: float, rtol: float) -> bool:
    if r.is_complex():
        diff = (c - r).abs()
        bound = r.abs().mul_(rtol).add_(atol)
    else:
        diff = torch.sub(c, r).abs_()
        bound = r.abs().mul_(rtol).add_(atol)
    bound.clamp_(max=torch.finfo(bound.dtype).max)  # an infinite reference is never "near"
    if bool(diff.le_(bound).all()):
        return True
    same = (c == r) | (c.isnan() & r.isnan())  # infinities and NaNs in the same places
    return bool((torch.sub(c, r).abs() <= bound).logical_or_(same).all())


ARBITER_FACTOR = 4.0


def as_close_as_reference(cand: list[torch.Tensor], ref: list[torch.Tensor],
                          ref64: list[torch.Tensor], contract: Contract) -> bool:
    """Whether ``cand`` is as close to the float64 reference ``ref64`` as the float32
    reference ``ref`` is, measured against the contract's tolerance.

    The arbiter of a mismatch with the float32 reference. Where a problem is ill-conditioned
    (a group norm over two nearly equal elements), the float32 reference itself uses up a
    share ``F`` of the tolerance ``atol + rtol * |ref64|`` at its worst element, and an honest
    kernel, rounding differently, lands up to about twice that from it. Each element of
    ``cand`` may then differ from ``ref64`` by ``max(1, ARBITER_FACTOR * F)`` times the
    tolerance: nothing is loosened where the reference is well inside it, and a wrong or
    lower-precision kernel, far off where the reference is not, still fails; so does an output
    far from ``ref64`` as a whole (:func:`normwise_error`), as zeros within a loose atol are.
    NaN only where the reference has one."""
    for c, r, t in zip(cand, ref, ref64, strict=True):
        if not (r.is_floating_point() and t.is_floating_point()) or c.shape != t.shape:
            return False
        tol = contract.tolerance_for(str(r.dtype))
        if normwise_error(c, t) > max(NORMWISE_LIMIT, tol.rtol,
                                      ARBITER_FACTOR * normwise_error(r, t)):
            return False  # far off as a whole (zeros within a loose atol): no arbiter helps
        share = 0.0
        for _, rr, tt, bound in _arbiter_chunks(c, r, t, tol.atol, tol.rtol):
            share = max(share, float(torch.nan_to_num((rr - tt).abs().div_(bound)).max()))
        scale = max(1.0, ARBITER_FACTOR * share)
        for cc, rr, tt, bound in _arbiter_chunks(c, r, t, tol.atol, tol.rtol):
            fine = ((cc - tt).abs() <= bound.mul_(scale)) | (cc.isnan() & rr.isnan())
            if not bool(fine.all()):
                return False
    return True


def _arbiter_chunks(c: torch.Tensor, r: torch.Tensor, t: torch.Tensor, atol: float,
                    rtol: float):
    """``(cand, ref, ref64, tolerance)`` in float64, a cache-sized chunk at a time."""
    cf, rf, tf = c.reshape(-1), r.reshape(-1), t.reshape(-1)
    step = CHUNK * 8
    for i in range(0, tf.numel(), step):
        tt = tf[i:i + step]
        yield (cf[i:i + step].double(), rf[i:i + step].double(), tt,
               tt.abs().mul(rtol).add_(max(atol, 1e-30)))


def _max_errors(c: torch.Tensor, r: torch.Tensor, atol: float) -> tuple[float, float]:
    """Max ``|c - r|`` and max ``|c - r| / (|r| + atol)`` (NaN wins), in cache-sized chunks."""
    if not (r.is_floating_point() or r.is_complex()):
        c, r = c.double(), r.double()  # integer differences must not wrap around
    cf, rf = c.reshape(-1), r.reshape(-1)
    max_abs = max_rel = 0.0
    for i in range(0, rf.numel(), CHUNK):
        rr = rf[i:i + CHUNK]
        diff = (cf[i:i + CHUNK] - rr).abs()
        max_abs = _nanmax(max_abs, float(diff.max()))
        max_rel = _nanmax(max_rel, float(diff.div_(rr.abs().add_(atol)).max()))
    return max_abs, max_rel


def _nanmax(a: float, b: float) -> float:
    return b if b != b or b > a else a  # NaN wins: it means the output held a NaN


def identical(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    """Bit-for-bit agreement (NaN equals NaN in the same place)."""
    for x, y in zip(a, b, strict=True):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        same = torch.equal(x, y) or (x.is_floating_point() and torch.allclose(
            x, y, rtol=0, atol=0, equal_nan=True))  # fast path first; NaN == NaN only here
        if not same:
            return False
    return True


def changed_inputs(given: list[Any], pristine: list[Any]) -> list[int]:
    """Indices of tensor inputs whose contents differ from their pristine copy."""
    return [
        i for i, (g, p) in enumerate(zip(given, pristine, strict=True))
        if isinstance(p, torch.Tensor) and not identical([g], [p])
    ]


def storages(outputs: list[torch.Tensor]) -> set[int]:
    return {o.untyped_storage().data_ptr() for o in outputs if o.numel()}
