"""Storage and compute types of the lowered program.

Half types (float16, bfloat16) are stored as 16-bit integers and converted to ``float`` on
load and back on store (round to nearest even), so the three emitters need no half support.
"""

from __future__ import annotations

import torch

from kernelwright.errors import LoweringError

_CTYPES: dict[torch.dtype, tuple[str, str]] = {  # dtype -> (storage type, compute type)
    torch.float32: ("float", "float"),
    torch.float64: ("double", "double"),
    torch.float16: ("unsigned short", "float"),
    torch.bfloat16: ("unsigned short", "float"),
    torch.int64: ("long long", "long long"),
    torch.int32: ("int", "int"),
    torch.int16: ("short", "int"),
    torch.int8: ("signed char", "int"),
    torch.uint8: ("unsigned char", "int"),
    # bool is stored as a byte (torch's layout): g++ leaves a simd loop that loads ``bool``
    # scalar ("no vectype"), and reads it as ``!= 0``
    torch.bool: ("unsigned char", "bool"),
}


def _entry(dtype: torch.dtype) -> tuple[str, str]:
    if dtype not in _CTYPES:
        raise LoweringError(
            f"dtype {dtype} is not supported by the lowering compiler; use float32/float64, "
            "float16/bfloat16 or an integer/bool type in the reference"
        )
    return _CTYPES[dtype]


def storage_type(dtype: torch.dtype) -> str:
    return _entry(dtype)[0]


def compute_type(dtype: torch.dtype) -> str:
    return _entry(dtype)[1]


def load_expr(dtype: torch.dtype, raw: str) -> str:
    """Compute-type value of a stored element ``raw``."""
    if dtype == torch.float16:
        return f"kw_h2f({raw})"
    if dtype == torch.bfloat16:
        return f"kw_b2f({raw})"
    if dtype == torch.bool:
        return f"({raw} != 0)"
    return raw


def store_expr(dtype: torch.dtype, value: str) -> str:
    """Storage-type form of compute value ``value``."""
    if dtype == torch.float16:
        return f"kw_f2h({value})"
    if dtype == torch.bfloat16:
        return f"kw_f2b({value})"
    return f"({storage_type(dtype)})({value})"


def cast(value: str, dtype: torch.dtype) -> str:
    return f"(({compute_type(dtype)})({value}))"


def literal(value: float | int | bool, dtype: torch.dtype) -> str:
    """A C literal of ``value`` in the compute type of ``dtype``."""
    ctype = compute_type(dtype)
    if dtype == torch.bool:
        return "true" if value else "false"
    if ctype in ("float", "double"):
        v = float(value)
        if v != v:
            return "KW_NAN"
        if v in (float("inf"), float("-inf")):
            return "KW_INF" if v > 0 else "(-KW_INF)"
        text = repr(v)
        return f"{text}f" if ctype == "float" else text
    return f"(({ctype}){int(value)})"


def itemsize(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()
