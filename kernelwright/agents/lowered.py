"""The lowered program as the agents see it: one parameterised source per task and backend.

The lowering compiler (``tools.lower``) turns any exportable reference into a correct program
whose schedule space (work-group sizes, register blocks, row strategies, the implementation
space of each anchor, the launch mode) is declared. The offline planner
(:class:`~kernelwright.agents.planner.LoweringPlanner`) plans around it, the offline coder
(:class:`~kernelwright.agents.coder.LoweredCoder`) and the tuner (``graphs.hierarchy``) move
through its space, and the LLM coder starts from its source. This module holds what they share:
the source (:class:`LoweredSource`), one lowering per task (:class:`SourceCache`), the operator
class of a program, and the moves through a declared space (neighbours, switches, random points).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from kernelwright.spec import Candidate, Contract, Task
from kernelwright.spec.opclass import OperatorClass
from kernelwright.spec.plan import History
from kernelwright.tools.lower import LoweredProgram, lower_task

SOURCE_NAME = "lowered"  # the plan source, candidate origin and profile source of its points
_KIND_CLASS = {"gemm": OperatorClass.GEMM, "conv": OperatorClass.GEMM,
               "attention": OperatorClass.GEMM, "rows": OperatorClass.REDUCTION,
               "scan": OperatorClass.REDUCTION, "pointwise": OperatorClass.ELEMENTWISE,
               "vendor_gemm": OperatorClass.GEMM}

Params = dict[str, Any]


class LoweredSource:
    """One task's lowered program seen as a parameterised source (name, space, candidates).

    Example:
        >>> src = LoweredSource(lower_task(task, "sycl"))  # doctest: +SKIP
        >>> src.candidate(src.default_params()).origin  # doctest: +SKIP
        'lowered'
    """

    name = SOURCE_NAME

    def __init__(self, program: LoweredProgram) -> None:
        self.program = program

    def space(self) -> dict[str, list[Any]]:
        return dict(self.program.space)

    def default_params(self) -> Params:
        return dict(self.program.params)

    def candidate(self, params: Params, origin: str = SOURCE_NAME) -> Candidate:
        """The program at ``params`` (names outside its space are ignored), tagged ``origin``."""
        known = {k: v for k, v in params.items() if k in self.program.space}
        cand = self.program.with_params(known).candidate
        return cand.model_copy(update={"origin": origin})

    def __repr__(self) -> str:
        return f"LoweredSource({self.program.task.name}, {self.program.backend})"


class SourceCache:
    """Lowered programs per (task, backend): lowering captures the reference, so do it once.

    A reference that does not lower raises ``LoweringError`` each time it is asked for (the
    failure is cheap to repeat: export stops at the first unsupported operator).
    """

    def __init__(self) -> None:
        self._items: dict[tuple[str, str, str], LoweredSource] = {}

    def get(self, task: Task, contract: Contract | None, backend: str) -> LoweredSource:
        key = (str(task.path), task.source_hash, backend)
        if key not in self._items:
            self._items[key] = LoweredSource(lower_task(task, backend, contract=contract))
        return self._items[key]


def operator_class(program: LoweredProgram) -> OperatorClass:
    """The dominant kind of work: anchors first, then reductions, else pointwise."""
    kinds = [g.kind for g in program.variants[0].sched.groups]
    for kind in ("gemm", "conv", "attention", "rows", "scan"):
        if kind in kinds:
            if kind == "rows" and _is_norm(program):
                return OperatorClass.ROWWISE_NORM
            return _KIND_CLASS[kind]
    return OperatorClass.ELEMENTWISE if kinds else OperatorClass.OTHER


def _is_norm(program: LoweredProgram) -> bool:
    return any(g.kind == "rows" and len(g.main) > 1 for g in program.variants[0].sched.groups)


def base_params(source: LoweredSource, history: History) -> Params:
    """The schedule to move from: the parent's (or best's) when it is a point of ``source``."""
    best = history.parent or history.best
    base = source.default_params()
    if best is not None and best.source == source.name:
        base.update({k: v for k, v in best.params.items() if k in source.space()})
    return base


def switches(space: dict[str, list[Any]], base: Params) -> Iterator[Params]:
    """Flip each discrete decision (implementation space, launch mode, row strategy)."""
    for name, choices in space.items():
        if name.endswith((".impl", ".strategy")) or name == "launch":
            for value in choices:
                if value != base.get(name):
                    yield {**base, name: value}


def neighbours(space: dict[str, list[Any]], base: Params, rng: np.random.Generator,
               steps: int) -> Iterator[Params]:
    """Points moving ``steps`` (1 or 2) parameters one position along their choices, shuffled."""
    moves = []
    for name, choices in space.items():
        i = choices.index(base[name]) if base.get(name) in choices else 0
        moves += [(name, choices[j]) for j in (i - 1, i + 1) if 0 <= j < len(choices)]
    order = rng.permutation(len(moves))
    if steps == 1:
        for k in order:
            name, value = moves[k]
            yield {**base, name: value}
        return
    for a in order:
        for b in order:
            (na, va), (nb, vb) = moves[a], moves[b]
            if na < nb:
                yield {**base, na: va, nb: vb}


def random_points(space: dict[str, list[Any]], rng: np.random.Generator,
                  count: int) -> Iterator[Params]:
    """``count`` points drawn uniformly, each parameter independently."""
    for _ in range(count):
        yield {name: values[rng.integers(len(values))] for name, values in space.items()}
