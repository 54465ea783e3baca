"""Behaviour descriptors of a kernel source: where it sits in the MAP-Elites grid.

Three static axes, each a level 0-3 (KernelFoundry, ICML 2026), found by our own weighted
regex patterns, one table per language family (SYCL C++, OpenCL C, CUDA, C++/OpenMP):

- ``memory``: 0 naive global; 1 coalesced/vectorised; 2 local/shared-memory tiling with
  barriers; 3 multi-level (register blocking, async copies, prefetch, double buffering).
- ``compute``: 0 multi-pass; 1 fused ops (FMA, native math); 2 single-pass/streaming (group
  reductions, online max/sum, Welford); 3 tiled/blocked/flash-style (matrix engines).
- ``parallelism``: 0 thread-level; 1 work-group level (barriers, broadcast, OpenMP threads);
  2 sub-group/SIMD-lane (shuffles, sub-group reduce, ``omp simd``); 3 hierarchical (warp tiling,
  work-group/sub-group size attributes, teams).

Scoring rule per axis: with ``w_p`` the weight of pattern ``p`` and ``P_l`` the patterns of
level ``l``, ``level = max({0} ∪ {l : Σ_{p ∈ P_l, p matches} w_p ≥ 1})``. Strong evidence has
weight 1; weak hints weigh 0.5 so two of them are needed.

A candidate module written by the lowering (``tools/lower``) is placed by its structure
instead (:mod:`structure`: tiling level, fusion, threading and work-group shape), since its
schedules share every idiom the patterns look for.

An optional measured axis, :func:`measured_bound`, buckets the roofline position of a profiled
run: ``r = (GFLOP/s / peak GFLOP/s) / (GB/s / peak GB/s)``, level 0 for ``r < 1/3`` (clearly
bandwidth-bound) up to 3 for ``r ≥ 3`` (clearly compute-bound).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from kernelwright.spec.peaks import MachinePeaks
from kernelwright.tools.evolve.structure import lowered_levels

AXES: tuple[str, ...] = ("memory", "compute", "parallelism")
LEVELS = 4
LANGUAGES: tuple[str, ...] = ("sycl", "opencl", "cuda", "cpp")
_ALIASES = {"c++": "cpp", "openmp": "cpp", "omp": "cpp", "ocl": "opencl", "cl": "opencl"}

# (level, weight, regex). Regexes run on the source with C/C++ comments removed.
Pattern = tuple[int, float, str]

# Shared fragments: a loop striding by a tile size (``k0 += TK``), a tree reduction loop
# (``off >>= 1``), an online-softmax rescale (``s = s * exp(m - v)``), a 2-D accumulator tile
# held in registers (register blocking).
_TILE_LOOP = (
    r"\bfor\s*\([^;]*;[^;]*;\s*\w+\s*\+=\s*"
    r"(?:TILE|BLOCK|T[KMN]|B[KMN]|TS|BS|tile|block)\w*\s*\)"
)
_TREE_LOOP = r"\bfor\s*\([^;]*;[^;]*>\s*0\s*;\s*\w+\s*(?:>>=\s*1|/=\s*2)\s*\)"
_ONLINE = r"\b(\w+)\s*=\s*\1\s*\*\s*(?:sycl::|std::)?(?:native::|native_|__)?expf?\s*\("
_ACC_TILE = r"\b(?:acc|reg|frag)\w*\s*\[\s*\w+\s*\]\s*\[\s*\w+\s*\]"

_SYCL_MEMORY: list[Pattern] = [
    (1, 1.0, r"\bsycl::vec\s*<|\bvec\s*<\s*\w+\s*,\s*\d+\s*>"),
    (1, 1.0, r"\bsycl::(?:float|int|half|double)\d\b|\b(?:float|int|half)[248]\b"),
    (1, 0.5, r"\bmulti_ptr\b|\.load\s*\(|\.store\s*\("),
    (1, 0.5, r"\balignas\s*\(|\b__restrict__\b|\brestrict\b"),
    (2, 1.0, r"\blocal_accessor\b|\bgroup_local_memory(?:_for_overwrite)?\b"),
    (2, 1.0, r"\blocal_ptr\b|access::target::local\b|\bwork_group_static\b"),
    (2, 0.5, r"\bgroup_barrier\s*\(|\.barrier\s*\(|\bbarrier\s*\("),
    (2, 0.5, r"\[\s*\w+\s*\+\s*1\s*\]\s*;"),  # bank-conflict padding: tile[N][N + 1]
    (3, 1.0, r"\bprefetch\s*\(|\basync_work_group_copy\b|\bjoint_matrix_load\b"),
    (3, 1.0, r"double[_ ]?buffer|\bping\b|\bpong\b|\[\s*2\s*\]\s*\[\s*\w+\s*\]\s*\["),
    (3, 1.0, _ACC_TILE),
]
_SYCL_COMPUTE: list[Pattern] = [
    (1, 1.0, r"\b(?:sycl::)?(?:fma|mad)\s*\(|\bsycl::native::\w+|\bnative_\w+\s*\("),
    (1, 0.5, r"\bsycl::(?:exp|rsqrt|fast_\w+)\s*\("),
    (2, 1.0, r"\breduce_over_group\b|\bjoint_reduce\b|\bsycl::reduction\b"),
    (2, 1.0, r"\b(?:running|online)_(?:max|sum)\b|\bwelford\b|\bm2\b"),
    (2, 1.0, _ONLINE),
    (2, 1.0, _TREE_LOOP),
    (2, 0.5, r"\b(?:inclusive|exclusive)_scan_over_group\b"),
    (3, 1.0, r"\bjoint_matrix\w*\b|\bflash\w*\b"),
    (3, 0.5, _TILE_LOOP),
    (3, 0.5, r"\b(?:acc|sum|c)\w*\s*\[\s*\w+\s*\]\s*\[\s*\w+\s*\]\s*\+?="),
]
_SYCL_PARALLELISM: list[Pattern] = [
    (1, 1.0, r"\bgroup_barrier\s*\(|\.barrier\s*\(|\bgroup_broadcast\b"),
    (1, 0.5, r"\bget_local_(?:id|linear_id|range)\b|\bget_group\s*\("),
    (2, 1.0, r"\bget_sub_group\b|\bsub_group\b|\bshift_group_(?:left|right)\b"),
    (2, 1.0, r"\bpermute_group_by_xor\b|\bselect_from_group\b|\breduce_over_group\b"),
    (3, 1.0, r"\breqd_sub_group_size\b|\breqd_work_group_size\b|\bsub_group_size\s*<"),
    (3, 1.0, r"\bwork_group_size\s*<|\bmax_work_group_size\b|\bwork_group_size_hint\b"),
]

_OPENCL_MEMORY: list[Pattern] = [
    (1, 1.0, r"\bvload\d+\b|\bvstore\d+\b|\b(?:float|int|half|uchar)(?:2|4|8|16)\b"),
    (1, 0.5, r"\brestrict\b|__attribute__\s*\(\(\s*aligned"),
    (2, 1.0, r"\b__local\b|\blocal\s+\w+\s+\w+\s*\["),
    (2, 0.5, r"\bbarrier\s*\(\s*CLK_LOCAL_MEM_FENCE|\bwork_group_barrier\b"),
    (2, 0.5, r"\[\s*\w+\s*\+\s*1\s*\]\s*;"),
    (3, 1.0, r"\basync_work_group_copy\b|\bprefetch\s*\(|\bwait_group_events\b"),
    (3, 1.0, r"double[_ ]?buffer|\bping\b|\bpong\b"),
    (3, 1.0, _ACC_TILE),
]
_OPENCL_COMPUTE: list[Pattern] = [
    (1, 1.0, r"\b(?:fma|mad)\s*\(|\bnative_\w+\s*\(|\bhalf_\w+\s*\("),
    (2, 1.0, r"\bwork_group_reduce_\w+|\bsub_group_reduce_\w+"),
    (2, 1.0, r"\b(?:running|online)_(?:max|sum)\b|\bwelford\b|\bm2\b"),
    (2, 1.0, _ONLINE),
    (2, 1.0, _TREE_LOOP),
    (3, 1.0, r"\bflash\w*\b|\bintel_sub_group_\w*mad\w*\b"),
    (3, 0.5, _TILE_LOOP),
    (3, 0.5, r"\b(?:acc|sum|c)\w*\s*\[\s*\w+\s*\]\s*\[\s*\w+\s*\]\s*\+?="),
]
_OPENCL_PARALLELISM: list[Pattern] = [
    (1, 1.0, r"\bbarrier\s*\(|\bwork_group_barrier\b|\bwork_group_broadcast\b"),
    (1, 0.5, r"\bget_local_id\b|\bget_group_id\b"),
    (2, 1.0, r"\bsub_group_\w+\s*\(|\bintel_sub_group_\w+\s*\(|\bget_sub_group_\w+\b"),
    (3, 1.0, r"\breqd_work_group_size\b|\bintel_reqd_sub_group_size\b"),
    (3, 1.0, r"\bwork_group_size_hint\b"),
]

_CUDA_MEMORY: list[Pattern] = [
    (1, 1.0, r"\b(?:float|int|half|uint)[24]\b|\bhalf2\b|\b__ldg\s*\("),
    (1, 0.5, r"\b__restrict__\b|\b__align__\s*\("),
    (2, 1.0, r"\b__shared__\b"),
    (2, 0.5, r"\b__syncthreads\s*\("),
    (2, 0.5, r"\[\s*\w+\s*\+\s*1\s*\]\s*;"),
    (3, 1.0, r"\bcp\.async\b|\b__pipeline_memcpy_async\b|\bmemcpy_async\b|\bcp_async\w*"),
    (3, 1.0, r"double[_ ]?buffer|\bping\b|\bpong\b|\[\s*2\s*\]\s*\[\s*\w+\s*\]\s*\["),
    (3, 1.0, r"\bprefetch\.global\b|\b__prefetch\w*\b|\bcuda::pipeline\b"),
    (3, 1.0, _ACC_TILE),
]
_CUDA_COMPUTE: list[Pattern] = [
    (1, 1.0, r"\bfmaf?\s*\(|\b__fmaf?_r\w\b|\b__(?:expf|logf|sinf|cosf|fdividef)\s*\("),
    (1, 0.5, r"\brsqrtf?\s*\(|\b__frcp_r\w\b"),
    (2, 1.0, r"\bcub::(?:Block|Warp)Reduce\b|\b__reduce_\w+_sync\b"),
    (2, 1.0, r"\b(?:running|online)_(?:max|sum)\b|\bwelford\b|\bm2\b"),
    (2, 1.0, _ONLINE),
    (2, 1.0, _TREE_LOOP),
    (3, 1.0, r"\bwmma::|\bmma_sync\b|\bmma\.sync\b|\bflash\w*\b"),
    (3, 0.5, _TILE_LOOP),
    (3, 0.5, r"\b(?:acc|sum|c)\w*\s*\[\s*\w+\s*\]\s*\[\s*\w+\s*\]\s*\+?="),
]
_CUDA_PARALLELISM: list[Pattern] = [
    (1, 1.0, r"\b__syncthreads\s*\(|\b__syncthreads_(?:or|and|count)\b"),
    (1, 0.5, r"\bthreadIdx\b.*\bblockDim\b|\bthis_thread_block\b"),
    (2, 1.0, r"\b__shfl_\w*sync\b|\b__ballot_sync\b|\b__reduce_\w+_sync\b"),
    (2, 1.0, r"\btiled_partition\b|\bthread_block_tile\b|\bcoalesced_group\b"),
    (3, 1.0, r"\b__launch_bounds__\b|\b__cluster_dims__\b|\bcluster_group\b"),
    (3, 1.0, r"\b(?:warp|wid|warp_id)\w*\s*=\s*threadIdx\.x\s*(?:/\s*(?:32|warpSize)|>>\s*5)"),
]

_CPP_MEMORY: list[Pattern] = [
    (1, 1.0, r"#\s*pragma\s+omp\s+(?:parallel\s+for\s+)?simd\b|\b_mm(?:256|512)?_\w+"),
    (1, 1.0, r"\b__m(?:128|256|512)\w*\b|__attribute__\s*\(\(\s*vector_size"),
    (1, 0.5, r"\b__restrict__\b|\balignas\s*\(|\bassume_aligned\b"),
    (2, 1.0, _TILE_LOOP),
    (2, 0.5, r"\b(?:tile|block|local)\w*\s*\[\s*\w+\s*\]\s*\[\s*\w+\s*\]"),
    (3, 1.0, r"\b__builtin_prefetch\s*\(|\b_mm_prefetch\s*\(|double[_ ]?buffer"),
    (3, 1.0, _ACC_TILE),
]
_CPP_COMPUTE: list[Pattern] = [
    (1, 1.0, r"\bstd::fmaf?\s*\(|\bfmaf?\s*\(|\b_mm\d*_fn?madd_\w+"),
    (2, 1.0, r"#\s*pragma\s+omp\s+[^\n]*\breduction\s*\(|\bstd::(?:reduce|transform_reduce)\b"),
    (2, 1.0, r"\b(?:running|online)_(?:max|sum)\b|\bwelford\b|\bm2\b"),
    (2, 1.0, _ONLINE),
    (2, 1.0, _TREE_LOOP),
    (3, 1.0, r"\bflash\w*\b|\bAMX\b|\b_tile_\w+\s*\("),
    (3, 0.5, _TILE_LOOP),
    (3, 0.5, r"\b(?:acc|sum|c)\w*\s*\[\s*\w+\s*\]\s*\[\s*\w+\s*\]\s*\+?="),
]
_CPP_PARALLELISM: list[Pattern] = [
    (1, 1.0, r"#\s*pragma\s+omp\s+parallel\b|\bstd::(?:thread|jthread|async)\b"),
    (2, 1.0, r"#\s*pragma\s+omp\s+(?:parallel\s+for\s+|for\s+)?simd\b|\b_mm(?:256|512)_\w+"),
    (3, 1.0, r"#\s*pragma\s+omp\s+[^\n]*\b(?:teams|collapse\s*\(|taskloop)\b"),
    (3, 1.0, r"#\s*pragma\s+omp\s+parallel\s+for\s+simd\b"),
]

TABLES: dict[str, dict[str, list[Pattern]]] = {
    "sycl": {"memory": _SYCL_MEMORY, "compute": _SYCL_COMPUTE, "parallelism": _SYCL_PARALLELISM},
    "opencl": {
        "memory": _OPENCL_MEMORY,
        "compute": _OPENCL_COMPUTE,
        "parallelism": _OPENCL_PARALLELISM,
    },
    "cuda": {"memory": _CUDA_MEMORY, "compute": _CUDA_COMPUTE, "parallelism": _CUDA_PARALLELISM},
    "cpp": {"memory": _CPP_MEMORY, "compute": _CPP_COMPUTE, "parallelism": _CPP_PARALLELISM},
}
_COMPILED: dict[str, dict[str, list[tuple[int, float, re.Pattern[str]]]]] = {
    lang: {axis: [(lv, w, re.compile(rx)) for lv, w, rx in pats] for axis, pats in t.items()}
    for lang, t in TABLES.items()
}
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_LANGUAGE_HINTS: dict[str, str] = {
    "cuda": r"__global__|threadIdx|blockIdx|__shfl_|backends import cuda|backends\.cuda",
    "sycl": r"\bsycl::|syclexp|SYCL_EXT_|nd_item|backends import sycl(?![^\n]*opencl)",
    "opencl": r"__kernel\b|\bget_global_id\s*\(|language\s*=\s*[\"']opencl",
}


class Descriptor(NamedTuple):
    """A kernel's static behaviour: one level 0-3 per axis."""

    memory: int
    compute: int
    parallelism: int


