"""Rodinia-style BFS: two launches per level; work follows the frontier size."""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelwright.tools.gpusim.workloads.base import Launcher, Workload, blocks


class BfsWorkload(Workload):
    """Breadth-first search costs from node 0 on a random graph of ``nodes`` nodes."""

    name = "bfs"
    source = "bfs.cu"
    defaults = {"nodes": 2048, "degree": 3, "block": 256}

    def inputs(self, rng: np.random.Generator, p: dict[str, Any]) -> dict[str, np.ndarray]:
        n = p["nodes"]
        counts = rng.integers(1, 2 * p["degree"], n).astype(np.int32)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int32)
        # a chain keeps the graph connected-ish and deep; random edges add width
        edges = rng.integers(0, n, int(counts.sum())).astype(np.int32)
        edges[starts] = (np.arange(n) + 1) % n
        return {"starts": starts, "counts": counts, "edges": edges}

    def _execute(self, launch: Launcher, p: dict[str, Any], d: dict[str, np.ndarray]):
        n, bs = p["nodes"], p["block"]
        mask, updating, visited = (np.zeros(n, np.int32) for _ in range(3))
        cost = np.full(n, -1, np.int32)
        mask[0] = visited[0] = 1
        cost[0] = 0
        over = np.ones(1, np.int32)
        grid = blocks(n, bs)
        while over[0]:
            over[0] = 0
            launch("bfs_expand", grid, bs, d["starts"], d["counts"], d["edges"], mask, updating,
                   visited, cost, n)  # fmt: skip
            launch("bfs_update", grid, bs, mask, updating, visited, over, n)
        return {"cost": cost}

    def reference(self, p: dict[str, Any], d: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        n = p["nodes"]
        cost = np.full(n, -1, np.int32)
        cost[0] = 0
        frontier = np.array([0])
        level = 0
        while frontier.size:
            level += 1
            nxt = np.concatenate([d["edges"][d["starts"][u] : d["starts"][u] + d["counts"][u]]
                                  for u in frontier])  # fmt: skip
            nxt = np.unique(nxt[cost[nxt] < 0])
            cost[nxt] = level
            frontier = nxt
        return {"cost": cost}
