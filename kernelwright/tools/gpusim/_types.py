"""PTX type names -> numpy dtypes, and helpers to read immediates as typed numpy scalars."""

from __future__ import annotations

import numpy as np

DTYPES: dict[str, type] = {
    "pred": np.bool_, "b8": np.uint8, "u8": np.uint8, "s8": np.int8,
    "b16": np.uint16, "u16": np.uint16, "s16": np.int16, "f16": np.float16, "bf16": np.uint16,
    "b32": np.uint32, "u32": np.uint32, "s32": np.int32, "f32": np.float32,
    "f16x2": np.uint32, "bf16x2": np.uint32,
    "b64": np.uint64, "u64": np.uint64, "s64": np.int64, "f64": np.float64,
}  # fmt: skip

UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SIGNED = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
FLOATS = {2: np.float16, 4: np.float32, 8: np.float64}


def dtype_of(ptx_type: str) -> np.dtype:
    """The numpy dtype a PTX type is stored and computed in."""
    try:
        return np.dtype(DTYPES[ptx_type])
    except KeyError:
        raise ValueError(f"PTX type .{ptx_type} is not supported by the emulator") from None


def int_scalar(value: int, dt: np.dtype):
    """An integer immediate as a numpy scalar of ``dt`` (two's complement wrap)."""
    if dt.kind == "f":
        return dt.type(value)
    if dt.kind == "b":
        return np.bool_(value)
    bits = value & ((1 << (8 * dt.itemsize)) - 1)
    return np.array(bits, dtype=UNSIGNED[dt.itemsize]).view(dt)[()]


def float_scalar(value: int | float, ftype: str, dt: np.dtype):
    """A float immediate (hex bits of ``ftype``, or a decimal) as a numpy scalar of ``dt``."""
    if isinstance(value, float) or not ftype:
        return dt.type(value)
    src = np.array(value, dtype=np.uint32 if ftype == "f32" else np.uint64)
    f = src.view(np.float32 if ftype == "f32" else np.float64)[()]
    if dt.kind == "f":
        return dt.type(f)
    return src.astype(UNSIGNED[dt.itemsize]).view(dt)[()] if dt.kind in "ui" else dt.type(f)


def convert(values, dst: np.dtype):
    """Reinterpret (same size) or convert (different size) register bits to ``dst``."""
    src = values.dtype
    if src == dst:
        return values
    if src.itemsize == dst.itemsize and src.kind != "b" and dst.kind != "b":
        return values.view(dst)
    if src.kind == "f" or dst.kind == "f":
        # size-changing moves of float bits: go through the unsigned integer of each size
        if src.kind == "f":
            values = values.view(UNSIGNED[src.itemsize])
        out = values.astype(UNSIGNED.get(dst.itemsize, np.uint64))
        return out.view(dst) if dst.kind == "f" else out.astype(dst)
    return values.astype(dst)
