"""Copy-in/copy-out through shared USM, for devices without system-allocation support.

Zero copy is the normal path on the Intel CPU device; this fallback exists for devices that
cannot read plain host memory, and for measuring what zero copy saves
(``benchmarks/zero_copy.py``).
"""

from __future__ import annotations

import ctypes
from typing import Any

from kernelwright.tools.backends._args import Arg


def nbytes(array: Any) -> int:
    """Size in bytes of a torch tensor or numpy array."""
    if hasattr(array, "element_size"):
        return int(array.numel() * array.element_size())
    return int(array.nbytes)


class SharedCopies:
    """Context manager: stage each pointer argument in shared USM, copy back on exit.

    Every array is copied back, since the launch cannot tell inputs from outputs.
    """

    def __init__(self, runtime: Any, args: list[Arg]) -> None:
        self._rt = runtime  # a SyclRuntime: its shim allocates on its queue
        self._args = args
        self._staged: list[tuple[int, int, int]] = []  # (host pointer, usm pointer, bytes)

    def __enter__(self) -> list[Arg]:
        out: list[Arg] = []
        for arg in self._args:
            size = nbytes(arg.array) if arg.is_pointer else 0
            if size == 0:
                out.append(arg)
                continue
            ptr = self._rt.lib.kw_malloc_shared(self._rt.queue_ptr, size)
            if not ptr:
                self.__exit__()
                raise MemoryError(f"shared USM of {size} bytes could not be allocated")
            ctypes.memmove(ptr, arg.value.value, size)
            self._staged.append((arg.value.value, ptr, size))
            out.append(Arg(ctypes.c_void_p(ptr), arg.array))
        return out

    def __exit__(self, *exc: object) -> None:
        for host, ptr, size in self._staged:
            ctypes.memmove(host, ptr, size)
            self._rt.lib.kw_free_usm(self._rt.queue_ptr, ptr)
        self._staged.clear()
