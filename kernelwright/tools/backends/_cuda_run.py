"""The two ways a CUDA kernel runs: CuPy on a real device, or the PTX emulator on the CPU.

Both take the same argument rules as the host backends: tensors/arrays by pointer (or, for
the emulator, as the CPU objects themselves), Python int -> int32, Python float -> float32,
numpy scalars and ctypes values keep their width.
"""

from __future__ import annotations

import ctypes
import logging
from functools import cache
from typing import Any

import numpy as np

from kernelwright.errors import BackendUnavailableError, LaunchError
from kernelwright.tools.backends._args import INT32_RANGE

log = logging.getLogger(__name__)

EMULATOR_FIX = (
    "on a GPU machine: pip install 'kernelwright[cuda]'; here: use the sycl backend "
    "(kernelwright.tools.gpusim.launch, the PTX emulator, is not installed)"
)


@cache
def cuda_device() -> str | None:
    """Name of CUDA device 0 when CuPy can use it, else ``None`` (probed once, lazily)."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None
        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception as exc:  # ImportError, CUDARuntimeError without a driver, ...
        log.debug("no CUDA device through CuPy: %s", exc)
        return None


def emulator() -> Any:
    """``kernelwright.tools.gpusim.launch`` (the function), or raise with the fix."""
    try:
        from kernelwright.tools.gpusim import launch as target
    except ImportError as exc:
        raise BackendUnavailableError(
            f"no CUDA device on this machine and the PTX emulator is not available ({exc}). "
            f"Fix: {EMULATOR_FIX}"
        ) from exc
    fn = getattr(target, "launch", target)
    if not callable(fn):
        raise BackendUnavailableError(
            f"kernelwright.tools.gpusim.launch is not callable. Fix: {EMULATOR_FIX}"
        )
    return fn


def emulator_available() -> bool:
    try:
        emulator()
    except BackendUnavailableError:
        return False
    return True


def dim3(value: Any, what: str) -> tuple[int, int, int]:
    """A grid/block size as three positive ints (``128`` -> ``(128, 1, 1)``)."""
    dims = (value,) if isinstance(value, int) else tuple(value)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, int) and d > 0 for d in dims):
        raise LaunchError(f"{what}={value!r}: give 1 to 3 positive ints, e.g. {what}=(256, 1, 1)")
    return (*dims, *(1,) * (3 - len(dims)))  # type: ignore[return-value]


def scalar(value: Any, index: int) -> Any:
    """A scalar argument as a numpy scalar of the right width."""
    if isinstance(value, ctypes._SimpleCData):
        return _np_type(value)(value.value or 0)
    if isinstance(value, np.generic):
        return value
    if isinstance(value, bool | int):
        if not INT32_RANGE[0] <= value <= INT32_RANGE[1]:
            raise LaunchError(f"argument {index} = {value} does not fit int32. "
                              "Fix: pass np.int64(value).")
        return np.int32(value)
    if isinstance(value, float):
        return np.float32(value)
    raise LaunchError(f"argument {index} has type {type(value).__name__}; pass a tensor, "
                      "array, Python int/float, numpy scalar or ctypes value.")


def _np_type(value: ctypes._SimpleCData) -> Any:
    if isinstance(value, ctypes.c_void_p):
        return np.uint64
    return np.dtype(type(value)).type


def _is_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) or (
        type(value).__module__.startswith("torch") and hasattr(value, "data_ptr")
    )


def device_args(args: tuple[Any, ...]) -> list[Any]:
    """Arguments for CuPy: CUDA tensors/arrays by pointer (as uint64), scalars by width."""
    out: list[Any] = []
    for i, a in enumerate(args):
        if type(a).__module__.startswith("torch") and hasattr(a, "data_ptr"):
            if a.device.type != "cuda":
                raise LaunchError(f"argument {i} is a torch tensor on {a.device}. "
                                  "Fix: move it to the GPU (t.cuda()).")
            out.append(np.uint64(a.data_ptr()))
        elif hasattr(a, "__cuda_array_interface__"):
            out.append(np.uint64(a.__cuda_array_interface__["data"][0]))
        elif isinstance(a, np.ndarray):
            raise LaunchError(f"argument {i} is a numpy (host) array. Fix: pass a CUDA tensor.")
        else:
            out.append(scalar(a, i))
    return out


def emulator_args(args: tuple[Any, ...]) -> list[Any]:
    """Arguments for the PTX emulator: CPU tensors/arrays as they are, scalars by width."""
    return [a if _is_array(a) else scalar(a, i) for i, a in enumerate(args)]


class CupyRunner:
    """Launch entries of a module through CuPy on CUDA device 0."""

    def __init__(self, path: str) -> None:
        import cupy

        self._cupy = cupy
        self._module = cupy.RawModule(path=path)
        self._functions: dict[str, Any] = {}

    def __call__(self, entry: str, grid: tuple[int, int, int], block: tuple[int, int, int],
                 args: tuple[Any, ...], shared_mem: int) -> None:
        if entry not in self._functions:
            self._functions[entry] = self._module.get_function(entry)
        self._functions[entry](grid, block, tuple(device_args(args)), shared_mem=shared_mem)

    def synchronize(self) -> None:
        self._cupy.cuda.Device().synchronize()


class EmulatorRunner:
    """Run entries of a PTX module on the CPU PTX emulator (synchronous)."""

    def __init__(self, ptx: str) -> None:
        self._launch = emulator()
        self._ptx = ptx

    def __call__(self, entry: str, grid: tuple[int, int, int], block: tuple[int, int, int],
                 args: tuple[Any, ...], shared_mem: int) -> Any:
        return self._launch(self._ptx, entry, grid, block, emulator_args(args),
                            shared_bytes=shared_mem)

    def synchronize(self) -> None:
        """The emulator finishes each launch before returning."""
