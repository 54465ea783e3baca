"""The heterogeneous relational graph of one invocation."""

from __future__ import annotations

import numpy as np

from kernelwright.tools.gpusim.records import KernelInfo, WarpStream
from kernelwright.tools.sampler.hrg import (
    NUM_FEATURES,
    NUM_RELATIONS,
    R_CTRL,
    R_MEM,
    R_NEXT,
    R_RAW,
    GraphOptions,
    build_graph,
)
from tests.tools.sampler.conftest import _elementwise, _loop_body

INFO = KernelInfo(1, "k", (4, 1, 1), (64, 1, 1))


def _warps(body, ctas=2, warps=2):
    return [WarpStream((c, 0, 0), w, tuple(body)) for c in range(ctas) for w in range(warps)]


def test_graph_has_every_relation_and_kernel_node_first():
    g = build_graph(INFO, _warps(_loop_body(3, 0x1000)))
    assert g.x.shape[1] == NUM_FEATURES
    assert set(np.unique(g.edge_type)) == set(range(NUM_RELATIONS))
    assert g.node_type[0] == 3  # kernel node
    assert g.edge_index.max() < g.num_nodes


def test_loop_edges_raw_control_and_memory_line():
    g = build_graph(INFO, _warps(_loop_body(3, 0x1000), ctas=1, warps=1))
    pc_node = {16 * i: 1 + 1 + i for i in range(8)}  # kernel, warp, then PCs in order
    # nodes: 0 kernel, 1 warp, 2.. instruction nodes sorted by PC
    edges = {(int(s), int(d), int(r)) for s, d, r in zip(*g.edge_index, g.edge_type, strict=True)}
    assert (pc_node[0x10], pc_node[0x20], R_NEXT) in edges
    assert (pc_node[0x10], pc_node[0x20], R_RAW) in edges  # LDG R4 -> FFMA reads R4
    assert (pc_node[0x50], pc_node[0x10], R_CTRL) in edges  # BRA back to the loop head
    assert (pc_node[0x10], pc_node[0x60], R_MEM) in edges  # STG touches the loaded line


def test_identical_invocations_share_a_digest_and_loop_length_changes_it():
    a = build_graph(INFO, _warps(_loop_body(3, 0x1000)))
    b = build_graph(INFO, _warps(_loop_body(3, 0x1000)))
    c = build_graph(INFO, _warps(_loop_body(5, 0x1000)))
    d = build_graph(INFO, _warps(_elementwise(0x1000)))
    assert a.digest == b.digest
    assert len({a.digest, c.digest, d.digest}) == 3


def test_graph_is_bounded_by_deterministic_warp_sampling():
    many = _warps(_loop_body(2, 0x1000), ctas=8, warps=4)
    small = build_graph(INFO, many, GraphOptions(max_ctas=1, max_warps_per_cta=1))
    large = build_graph(INFO, many, GraphOptions(max_ctas=4, max_warps_per_cta=4))
    assert int((small.node_type == 1).sum()) == 1
    assert int((large.node_type == 1).sum()) == 16
    assert int((large.node_type == 2).sum()) == 4
    again = build_graph(INFO, many, GraphOptions(max_ctas=1, max_warps_per_cta=1))
    assert again.digest == small.digest