def normalize_language(language: str) -> str:
    """Map a backend or language name (``sycl``, ``c++``, ``auto``...) onto a pattern table."""
    lang = _ALIASES.get(language.lower(), language.lower())
    if lang not in LANGUAGES and lang != "auto":
        raise ValueError(
            f"unknown kernel language {language!r}: pass one of {', '.join(LANGUAGES)} or 'auto'"
        )
    return lang


def guess_language(source: str) -> str:
    """The language family a source most likely uses (``cpp`` when nothing else matches)."""
    scores = {lang: len(re.findall(rx, source)) for lang, rx in _LANGUAGE_HINTS.items()}
    best = max(scores, key=lambda k: scores[k])
    return best if scores[best] else "cpp"


def axis_level(source: str, language: str, axis: str) -> int:
    """The level of one axis: the highest level whose matched weights sum to at least 1."""
    text = _COMMENTS.sub("", source)
    lang = normalize_language(language)
    if lang == "auto":
        lang = guess_language(text)
    scores = [0.0] * LEVELS
    for level, weight, rx in _COMPILED[lang][axis]:
        if rx.search(text):
            scores[level] += weight
    return max([0] + [lv for lv in range(1, LEVELS) if scores[lv] >= 1.0])


def describe(source: str, language: str = "auto") -> Descriptor:
    """Place a kernel source (or a candidate module embedding it) on the three static axes.

    Args:
        source: kernel source text, or a Python candidate module holding it in strings.
        language: ``sycl``, ``opencl``, ``cuda``, ``cpp`` (aliases ``c++``/``openmp``) or
            ``auto`` to guess from the text.

    Example:
        >>> describe("__shared__ float t[256]; __syncthreads();", "cuda")
        Descriptor(memory=2, compute=0, parallelism=1)
    """
    structural = lowered_levels(source)  # a lowered module: its tiling, fusion, threading
    if structural is not None:
        return Descriptor(*structural)
    text = _COMMENTS.sub("", source)
    lang = normalize_language(language)
    if lang == "auto":
        lang = guess_language(text)
    return Descriptor(*(axis_level(text, lang, axis) for axis in AXES))


