"""Cross-check: descriptors tell the lowered program's row strategies apart (the archive's cells
are what the R^3 outer level draws parents from)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.spec import Task
from kernelwright.tools.evolve.descriptors import describe
from kernelwright.tools.lower import lower_task

TASK = Path(__file__).resolve().parents[3] / "examples" / "tasks" / "l1_row_softmax.py"


@pytest.fixture(scope="module")
def softmax():
    return lower_task(Task.from_path(TASK), "sycl")


def test_cooperative_row_strategies_land_in_other_cells(softmax):
    # lowered candidates are placed by structure (tools/evolve/structure.py): a row per
    # work-item and a row per cooperating group are different schedules, so different cells
    assert {"item", "group", "subgroup"} <= set(softmax.space["g0.strategy"])
    level = {s: describe(softmax.with_params({"g0.strategy": s}).candidate.source)
             for s in ("item", "group", "subgroup")}
    assert level["item"] != level["group"]
    assert len(set(level.values())) >= 2
