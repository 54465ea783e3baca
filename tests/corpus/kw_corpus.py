"""The lowering corpus: where its task files live, their families, and how to pick some.

Shared by the corpus tests and ``benchmarks/corpus_coverage.py`` (which imports this file by
path, so that the benchmark does not depend on ``tests`` being a package).
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

# What CI verifies through the harness (every task is lowered for sycl and cpp regardless):
# on cpp every task; on sycl every SYCL_STRIDE-th task of each family in name order, starting
# with the first (so every family, at least a third of each). The SYCL build (icpx, ~4-5 s a
# source) is what a sycl verdict adds to a task's cpp one (worker start, g++, verification);
# docs/CORPUS.md has the measured costs. KW_CORPUS_ALL=1 verifies every task on both.
SYCL_STRIDE = 3


def task_paths(family: str | None = None, limit: int | None = None) -> list[Path]:
    """Task files, sorted by name; only ``family``'s when given; at most ``limit`` of them."""
    paths = sorted(TASK_DIR.glob("*.py"))
    if family is not None:
        paths = [p for p in paths if family_of(p) == family]
    return paths[:limit] if limit is not None else paths


def verified(backend: str, everything: bool = False) -> list[Path]:
    """The tasks CI verifies through the harness on ``backend`` (the rule above)."""
    paths = task_paths()
    if everything or backend != "sycl":
        return paths
    position: dict[str | None, int] = {}
    picked = []
    for p in paths:
        fam = family_of(p)
        if position.get(fam, 0) % SYCL_STRIDE == 0:
            picked.append(p)
        position[fam] = position.get(fam, 0) + 1
    return picked


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
