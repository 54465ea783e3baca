"""Structural descriptors of a lowered candidate (a module written by ``tools/lower``).

The regex tables of :mod:`descriptors` see the same idioms in every schedule of a lowered
program (the kernel bodies differ in sizes, not in spellings), so its schedules all fell into
one MAP-Elites cell. A lowered module states its structure: the docstring lists every kernel
as ``NAME: KIND over UNITS units x wg WG -> NODES`` and the kernel text shows the staging.
Its three levels (same axes, same 0-3 scale):

- ``memory`` (tiling level): 0 one element or row per unit, scalar; 1 vectorised (``sycl::vec``,
  ``omp simd``, intrinsics); 2 staged through local memory (``work_group_static``) or a
  work-group cooperating on a row; 3 two-level blocking (cache blocks of packed panels around a
  register micro-tile).
- ``compute`` (fusion): the most IR nodes one kernel computes: 1 node 0, 2 nodes 1, 3-4 nodes 2,
  5 or more 3.
- ``parallelism`` (threading and work-group shape): device kernels by their widest work-group
  (1: 0, up to 16: 1, up to 128: 2, more: 3; a sub-group reduction is at least 2); C++ kernels
  0 on one thread, 1 on the OpenMP team, 2 with SIMD loops too, 3 with dynamically scheduled
  macro-tiles (the packed GEMM).
"""

from __future__ import annotations

import re

MARK = "Lowered by kernelwright"
_KERNEL_LINE = re.compile(r"^\s+(\w+): (\w+) over (\d+) units x wg (\d+) -> (.*)$", re.M)
_VECTOR = re.compile(r"\bsycl::vec\s*<|#\s*pragma\s+omp\s+simd\b|\b_mm(?:256|512)?_\w+|"
                     r"\bkw_uk_\w+|\bfloat[248]\b")
_COOPERATIVE = re.compile(r"reduce_over_group\s*\(\s*it\.get_group\(\)|__syncthreads\s*\(")
_PACKED = re.compile(r"packed GEMM")
_SUBGROUP = re.compile(r"\bget_sub_group\b|__shfl_\w*sync\b")


def is_lowered(source: str) -> bool:
    return MARK in source[:400]


def _fusion_level(nodes: int) -> int:
    return 0 if nodes <= 1 else 1 if nodes == 2 else 2 if nodes <= 4 else 3


def _wg_level(wg: int) -> int:
    return 0 if wg <= 1 else 1 if wg <= 16 else 2 if wg <= 128 else 3


def lowered_levels(source: str) -> tuple[int, int, int] | None:
    """``(memory, compute, parallelism)`` of a lowered candidate module; None for any other
    source (those are placed by the regex tables)."""
    if not is_lowered(source):
        return None
    kernels = _KERNEL_LINE.findall(source)
    backend = re.search(r"^BACKEND = '(\w+)'", source, re.M)
    text = source.split('SOURCE = r"""', 1)[-1].split('"""', 1)[0]
    if _PACKED.search(text):
        memory = 3
    elif "work_group_static" in text or _COOPERATIVE.search(text):
        memory = 2
    else:
        memory = 1 if _VECTOR.search(text) else 0
    nodes = max((len(k[4].split(", ")) for k in kernels), default=1)
    compute = _fusion_level(nodes)
    if backend is not None and backend.group(1) == "cpp":
        if "omp parallel" not in text:
            parallelism = 0
        elif "schedule(dynamic" in text:
            parallelism = 3
        else:
            parallelism = 2 if _VECTOR.search(text) else 1
    else:
        parallelism = max((_wg_level(int(k[3])) for k in kernels), default=0)
        if _SUBGROUP.search(text):
            parallelism = max(parallelism, 2)
    return memory, compute, parallelism
