"""One allocator configuration for every process that times code.

glibc's malloc serves a large block (a conv's 15 MB output) either from its heap, whose pages
stay mapped, or from a fresh ``mmap`` whose pages fault and are zeroed on first touch. Which one
depends on the process's history: the threshold between them moves up each time a large mapped
block is freed, and freed heap memory is returned to the system past a trim threshold. So the
same PyTorch call measured 9-11 ms in one process and 28-39 ms in another (ConvTranspose3d
with a 15 MB output, one call per fresh input set, 2-core AMD EPYC). Timing an eager
reference in one process and a candidate in another then compares their allocators' luck.

Every runner the harness starts gets :data:`ENV` (glibc reads it at start-up), and an
in-process timing calls :func:`configure_this_process` first: blocks up to glibc's largest
threshold (32 MB on 64-bit) come from the heap, and freed memory is kept for the next call, as
a long-running model server's allocator would settle. Larger blocks are mapped per call on
both sides alike.
"""

from __future__ import annotations

import ctypes
import functools

MMAP_THRESHOLD = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
TRIM_THRESHOLD = 1 << 30
ENV = {"MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD),
       "MALLOC_TRIM_THRESHOLD_": str(TRIM_THRESHOLD)}
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)


@functools.cache
def configure_this_process() -> bool:
    """Apply :data:`ENV`'s settings to this running process (``mallopt``, once); False where
    the C library has no ``mallopt`` (not glibc)."""
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)  # the process's own C library
    if mallopt is None:
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
