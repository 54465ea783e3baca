"""The lowering corpus: where its task files live, their families, and how to pick some.

Shared by the corpus tests and ``benchmarks/coverage.py`` (which imports this file by path, so
that the benchmark does not depend on ``tests`` being a package).
"""

from __future__ import annotations

import ast
from pathlib import Path

TASK_DIR = Path(__file__).resolve().parent / "tasks"

# family -> what it covers (docs/CORPUS.md lists the tasks of each)
FAMILIES: dict[str, str] = {
    "pointwise": "elementwise activations and chains, broadcasting, masks",
    "reduction": "sum/mean/max/min/argmax/argmin/var/std/norms over last, middle, several dims",
    "softmax": "softmax, log-softmax, softmin, logsumexp over any dim",
    "norm": "layer/group/instance/batch (training mode)/RMS norms, incl. several trailing dims",
    "scan": "cumsum/cumprod, reverse, exclusive, masked, along any dim",
    "pooling": "max (with indices) and average pooling 1/2/3-D, ceil mode, dilation, global",
    "loss": "MSE, cross-entropy, KL, Huber, smooth L1, hinge, cosine, triplet, BCE, NLL",
    "layout": "permute, transpose, cat, stack, flip, roll, gather, index_select, slicing",
    "gemm": "mm, bmm, addmm, mat-vec, batched 4-D, linear, odd sizes",
    "gemm_epilogue": "L2 fusions: linear + bias + activation / norm / reduction / scale",
    "conv": "conv 1/2/3-D incl. transposed, grouped, depthwise, dilated, strided, padded",
    "conv_epilogue": "L2 fusions: convolution + norm / activation / pooling / reduction",
}

# What CI lowers and verifies on every run (4 tasks per family, chosen for the hard cases the
# issue names): the whole corpus costs ~10 s per task on 2 quiet cores (two captures, a worker,
# a ~3 s SYCL build), ~30 min in all; KW_CORPUS_ALL=1 runs all of it (docs/CORPUS.md).
CI_SAMPLE: tuple[str, ...] = (
    "pw_hardtanh_batch1", "pw_gelu_erf_4d", "pw_broadcast_three", "pw_where_mask",
    "red_sum_middle", "red_mean_two_dims", "red_argmax_middle", "red_var_last",
    "sm_softmax_middle", "sm_logsoftmax_dim0", "sm_logsumexp_two_dims",
    "sm_softmax_temperature_batch1",
    "norm_layernorm_three_dims", "norm_batchnorm2d_train", "norm_groupnorm_5d",
    "norm_rmsnorm_channels",
    "scan_cumsum_reverse", "scan_cumsum_exclusive", "scan_cumsum_masked", "scan_cumprod",
    "pool_max2d_indices", "pool_max3d", "pool_avg2d_exclude_pad", "pool_max2d_ceil_dilated",
    "loss_cross_entropy", "loss_kl_div", "loss_huber", "loss_triplet_margin",
    "layout_cat_channels", "layout_gather", "layout_strided_slice", "layout_pixel_shuffle",
    "gemm_mm_odd", "gemm_bmm", "gemm_matvec", "gemm_vecmat_batch1",
    "l2_linear_gelu_vendor", "l2_linear_batchnorm_relu", "l2_linear_layernorm",
    "l2_attention_small",
    "conv2d_grouped", "conv2d_depthwise", "convt2d_output_padding", "conv3d_strided_padded",
    "l2_conv2d_batchnorm_relu", "l2_conv2d_groupnorm_pool_clamp",
    "l2_convt3d_scale_batchnorm_avgpool", "l2_depthwise_pointwise_relu6_vendor",
)


def task_paths(family: str | None = None, limit: int | None = None) -> list[Path]:
    """Task files, sorted by name; only ``family``'s when given; at most ``limit`` of them."""
    paths = sorted(TASK_DIR.glob("*.py"))
    if family is not None:
        paths = [p for p in paths if family_of(p) == family]
    return paths[:limit] if limit is not None else paths


def ci_paths(everything: bool) -> list[Path]:
    """The tasks the lowering tests check: all of them, or ``CI_SAMPLE``."""
    paths = task_paths()
    return paths if everything else [p for p in paths if p.stem in CI_SAMPLE]


def family_of(path: Path) -> str | None:
    """The task's module-level ``FAMILY = "..."`` constant, read without importing the file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "FAMILY" for t in node.targets
        ):
            value = node.value
            return value.value if isinstance(value, ast.Constant) else None
    return None


def spread(paths: list[Path], per_family: int) -> list[Path]:
    """The first ``per_family`` tasks of every family (a small sample that covers them all)."""
    seen: dict[str | None, int] = {}
    picked = []
    for p in paths:
        fam = family_of(p)
        if seen.get(fam, 0) < per_family:
            picked.append(p)
            seen[fam] = seen.get(fam, 0) + 1
    return picked
