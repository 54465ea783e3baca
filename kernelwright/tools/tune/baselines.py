"""Baseline tuners with the same ask/tell interface: exhaustive grid and random search.

``GridSearch`` is KernelFoundry's parameter method (every combination, in declaration
order); ``RandomSearch`` draws without replacement from a finite space (with replacement from an
infinite one). Both keep their history in memory: they are baselines for benchmarks and for
spaces too small to need a study journal.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

import numpy as np

from kernelwright.errors import SpaceExhaustedError
from kernelwright.tools.tune.base import (
    TrialRecord,
    TrialState,
    Tuner,
    params_key,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from kernelwright.tools.tune.space import Scalar, SearchSpace


class _MemoryTuner(Tuner):
    """Shared bookkeeping: numbered trials, an enqueue queue, no point asked twice."""

    def __init__(self, space: SearchSpace, incorrect: str = "fail") -> None:
        super().__init__(space, incorrect)
        self._records: dict[int, TrialRecord] = {}
        self._queue: deque[dict[str, Scalar]] = deque()
        self._asked: set[str] = set()

    def _next_own(self) -> dict[str, Scalar] | None:
        raise NotImplementedError

    @property
    def exhausted(self) -> bool:
        return self.space.size is not None and len(self._asked) >= self.space.size

    def ask(self) -> tuple[int, dict[str, Scalar]]:
        while True:
            params = self._queue.popleft() if self._queue else self._next_own()
            if params is None:
                raise SpaceExhaustedError(
                    f"all {len(self._asked)} points of {self.space} were asked: stop tuning"
                )
            key = params_key(params)
            if key not in self._asked or self.space.size is None:
                break
        self._asked.add(key)
        number = len(self._records)
        self._records[number] = TrialRecord(number, dict(params), TrialState.RUNNING)
        return number, dict(params)

    def enqueue(self, params: Mapping[str, Scalar]) -> None:
        self._queue.append(self.space.validate(params))

    def trials(self) -> list[TrialRecord]:
        return [self._records[n] for n in sorted(self._records)]

    def _finish(self, number: int, state: TrialState, value: float | None, attrs: dict) -> None:
        old = self._records[number]
        if old.state is not TrialState.RUNNING:
            raise ValueError(f"trial {number} was already told ({old.state}): tell it once")
        self._records[number] = TrialRecord(number, old.params, state, value, dict(attrs))


class GridSearch(_MemoryTuner):
    """Exhaustive search in declaration order (first parameter slowest).

    Example:
        >>> from kernelwright.tools.tune.space import SearchSpace
        >>> g = GridSearch(SearchSpace.from_declared({"b": [1, 2]}))
        >>> g.ask()
        (0, {'b': 1})
    """

    def __init__(self, space: SearchSpace, incorrect: str = "fail") -> None:
        super().__init__(space, incorrect)
        self._grid: Iterator[dict[str, Scalar]] = space.grid()

    def __repr__(self) -> str:
        return f"GridSearch({self.space!r}, asked={len(self._asked)})"

    def _next_own(self) -> dict[str, Scalar] | None:
        return next(self._grid, None)


class RandomSearch(_MemoryTuner):
    """Uniform random search; without replacement when the space is finite.

    Args:
        space: the search space.
        seed: seed of this tuner's own ``numpy.random.Generator``.
        incorrect: ``"fail"`` or ``"worst"`` (see :func:`~kernelwright.tools.tune.base.score`).
    """

    def __init__(self, space: SearchSpace, seed: int = 0, incorrect: str = "fail") -> None:
        super().__init__(space, incorrect)
        self.rng = np.random.default_rng(seed)
        self._order: list[dict[str, Scalar]] | None = None
        if space.size is not None:
            points = list(space.grid())
            self._order = [points[int(i)] for i in self.rng.permutation(len(points))]

    def __repr__(self) -> str:
        return f"RandomSearch({self.space!r}, asked={len(self._asked)})"

    def _next_own(self) -> dict[str, Scalar] | None:
        if self._order is None:
            return self.space.sample(self.rng)
        while self._order:
            params = self._order.pop()
            if params_key(params) not in self._asked:
                return params
        return None
