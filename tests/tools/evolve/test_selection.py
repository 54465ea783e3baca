"""ParentSelector: mode ratios, softmax exploitation, below-median exploration, inspirations."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from kernelwright.tools.evolve.archive import MapElitesArchive
from kernelwright.tools.evolve.selection import Mode, ParentSelector, below_median


def archive() -> MapElitesArchive:
    a = MapElitesArchive(n_islands=2)
    speeds = [0.5, 0.8, 1.0, 1.2, 1.5, 2.0, 3.0, 4.0]
    for i, s in enumerate(speeds):
        a.add_scored(f"c{i}", (i % 4, i // 4, 0), 5, s, island=i % 2)
    return a


def test_mode_frequencies_match_the_ratios():
    sel, a = ParentSelector(seed=123), archive()
    counts = Counter(sel.select(a).mode for _ in range(4000))
    # binomial std for p=0.7, n=4000 is about 0.007: 4 sigma bounds
    assert counts[Mode.EXPLORE] / 4000 == pytest.approx(0.2, abs=0.03)
    assert counts[Mode.EXPLOIT] / 4000 == pytest.approx(0.7, abs=0.03)
    assert counts[Mode.UNIFORM] / 4000 == pytest.approx(0.1, abs=0.02)


def test_exploit_follows_the_softmax_of_fitness():
    sel, a = ParentSelector(explore=0, exploit=1, uniform=0, seed=5), archive()
    picks = Counter(sel.select(a).parent.candidate_id for _ in range(4000))
    p = sel.softmax(a.elites())
    ids = [e.candidate_id for e in a.elites()]
    top = ids[int(np.argmax(p))]
    assert top == "c7"
    assert picks["c7"] / 4000 == pytest.approx(p.max(), abs=0.03)
    assert picks["c7"] > picks["c6"] > picks["c0"]


def test_explore_draws_below_median_cells_of_the_working_island():
    sel, a = ParentSelector(explore=1, exploit=0, uniform=0, seed=9), archive()
    island1 = a.elites(island=1)  # c1, c3, c5, c7: speedups 0.8, 1.2, 2.0, 4.0
    allowed = {e.candidate_id for e in below_median(island1)}
    assert allowed == {"c1", "c3"}
    picks = {sel.select(a, island=1).parent.candidate_id for _ in range(200)}
    assert picks == allowed


def test_uniform_covers_every_elite_evenly():
    sel, a = ParentSelector(explore=0, exploit=0, uniform=1, seed=2), archive()
    picks = Counter(sel.select(a).parent.candidate_id for _ in range(4000))
    assert len(picks) == 8 and min(picks.values()) > 400


def test_inspirations_come_from_other_cells_and_are_distinct():
    sel, a = ParentSelector(seed=4), archive()
    for _ in range(100):
        s = sel.select(a)
        cells = [e.cell for e in s.inspirations]
        assert len(s.inspirations) == 2 and s.parent.cell not in cells
        assert len(set(cells)) == 2


def test_one_elite_archive_has_no_inspirations():
    a = MapElitesArchive(n_islands=1)
    a.add_scored("only", (0, 0, 0), 5, 1.0)
    s = ParentSelector(seed=0).select(a)
    assert s.parent.candidate_id == "only" and s.inspirations == []


def test_same_seed_same_choices_and_bad_settings_rejected():
    a = archive()
    s1, s2 = ParentSelector(seed=11), ParentSelector(seed=11)
    assert [s1.select(a) for _ in range(50)] == [s2.select(a) for _ in range(50)]
    with pytest.raises(ValueError, match="sum to 1"):
        ParentSelector(explore=0.5, exploit=0.5, uniform=0.5)
    with pytest.raises(ValueError, match="empty"):
        ParentSelector().select(MapElitesArchive())
