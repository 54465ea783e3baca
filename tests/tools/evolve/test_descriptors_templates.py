"""Cross-check: descriptors tell the variants of the shipped kernel templates apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.templates import get_template
from kernelwright.testing.template_specs import SPECS
from kernelwright.tools.evolve.descriptors import describe

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def render():
    def _render(template: str, task: str, **params):
        return get_template(template).render(params, SPECS[task])

    return _render


def test_vector_width_raises_memory_level(render):
    scalar = describe(render("sycl.elementwise_vec", "l1_gelu", vec=1))
    vector = describe(render("sycl.elementwise_vec", "l1_gelu", vec=4))
    assert (scalar.memory, vector.memory) == (0, 1)


def test_group_reduce_versus_local_tree(render):
    group = describe(render("sycl.rowwise_norm_wg", "l1_row_softmax", reduction="group"))
    tree = describe(render("sycl.rowwise_norm_wg", "l1_row_softmax", reduction="tree"))
    assert group.parallelism == 2 and tree.parallelism == 1
    assert group.compute == tree.compute == 2


def test_gemm_staging_moves_compute_and_parallelism(render):
    local = describe(render("sycl.gemm_tiled", "l1_matmul", staging="local"))
    none = describe(render("sycl.gemm_tiled", "l1_matmul", staging="none"))
    assert local == (3, 3, 1)
    assert none.compute < local.compute and none.parallelism < local.parallelism
