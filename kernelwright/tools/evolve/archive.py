"""MAP-Elites archive with islands (Mouret & Clune 2015; KernelFoundry, ICML 2026).

Each island keeps one elite per cell of the descriptor grid; the archive's global view is the
fittest elite per cell over all islands. Fitness is ``F = ℓ + 𝟙[ℓ = 5] · s`` (correctness
ladder level ℓ, speedup s); a cell's elite is replaced only by a strictly fitter correct
candidate. Every ``M`` generations each island sends its top ``ceil(r · n)`` elites to the
next island in a ring.

Only small data is stored (ids, cells, levels, speedups): sources stay in the caller's
content-addressed store, so the JSON stays a few kilobytes.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kernelwright.tools.evolve.descriptors import AXES, LEVELS
from kernelwright.tools.evolve.islands import Cell, Elite, Island, migrate

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kernelwright.spec.result import EvalResult

logger = logging.getLogger(__name__)
FORMAT_VERSION = 1
MEASURED_AXIS = "bound"


class MapElitesArchive:
    """Quality-diversity archive: the best candidate found for every behaviour cell.

    Args:
        axes: axis names; the default three static axes, or add ``"bound"`` for the measured
            roofline axis (:func:`~kernelwright.tools.evolve.descriptors.measured_bound`).
        levels: bins per axis.
        n_islands: independent sub-populations.
        migration_interval: generations between migrations (``M``).
        migration_rate: share of each island's elites that emigrates (``r``).
        admit_incorrect: let incorrect candidates fill EMPTY cells as stepping stones.
        seed: seed of the archive's own generator (migration order).

    Example:
        >>> a = MapElitesArchive(n_islands=2)
        >>> a.add_scored("c0ffee", (2, 1, 0), level=5, speedup=1.7)
        True
        >>> a.best().candidate_id
        'c0ffee'
    """

    def __init__(
        self,
        axes: Sequence[str] = AXES,
        levels: int = LEVELS,
        n_islands: int = 4,
        migration_interval: int = 10,
        migration_rate: float = 0.1,
        admit_incorrect: bool = True,
        seed: int = 0,
    ) -> None:
        if n_islands < 1 or migration_interval < 1 or not 0 <= migration_rate <= 1:
            raise ValueError(
                "bad island settings: need n_islands >= 1, migration_interval >= 1 and "
                f"0 <= migration_rate <= 1 (got {n_islands}, {migration_interval}, "
                f"{migration_rate})"
            )
        self.axes = tuple(axes)
        self.levels = levels
        self.migration_interval = migration_interval
        self.migration_rate = migration_rate
        self.admit_incorrect = admit_incorrect
        self.seed = seed
        self.generation = 0
        self.rng = np.random.default_rng(seed)
        self.islands = [Island(i, admit_incorrect) for i in range(n_islands)]

    def __repr__(self) -> str:
        return (
            f"MapElitesArchive(axes={self.axes}, islands={len(self.islands)}, "
            f"cells={len(self.cells())}/{self.levels ** len(self.axes)}, "
            f"generation={self.generation})"
        )

    # -- adding -------------------------------------------------------------------------------
    def cell_of(self, descriptor: Sequence[int], bound: int | None = None) -> Cell:
        """The archive key for a static descriptor plus, if this archive has it, the bound."""
        cell = tuple(int(v) for v in descriptor)
        if MEASURED_AXIS in self.axes:
            if bound is None:
                raise ValueError(
                    "this archive has the measured 'bound' axis: pass bound=measured_bound(...)"
                )
            cell = cell + (int(bound),)
        return self._check(cell)

    def add(
        self, candidate_id: str, cell: Sequence[int], result: EvalResult, island: int = 0
    ) -> bool:
        """Offer an evaluated candidate to ``island``; True when it became that cell's elite."""
        return self.add_scored(candidate_id, cell, int(result.level), result.speedup, island)

    def add_scored(
        self,
        candidate_id: str,
        cell: Sequence[int],
        level: int,
        speedup: float | None,
        island: int = 0,
    ) -> bool:
        """Offer a candidate by its ladder level and speedup (``add`` without an EvalResult)."""
        key = self._check(tuple(int(v) for v in cell))
        elite = Elite(candidate_id, key, int(level), speedup, self.generation, island)
        placed = self._island(island).offer(elite)
        logger.debug("offer %s to island %d cell %s: %s", candidate_id, island, key, placed)
        return placed

    def end_generation(self) -> int:
        """Advance the generation counter; migrate every ``migration_interval`` generations."""
        self.generation += 1
        if self.generation % self.migration_interval:
            return 0
        moved = migrate(self.islands, self.migration_rate, self.rng)
        logger.info("generation %d: %d elites migrated", self.generation, moved)
        return moved

    # -- reading ------------------------------------------------------------------------------
    def cells(self) -> dict[Cell, Elite]:
        """The global view: the fittest elite of every occupied cell over all islands."""
        view: dict[Cell, Elite] = {}
        for isl in self.islands:
            for cell, e in isl.cells.items():
                if cell not in view or e.fitness > view[cell].fitness:
                    view[cell] = e
        return dict(sorted(view.items()))

    def elites(self, island: int | None = None) -> list[Elite]:
        """Elites of one island, or the global view when ``island`` is None."""
        return self._island(island).elites() if island is not None else list(self.cells().values())

    def get(self, cell: Sequence[int]) -> Elite | None:
        return self.cells().get(tuple(cell))

    def best(self) -> Elite | None:
        """The fittest correct elite, or None when nothing correct has been found."""
        correct = [e for e in self.cells().values() if e.correct]
        return max(correct, key=lambda e: e.fitness, default=None)

    @property
    def coverage(self) -> float:
        return len(self.cells()) / self.levels ** len(self.axes)

    def summary(self) -> dict:
        """Small JSON-able facts for ``kernelwright show --json``."""
        best = self.best()
        return {
            "cells": len(self.cells()),
            "capacity": self.levels ** len(self.axes),
            "generation": self.generation,
            "island_sizes": [len(isl.cells) for isl in self.islands],
            "best": best.to_dict() if best else None,
        }

    # -- persistence --------------------------------------------------------------------------
    def to_json(self) -> str:
        state = {
            "version": FORMAT_VERSION,
            "axes": list(self.axes),
            "levels": self.levels,
            "migration_interval": self.migration_interval,
            "migration_rate": self.migration_rate,
            "admit_incorrect": self.admit_incorrect,
            "seed": self.seed,
            "generation": self.generation,
            "rng": self.rng.bit_generator.state,
            "islands": [[e.to_dict() for e in isl.elites()] for isl in self.islands],
        }
        return json.dumps(state, indent=1)

    @classmethod
    def from_json(cls, text: str) -> MapElitesArchive:
        s = json.loads(text)
        if s.get("version") != FORMAT_VERSION:
            raise ValueError(
                f"archive format {s.get('version')!r} is not {FORMAT_VERSION}: re-create the "
                "archive with this kernelwright version"
            )
        a = cls(s["axes"], s["levels"], len(s["islands"]), s["migration_interval"],
                s["migration_rate"], s["admit_incorrect"], s["seed"])  # fmt: skip
        a.generation = s["generation"]
        a.rng.bit_generator.state = s["rng"]
        for isl, elites in zip(a.islands, s["islands"], strict=True):
            isl.cells = {e.cell: e for e in map(Elite.from_dict, elites)}
        return a

    def save(self, path: str | Path) -> None:
        """Write the archive atomically (temporary file + rename), so a crash never tears it."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        with open(tmp, "w") as f:
            f.write(self.to_json())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)

    @classmethod
    def load(cls, path: str | Path) -> MapElitesArchive:
        return cls.from_json(Path(path).read_text())

    # -- display ------------------------------------------------------------------------------
    def render_grid(self) -> str:
        """Plain-text grid: one row per combination of all axes but the last, which is columns.

        A cell shows a correct elite's speedup (``1.83x``), an incorrect stepping stone's ladder
        level (``L3``) or ``.`` when empty. With more than three axes, empty rows are skipped.
        """
        view, last = self.cells(), self.axes[-1]
        best = self.best()
        head = f"archive: {len(view)}/{self.levels ** len(self.axes)} cells, "
        head += f"generation {self.generation}, islands {len(self.islands)}, best "
        head += f"{_cell_text(best)} ({best.candidate_id})" if best else "none correct"
        row_axes = self.axes[:-1]
        label_w = max(len(_row_label(row_axes, (0,) * len(row_axes))), 8)
        cols = " ".join(f"{last[:4]}={j}".rjust(8) for j in range(self.levels))
        lines = [head, " " * label_w + " " + cols]
        for prefix in itertools.product(range(self.levels), repeat=len(row_axes)):
            cells = [view.get((*prefix, j)) for j in range(self.levels)]
            if len(self.axes) > 3 and not any(cells):
                continue
            text = " ".join(_cell_text(e).rjust(8) for e in cells)
            lines.append(_row_label(row_axes, prefix).ljust(label_w) + " " + text)
        return "\n".join(lines)

    # -- helpers ------------------------------------------------------------------------------
    def _check(self, cell: Cell) -> Cell:
        if len(cell) != len(self.axes) or not all(0 <= v < self.levels for v in cell):
            raise ValueError(
                f"cell {cell} does not fit axes {self.axes} with levels 0..{self.levels - 1}: "
                "build it with describe(...) / cell_of(...)"
            )
        return cell

    def _island(self, index: int) -> Island:
        if not 0 <= index < len(self.islands):
            raise ValueError(f"island {index} does not exist: use 0..{len(self.islands) - 1}")
        return self.islands[index]


def _row_label(axes: Sequence[str], prefix: Sequence[int]) -> str:
    return " ".join(f"{a[:4]}={v}" for a, v in zip(axes, prefix, strict=True))


def _cell_text(e: Elite | None) -> str:
    if e is None:
        return "."
    if e.correct:
        return "ok" if e.speedup is None else f"{e.speedup:.2f}x"
    return f"L{e.level}"
