"""Kernel-argument conversion shared by the host backends (SYCL, C++).

Rules: a torch CPU tensor or numpy array passes as its data pointer (no copy); a Python
``int`` becomes ``int32``, a Python ``float`` ``float32``; numpy scalars and ctypes values keep
their width. Without numpy (a custom-kernels-only C++ runner has none) only the numpy rules
are missing.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

try:
    import numpy as np
except ModuleNotFoundError:  # a process without numpy (kernelwright.tools.no_numeric)
    np = None

from kernelwright.errors import LaunchError

_NP_TO_CTYPES: dict[str, type[ctypes._SimpleCData]] = {
    "int8": ctypes.c_int8, "uint8": ctypes.c_uint8, "int16": ctypes.c_int16,
    "uint16": ctypes.c_uint16, "int32": ctypes.c_int32, "uint32": ctypes.c_uint32,
    "int64": ctypes.c_int64, "uint64": ctypes.c_uint64, "float32": ctypes.c_float,
    "float64": ctypes.c_double, "bool": ctypes.c_bool, "float16": ctypes.c_uint16,
}
INT32_RANGE = (-(2**31), 2**31 - 1)


@dataclass(frozen=True)
class Arg:
    """One converted argument: a pointer (``array`` is the object it points into) or a scalar."""

    value: ctypes._SimpleCData
    array: Any = None  # the tensor/array behind a pointer, for copy-in/copy-out fallbacks

    @property
    def is_pointer(self) -> bool:
        return self.array is not None

    @property
    def size(self) -> int:
        return ctypes.sizeof(self.value)


def _tensor_pointer(t: Any, index: int) -> int:
    if t.device.type != "cpu":
        raise LaunchError(
            f"argument {index} is a torch tensor on {t.device}; this backend runs on the CPU. "
            "Fix: pass a CPU tensor (t.cpu())."
        )
    if not t.is_contiguous():
        raise LaunchError(
            f"argument {index} is a non-contiguous torch tensor (strides {tuple(t.stride())}); "
            "kernels receive a raw pointer. Fix: pass t.contiguous()."
        )
    return int(t.data_ptr())


def _array_pointer(a: Any, index: int) -> int:
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        raise LaunchError(
            f"argument {index} is a non-contiguous numpy array; kernels receive a raw pointer. "
            "Fix: pass np.ascontiguousarray(a)."
        )
    return int(a.ctypes.data)


def _python_int(value: int, index: int) -> ctypes.c_int32:
    if not INT32_RANGE[0] <= value <= INT32_RANGE[1]:
        raise LaunchError(
            f"argument {index} = {value} does not fit int32 (Python ints pass as int32). "
            "Fix: pass np.int64(value) or ctypes.c_int64(value)."
        )
    return ctypes.c_int32(value)


def convert_arg(value: Any, index: int) -> Arg:
    """Convert one launch argument; raise ``LaunchError`` naming the argument if impossible."""
    if isinstance(value, ctypes._SimpleCData):
        return Arg(value)
    if np is not None and isinstance(value, np.ndarray):
        return Arg(ctypes.c_void_p(_array_pointer(value, index)), value)
    if type(value).__module__.startswith("torch") and hasattr(value, "data_ptr"):
        return Arg(ctypes.c_void_p(_tensor_pointer(value, index)), value)
    if np is not None and isinstance(value, np.generic):
        ctype = _NP_TO_CTYPES.get(value.dtype.name)
        if ctype is None:
            raise LaunchError(f"argument {index}: numpy scalar of dtype {value.dtype} "
                              "is not supported. Fix: pass a ctypes value of the right width.")
        raw = value.view(np.uint16) if value.dtype.name == "float16" else value
        return Arg(ctype(raw.item()))
    if isinstance(value, bool | int):
        return Arg(_python_int(int(value), index))
    if isinstance(value, float):
        return Arg(ctypes.c_float(value))
    raise LaunchError(
        f"argument {index} has type {type(value).__name__}; pass a torch CPU tensor, numpy "
        "array, Python int/float, numpy scalar or ctypes value."
    )


def convert_args(args: tuple[Any, ...]) -> list[Arg]:
    """Convert every launch argument (see the module docstring for the rules)."""
    return [convert_arg(a, i) for i, a in enumerate(args)]


def as_range(value: Any, what: str) -> tuple[int, ...]:
    """A launch range (``global_size``/``local_size``) as a tuple of 1–3 positive ints."""
    dims = (value,) if isinstance(value, int) else tuple(value)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, int) and d > 0 for d in dims):
        raise LaunchError(f"{what}={value!r}: give 1 to 3 positive ints, e.g. {what}=(1024,).")
    return dims
