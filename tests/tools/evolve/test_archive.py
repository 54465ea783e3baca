"""MapElitesArchive: replacement rules, persistence round trip, grid rendering."""

from __future__ import annotations

import json

import pytest

from kernelwright.spec import fitness
from kernelwright.spec.result import EvalResult, Level, Timing
from kernelwright.tools.evolve.archive import MapElitesArchive
from kernelwright.tools.evolve.islands import Elite, beats


def result(level: Level, speedup: float | None = None, flags=()) -> EvalResult:
    timing = None
    if speedup is not None:
        timing = Timing(
            reference_median_s=1e-3, reference_iqr_s=0, candidate_median_s=1e-3 / speedup,
            candidate_iqr_s=0, repeats=10, speedup=speedup, speedup_low=speedup,
            speedup_high=speedup,
        )  # fmt: skip
    return EvalResult(task_name="t", candidate_id="x", backend="sycl", level=level,
                      timing=timing, flags=list(flags))  # fmt: skip


def test_fitness_is_ladder_plus_speedup_for_correct_only():
    assert fitness(5, 2.0) == 7.0
    assert fitness(4, 2.0) == 4.0
    assert fitness(5, None) == 5.0


def test_empty_cell_takes_a_correct_candidate_and_a_stepping_stone():
    a = MapElitesArchive()
    assert a.add("c1", (1, 1, 1), result(Level.CORRECT, 1.5))
    assert a.add("c2", (0, 0, 0), result(Level.VALUE_MISMATCH))
    assert a.get((0, 0, 0)).level == 4
    strict = MapElitesArchive(admit_incorrect=False)
    assert not strict.add("c2", (0, 0, 0), result(Level.VALUE_MISMATCH))
    assert strict.cells() == {}


def test_occupied_cell_falls_only_to_a_fitter_correct_candidate():
    a = MapElitesArchive(n_islands=1)
    a.add_scored("slow", (2, 0, 1), Level.CORRECT, 1.2)
    assert not a.add_scored("slower", (2, 0, 1), Level.CORRECT, 1.1)
    assert not a.add_scored("same", (2, 0, 1), Level.CORRECT, 1.2)  # ties keep the incumbent
    assert not a.add_scored("wrong", (2, 0, 1), Level.VALUE_MISMATCH, None)
    assert a.add_scored("fast", (2, 0, 1), Level.CORRECT, 3.0)
    assert a.get((2, 0, 1)).candidate_id == "fast"


def test_incorrect_stepping_stone_is_replaced_by_correct_but_not_by_incorrect():
    a = MapElitesArchive(n_islands=1)
    a.add_scored("shape", (0, 1, 0), Level.SHAPE_MISMATCH, None)
    assert not a.add_scored("value", (0, 1, 0), Level.VALUE_MISMATCH, None)
    assert a.add_scored("ok", (0, 1, 0), Level.CORRECT, 0.5)  # 5.5 > 3
    assert a.get((0, 1, 0)).candidate_id == "ok"


def test_rejecting_flags_make_a_fast_result_incorrect():
    a = MapElitesArchive(n_islands=1)
    a.add("honest", (0, 0, 0), result(Level.CORRECT, 1.1))
    assert not a.add("cheat", (0, 0, 0), result(Level.CORRECT, 50.0, flags=["stale_output"]))
    assert a.best().candidate_id == "honest"


def test_beats_rule_table():
    ok, bad = Elite("a", (0,), 5, 2.0), Elite("b", (0,), 4, None)
    assert beats(ok, None, admit_incorrect=False)
    assert not beats(bad, None, admit_incorrect=False)
    assert beats(bad, None, admit_incorrect=True)
    assert beats(ok, bad, admit_incorrect=True)
    assert not beats(bad, ok, admit_incorrect=True)


def test_global_view_takes_the_fittest_elite_over_islands():
    a = MapElitesArchive(n_islands=3)
    a.add_scored("i0", (1, 1, 1), 5, 1.0, island=0)
    a.add_scored("i2", (1, 1, 1), 5, 2.0, island=2)
    assert a.get((1, 1, 1)).candidate_id == "i2"
    assert [e.candidate_id for e in a.elites(island=0)] == ["i0"]
    assert a.coverage == 1 / 64


def test_cells_are_validated():
    a = MapElitesArchive()
    with pytest.raises(ValueError, match="does not fit"):
        a.add_scored("x", (4, 0, 0), 5, 1.0)
    with pytest.raises(ValueError, match="does not fit"):
        a.add_scored("x", (0, 0), 5, 1.0)
    with pytest.raises(ValueError, match="island 9"):
        a.add_scored("x", (0, 0, 0), 5, 1.0, island=9)


def test_measured_axis_extends_the_key():
    a = MapElitesArchive(axes=("memory", "compute", "parallelism", "bound"))
    with pytest.raises(ValueError, match="bound"):
        a.cell_of((1, 2, 3))
    cell = a.cell_of((1, 2, 3), bound=0)
    assert cell == (1, 2, 3, 0)
    a.add_scored("m", cell, 5, 1.3)
    grid = a.render_grid()
    assert "1.30x" in grid and grid.count("\n") == 2  # header, column header, one row


def _populated() -> MapElitesArchive:
    a = MapElitesArchive(n_islands=2, migration_interval=2, seed=7)
    a.add_scored("a" * 16, (0, 0, 0), 5, 1.25, island=0)
    a.add_scored("b" * 16, (3, 2, 1), 4, None, island=1)
    a.end_generation()
    a.add_scored("c" * 16, (1, 0, 3), 5, 2.5, island=1)
    return a


def test_json_round_trip_is_exact(tmp_path):
    a = _populated()
    b = MapElitesArchive.from_json(a.to_json())
    assert b.to_json() == a.to_json()
    assert b.cells() == a.cells() and b.generation == 1
    a.save(tmp_path / "run" / "archive.json")
    c = MapElitesArchive.load(tmp_path / "run" / "archive.json")
    assert c.to_json() == a.to_json()
    # the restored generator continues the same stream
    assert a.rng.integers(1 << 30) == c.rng.integers(1 << 30)


def test_json_holds_only_small_data():
    state = json.loads(_populated().to_json())
    elite = state["islands"][0][0]
    assert set(elite) == {"candidate_id", "cell", "level", "speedup", "generation", "island"}


def test_json_version_mismatch_is_reported():
    state = json.loads(_populated().to_json())
    state["version"] = 99
    with pytest.raises(ValueError, match="format 99"):
        MapElitesArchive.from_json(json.dumps(state))


def test_render_grid_shows_cells_elites_and_speedups():
    text = _populated().render_grid()
    lines = text.splitlines()
    assert lines[0].startswith("archive: 3/64 cells") and "best 2.50x (cccccccccccccccc)" in text
    assert len(lines) == 2 + 16
    row = next(line for line in lines if line.startswith("memo=3 comp=2"))
    assert row.split()[2:] == [".", "L4", ".", "."]
    assert MapElitesArchive().render_grid().startswith("archive: 0/64 cells")


def test_summary_is_small_and_json_able():
    s = _populated().summary()
    assert json.loads(json.dumps(s)) == s
    assert s["cells"] == 3 and s["island_sizes"] == [1, 2] and s["best"]["speedup"] == 2.5
    assert MapElitesArchive().summary()["best"] is None
