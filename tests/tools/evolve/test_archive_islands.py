"""Island migration: every M generations, the top ceil(r * n) elites move along a ring."""

from __future__ import annotations

import numpy as np

from kernelwright.tools.evolve.archive import MapElitesArchive
from kernelwright.tools.evolve.islands import Elite, Island, migrate


def test_migration_happens_only_every_m_generations():
    a = MapElitesArchive(n_islands=2, migration_interval=3, migration_rate=1.0)
    a.add_scored("x", (1, 1, 1), 5, 2.0, island=0)
    assert a.end_generation() == 0
    assert a.end_generation() == 0
    assert a.elites(island=1) == []
    assert a.end_generation() == 1  # generation 3
    assert [e.candidate_id for e in a.elites(island=1)] == ["x"]


def test_rate_limits_emigrants_to_the_fittest():
    a = MapElitesArchive(n_islands=2, migration_interval=1, migration_rate=0.3)
    for i, s in enumerate([1.0, 3.0, 2.0, 1.5, 1.2, 1.1, 0.9, 0.8, 0.7, 0.6]):
        a.add_scored(f"c{i}", (i % 4, i // 4, 0), 5, s, island=0)
    assert a.end_generation() == 3  # ceil(0.3 * 10)
    moved = sorted(e.candidate_id for e in a.elites(island=1))
    assert moved == ["c1", "c2", "c3"]


def test_ring_topology_and_replacement_rule_on_arrival():
    islands = [Island(i) for i in range(3)]
    islands[0].offer(Elite("a", (0, 0, 0), 5, 2.0))
    islands[1].offer(Elite("b", (0, 0, 0), 5, 3.0))  # fitter incumbent on the receiver
    islands[2].offer(Elite("c", (1, 0, 0), 4, None))
    placed = migrate(islands, 1.0, np.random.default_rng(0))
    assert islands[1].cells[(0, 0, 0)].candidate_id == "b"  # a lost against b
    assert islands[2].cells[(0, 0, 0)].candidate_id == "b"  # b reached island 2
    assert islands[0].cells[(1, 0, 0)].candidate_id == "c"  # c wrapped around to island 0
    assert placed == 2


def test_single_island_or_zero_rate_moves_nothing():
    one = [Island(0)]
    one[0].offer(Elite("a", (0, 0, 0), 5, 2.0))
    assert migrate(one, 1.0, np.random.default_rng(0)) == 0
    two = [Island(0), Island(1)]
    two[0].offer(Elite("a", (0, 0, 0), 5, 2.0))
    assert migrate(two, 0.0, np.random.default_rng(0)) == 0


def test_migration_state_survives_persistence():
    a = MapElitesArchive(n_islands=2, migration_interval=2, migration_rate=1.0, seed=3)
    a.add_scored("x", (0, 1, 2), 5, 1.5, island=1)
    a.end_generation()
    b = MapElitesArchive.from_json(a.to_json())
    assert a.end_generation() == b.end_generation() == 1
    assert a.cells() == b.cells() and a.to_json() == b.to_json()