def _field(profile: object, name: str) -> float:
    value = profile.get(name) if isinstance(profile, Mapping) else getattr(profile, name, None)
    if value is None:
        raise ValueError(
            f"profile has no {name!r}: pass a mapping or object with achieved 'gbps' and 'gflops'"
        )
    return float(value)


def roofline_ratio(profile: object, peaks: MachinePeaks) -> float | None:
    """Compute-roof use over bandwidth-roof use, ``(F/F_peak) / (B/B_peak)``; None if idle."""
    gbps, gflops = _field(profile, "gbps"), _field(profile, "gflops")
    if gbps <= 0 and gflops <= 0:
        return None
    if gbps <= 0:
        return float("inf")
    return (gflops / peaks.gflops) / (gbps / peaks.bandwidth_gbps)


def measured_bound(profile: object, peaks: MachinePeaks) -> int | None:
    """Bucket a profiled run's roofline position: 0 strongly bandwidth-bound ... 3 compute-bound.

    Args:
        profile: a mapping or object with achieved ``gbps`` and ``gflops``.
        peaks: the device's roofs as plain numbers.

    Returns:
        0 for ``r < 1/3``, 1 for ``r < 1``, 2 for ``r < 3``, 3 otherwise (``r`` from
        :func:`roofline_ratio`); None when the profile shows neither traffic nor arithmetic.
    """
    r = roofline_ratio(profile, peaks)
    if r is None:
        return None
    return sum(r >= edge for edge in (1 / 3, 1.0, 3.0))
