"""Every timing process gets one allocator configuration (tools/allocator.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from kernelwright.config import Settings
from kernelwright.tools import allocator
from kernelwright.tools.evaluate import sandbox

# Allocate, touch and free a 16 MB block ten times; print the minor page faults it took.
CYCLES = """
import ctypes, resource
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
size = 16 << 20
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    p = libc.malloc(size)
    ctypes.memset(p, 1, size)
    libc.free(p)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""
PAGES = (16 << 20) // os.sysconf("SC_PAGE_SIZE")


def _faults(env: dict[str, str]) -> int:
    out = subprocess.run([sys.executable, "-c", CYCLES], env={**os.environ, **env},
                         capture_output=True, text=True, check=True)
    return int(out.stdout)


def test_with_the_setting_a_freed_large_block_is_reused_without_faulting_again():
    assert _faults(allocator.ENV) < 2 * PAGES  # the pages faulted once, then kept
    assert _faults({"MALLOC_MMAP_THRESHOLD_": str(1 << 20)}) > 5 * PAGES  # mapped per call


def test_both_runners_get_it_and_this_process_can_apply_it(tmp_path):
    env = sandbox.runner_env(Settings(data_dir=tmp_path / "d", cache_dir=tmp_path / "c"),
                             tmp_path, sandboxed=True)
    assert {k: env[k] for k in allocator.ENV} == allocator.ENV
    assert allocator.configure_this_process()
