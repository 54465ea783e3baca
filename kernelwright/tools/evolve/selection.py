"""Parent and inspiration selection for MAP-Elites (KernelFoundry's explore/exploit/uniform mix).

With probability ``p_explore`` the parent comes from the working island's below-median cells
(uniformly), with ``p_exploit`` from a softmax over all elites' fitness,
``P(e) = exp(F_e / T) / Σ_e' exp(F_e' / T)``, and otherwise uniformly from all elites.
Inspirations are ``k`` elites of other cells, drawn uniformly without replacement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kernelwright.tools.evolve.archive import MapElitesArchive
    from kernelwright.tools.evolve.islands import Elite


class Mode(StrEnum):
    """How a parent was chosen."""

    EXPLORE = "explore"
    EXPLOIT = "exploit"
    UNIFORM = "uniform"


@dataclass(frozen=True)
class Selection:
    """A parent to mutate plus inspirations from other cells, and the mode that chose it."""

    parent: Elite
    inspirations: list[Elite] = field(default_factory=list)
    mode: Mode = Mode.EXPLOIT


class ParentSelector:
    """Draws parents and inspirations from a :class:`MapElitesArchive`.

    Args:
        explore: probability of an exploration draw (island / below-median cell).
        exploit: probability of a fitness-softmax draw.
        uniform: probability of a uniform draw over all elites.
        temperature: softmax temperature ``T`` (fitness units).
        inspirations: number ``k`` of inspiration elites from other cells.
        seed: seed of this selector's own ``numpy.random.Generator``.

    Example:
        >>> from kernelwright.tools.evolve.archive import MapElitesArchive
        >>> a = MapElitesArchive(n_islands=1)
        >>> _ = a.add_scored("a", (0, 0, 0), 5, 1.2)
        >>> ParentSelector(seed=1).select(a).parent.candidate_id
        'a'
    """

    def __init__(
        self,
        explore: float = 0.2,
        exploit: float = 0.7,
        uniform: float = 0.1,
        temperature: float = 1.0,
        inspirations: int = 2,
        seed: int = 0,
    ) -> None:
        ratios = np.array([explore, exploit, uniform], dtype=float)
        if (ratios < 0).any() or not np.isclose(ratios.sum(), 1.0) or temperature <= 0:
            raise ValueError(
                f"explore/exploit/uniform must be >= 0 and sum to 1 and temperature > 0 "
                f"(got {explore}, {exploit}, {uniform}, T={temperature})"
            )
        self.ratios = ratios
        self.temperature = temperature
        self.k = inspirations
        self.rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        e, x, u = self.ratios
        return f"ParentSelector(explore={e}, exploit={x}, uniform={u}, k={self.k})"

    def select(self, archive: MapElitesArchive, island: int = 0) -> Selection:
        """Choose a parent (working on ``island``) and ``k`` inspirations from other cells."""
        elites = archive.elites()
        if not elites:
            raise ValueError(
                "the archive is empty: add at least one evaluated candidate (e.g. the seed "
                "kernel) before selecting parents"
            )
        mode = list(Mode)[int(self.rng.choice(3, p=self.ratios))]
        parent = self._parent(mode, archive, island, elites)
        return Selection(parent, self.inspirations(elites, parent), mode)

    def inspirations(self, elites: list[Elite], parent: Elite) -> list[Elite]:
        """Up to ``k`` distinct elites whose cell differs from the parent's."""
        others = [e for e in elites if e.cell != parent.cell]
        if not others or self.k <= 0:
            return []
        idx = self.rng.choice(len(others), size=min(self.k, len(others)), replace=False)
        return [others[int(i)] for i in idx]

    def softmax(self, elites: list[Elite]) -> np.ndarray:
        """Selection probabilities ``exp(F / T)``, normalised (max-shifted for stability)."""
        f = np.array([e.fitness for e in elites]) / self.temperature
        w = np.exp(f - f.max())
        return w / w.sum()

    def _parent(
        self, mode: Mode, archive: MapElitesArchive, island: int, elites: list[Elite]
    ) -> Elite:
        if mode is Mode.EXPLOIT:
            return elites[int(self.rng.choice(len(elites), p=self.softmax(elites)))]
        if mode is Mode.EXPLORE:
            pool = below_median(archive.elites(island) or elites)
            return pool[int(self.rng.integers(len(pool)))]
        return elites[int(self.rng.integers(len(elites)))]


def below_median(elites: list[Elite]) -> list[Elite]:
    """Elites whose fitness is at most the median (so a one-elite pool keeps its elite)."""
    med = float(np.median([e.fitness for e in elites]))
    return [e for e in elites if e.fitness <= med]
