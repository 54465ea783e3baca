"""Kernel-argument conversion: pointers without copies, Python scalars narrowed, widths kept."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import torch

from kernelwright.errors import LaunchError
from kernelwright.tools.backends._args import as_range, convert_arg


def test_tensor_passes_its_data_pointer():
    t = torch.arange(8, dtype=torch.float32)
    arg = convert_arg(t, 0)
    assert arg.is_pointer and arg.value.value == t.data_ptr() and arg.array is t


def test_numpy_array_passes_its_data_pointer():
    a = np.zeros(4, dtype=np.int64)
    arg = convert_arg(a, 0)
    assert arg.is_pointer and arg.value.value == a.ctypes.data


@pytest.mark.parametrize(
    ("value", "ctype"),
    [(3, ctypes.c_int32), (True, ctypes.c_int32), (1.5, ctypes.c_float),
     (np.int64(3), ctypes.c_int64), (np.float64(1.5), ctypes.c_double),
     (np.uint8(7), ctypes.c_uint8), (np.float32(2.5), ctypes.c_float)],
)
def test_scalar_widths(value, ctype):
    arg = convert_arg(value, 0)
    assert type(arg.value) is ctype and not arg.is_pointer
    assert arg.size == ctypes.sizeof(ctype)


def test_ctypes_values_are_kept_as_they_are():
    v = ctypes.c_int16(-3)
    assert convert_arg(v, 0).value is v


def test_float16_scalar_keeps_its_bits():
    arg = convert_arg(np.float16(1.0), 0)
    assert arg.size == 2 and arg.value.value == 0x3C00


def test_int_too_large_for_int32_names_the_fix():
    with pytest.raises(LaunchError, match=r"argument 2 .*np\.int64"):
        convert_arg(2**31, 2)


def test_non_contiguous_tensor_is_rejected():
    with pytest.raises(LaunchError, match="contiguous"):
        convert_arg(torch.zeros(4, 4).t(), 1)


def test_unsupported_type_is_rejected():
    with pytest.raises(LaunchError, match="argument 0 has type str"):
        convert_arg("x", 0)


def test_ranges():
    assert as_range(64, "global_size") == (64,)
    assert as_range((4, 8), "global_size") == (4, 8)
    for bad in [(), (1, 2, 3, 4), (0,), (2.0,)]:
        with pytest.raises(LaunchError, match="global_size"):
            as_range(bad, "global_size")
