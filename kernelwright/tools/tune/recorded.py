"""Recorded timing tables: evaluate a parameter set by looking up a measured (or synthetic) result.

A table is measured once per (task, schedule parameters) with the real harness and then replays
as an ``evaluate`` callable, so search strategies can be compared over many seeds at no cost
(the record-replay idea of R^3 applied to the tuner itself). ``synthetic_table`` builds a table
from a smooth analytic cost model with an infeasible region, for tests and as a fallback.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kernelwright.spec.result import EvalResult, Level, Timing
from kernelwright.tools.tune.base import params_key
from kernelwright.tools.tune.space import SearchSpace

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kernelwright.tools.tune.space import Scalar


@dataclass(frozen=True)
class RecordedTable:
    """Per-parameter-set outcome of one task: correctness level and speedup.

    Attributes:
        task: task name.
        declared: the parameter declaration (categorical choices per name).
        rows: ``params_key(params) -> [level, speedup or None]``.
        reference_s: the reference's median time, used to rebuild timings.
        source: how the table was made (``measured`` or ``synthetic:...``).
    """

    task: str
    declared: dict[str, list[Scalar]]
    rows: dict[str, list] = field(default_factory=dict)
    reference_s: float = 1e-3
    source: str = "measured"

    def space(self) -> SearchSpace:
        return SearchSpace.from_declared(self.declared)

    def result(self, params: Mapping[str, Scalar]) -> EvalResult:
        """The recorded verdict for ``params`` as an ``EvalResult`` (candidate id = params key)."""
        key = params_key(params)
        if key not in self.rows:
            raise KeyError(f"{key} was not recorded for task {self.task}: re-record the table")
        level, speedup = self.rows[key]
        timing = None
        if speedup is not None:
            cand = self.reference_s / speedup
            timing = Timing(
                reference_median_s=self.reference_s, reference_iqr_s=0.0,
                candidate_median_s=cand, candidate_iqr_s=0.0, repeats=1,
                speedup=speedup, speedup_low=speedup, speedup_high=speedup,
            )  # fmt: skip
        return EvalResult(task_name=self.task, candidate_id=key, backend="recorded",
                          level=Level(level), timing=timing)  # fmt: skip

    def best(self) -> float:
        """The highest speedup of any correct entry (the grid's best)."""
        return max(s for lv, s in self.rows.values() if lv == Level.CORRECT and s is not None)

    def to_dict(self) -> dict:
        return {"task": self.task, "declared": self.declared, "rows": self.rows,
                "reference_s": self.reference_s, "source": self.source}  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict) -> RecordedTable:
        return cls(**d)


def save_tables(tables: list[RecordedTable], path: str | Path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps([t.to_dict() for t in tables], indent=1))


def load_tables(path: str | Path) -> list[RecordedTable]:
    return [RecordedTable.from_dict(d) for d in json.loads(Path(path).read_text())]


def synthetic_table(
    task: str,
    declared: Mapping[str, list[Scalar]],
    seed: int,
    limit: float | None = None,
    noise: float = 0.03,
) -> RecordedTable:
    """An analytic timing table over categorical choices.

    Each parameter ``p`` gets a random preferred position ``o_p`` and sensitivity ``a_p``; with
    ``u_p`` the normalised distance of the chosen position from ``o_p``, the time is
    ``t = Π_p (1 + a_p u_p²) · (1 + b u_0 u_1) · exp(ε)``, ``ε ~ N(0, noise²)``. Points whose
    product of the first two numeric values exceeds ``limit`` fail to build (an infeasible
    region, like too much shared memory); speedups are scaled so the best is about 3×.
    """
    rng = np.random.default_rng(seed)
    names = list(declared)
    opt = {n: int(rng.integers(len(declared[n]))) for n in names}
    sens = {n: float(rng.uniform(0.3, 3.0)) for n in names}
    inter = float(rng.uniform(0.0, 2.0))
    space = SearchSpace.from_declared(declared)
    times: dict[str, float | None] = {}
    for params in space.grid():
        u = [abs(declared[n].index(params[n]) - opt[n]) / max(len(declared[n]) - 1, 1)
             for n in names]  # fmt: skip
        t = math.prod(1 + sens[n] * ui**2 for n, ui in zip(names, u, strict=True))
        t *= (1 + inter * u[0] * u[1]) * math.exp(rng.normal(0.0, noise))
        infeasible = limit is not None and _first_two_product(params, names) > limit
        times[params_key(params)] = None if infeasible else t
    fastest = min(t for t in times.values() if t is not None)
    rows = {k: ([Level.BUILD_FAILED, None] if t is None else [Level.CORRECT, 3.0 * fastest / t])
            for k, t in times.items()}  # fmt: skip
    return RecordedTable(task, {n: list(v) for n, v in declared.items()}, rows,
                         source=f"synthetic:seed={seed}")  # fmt: skip


def _first_two_product(params: Mapping[str, Scalar], names: list[str]) -> float:
    nums = [float(params[n]) for n in names if isinstance(params[n], int | float)][:2]
    return math.prod(nums)
