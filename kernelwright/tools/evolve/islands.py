"""Elites, fitness, and islands: the small parts a MAP-Elites archive is made of."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

from kernelwright.spec.result import Level, fitness

CORRECT_LEVEL = Level.CORRECT

Cell = tuple[int, ...]


@dataclass(frozen=True)
class Elite:
    """The small record the archive keeps for a candidate; its source lives in the run store.

    Attributes:
        candidate_id: content hash of the candidate (``Candidate.id``).
        cell: descriptor levels, in the archive's axis order.
        level: correctness ladder level 0-5.
        speedup: measured speedup of a correct candidate, else None.
        generation: generation in which it entered the archive.
        island: island that produced it.
    """

    candidate_id: str
    cell: Cell
    level: int
    speedup: float | None = None
    generation: int = 0
    island: int = 0

    @property
    def correct(self) -> bool:
        return self.level == CORRECT_LEVEL

    @property
    def fitness(self) -> float:
        return fitness(self.level, self.speedup)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["cell"] = list(self.cell)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Elite:
        return cls(**{**d, "cell": tuple(d["cell"])})


def beats(challenger: Elite, incumbent: Elite | None, admit_incorrect: bool) -> bool:
    """The replacement rule: an occupied cell falls only to a strictly fitter CORRECT candidate.

    An empty cell takes a correct candidate always, an incorrect one only if ``admit_incorrect``
    (a stepping stone that carries ladder-level fitness until something correct arrives).
    """
    if incumbent is None:
        return challenger.correct or admit_incorrect
    return challenger.correct and challenger.fitness > incumbent.fitness


class Island:
    """One sub-population: a grid of elites that evolves on its own between migrations."""

    def __init__(self, index: int, admit_incorrect: bool = True) -> None:
        self.index = index
        self.admit_incorrect = admit_incorrect
        self.cells: dict[Cell, Elite] = {}

    def __repr__(self) -> str:
        return f"Island(index={self.index}, elites={len(self.cells)})"

    def offer(self, elite: Elite) -> bool:
        """Put ``elite`` in its cell if it beats the incumbent; True when it was placed."""
        if not beats(elite, self.cells.get(elite.cell), self.admit_incorrect):
            return False
        self.cells[elite.cell] = elite
        return True

    def elites(self) -> list[Elite]:
        return [self.cells[c] for c in sorted(self.cells)]


def migrate(islands: list[Island], rate: float, rng: np.random.Generator) -> int:
    """Ring migration: each island sends its fittest ``ceil(rate · n)`` elites to the next one.

    Emigrants keep their id and cell and compete under the normal replacement rule. Senders'
    elites are chosen before any island receives, so one round moves each elite at most once.

    Returns:
        The number of elites that took a cell on the receiving island.
    """
    if len(islands) < 2 or rate <= 0:
        return 0
    outgoing = []
    for isl in islands:
        ranked = sorted(isl.elites(), key=lambda e: (-e.fitness, e.candidate_id))
        k = math.ceil(rate * len(ranked)) if ranked else 0
        outgoing.append(ranked[:k])
    placed = 0
    order = rng.permutation(len(islands))  # receiving order does not favour island 0
    for i in order:
        target = islands[(int(i) + 1) % len(islands)]
        placed += sum(target.offer(replace(e)) for e in outgoing[int(i)])
    return placed
