"""Search spaces for tuning: declared schedule parameters plus compiler options.

A candidate (or lowered program) declares its tunable parameters as a mapping; :meth:`SearchSpace.
from_declared` turns it into typed parameters that map onto Optuna distributions and, when
finite, onto the exhaustive grid KernelFoundry benchmarks.

Declared forms::

    {"block": [64, 128, 256],                         # categorical (any JSON scalar)
     "tile": {"low": 1, "high": 8},                   # int range, step 1
     "vec": {"low": 1, "high": 16, "log": True},      # int, log-scaled (grid: doubling)
     "split": {"low": 0.1, "high": 0.9, "step": 0.2}, # float, grid needs a step
     "rows": range(1, 9, 2),                          # int with step
     "layout": {"choices": ["nchw", "nhwc"]}}
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from optuna.distributions import BaseDistribution

Scalar = int | float | str | bool
COMPILER_PARAMS = ("opt_level", "unroll", "fast_math")


@dataclass(frozen=True)
class IntParam:
    """An integer in ``[low, high]`` on a ``step`` lattice, or log-scaled (step must be 1)."""

    name: str
    low: int
    high: int
    step: int = 1
    log: bool = False

    def distribution(self) -> BaseDistribution:
        from optuna.distributions import IntDistribution

        return IntDistribution(self.low, self.high, log=self.log, step=self.step)

    def values(self) -> list[int]:
        """Grid values: the step lattice, or ``low · 2^i`` up to ``high`` when log-scaled."""
        if self.log:
            n = int(math.floor(math.log2(self.high / self.low))) + 1
            return [self.low * 2**i for i in range(n)]
        return list(range(self.low, self.high + 1, self.step))

    def contains(self, value: Scalar) -> bool:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return ok and self.low <= value <= self.high and (value - self.low) % self.step == 0


@dataclass(frozen=True)
class FloatParam:
    """A float in ``[low, high]``; enumerable for a grid only with a ``step``."""

    name: str
    low: float
    high: float
    step: float | None = None
    log: bool = False

    def distribution(self) -> BaseDistribution:
        from optuna.distributions import FloatDistribution

        return FloatDistribution(self.low, self.high, log=self.log, step=self.step)

    def values(self) -> list[float]:
        if self.step is None:
            raise ValueError(
                f"float parameter {self.name!r} has no step, so it has no grid: declare "
                "'step' or use RandomSearch / OptunaTuner"
            )
        n = int(math.floor((self.high - self.low) / self.step + 1e-9)) + 1
        return [round(self.low + i * self.step, 12) for i in range(n)]

    def contains(self, value: Scalar) -> bool:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return ok and self.low <= value <= self.high


@dataclass(frozen=True)
class CategoricalParam:
    """One of a fixed list of JSON scalars (block sizes, layouts, flags)."""

    name: str
    choices: tuple[Scalar, ...]

    def distribution(self) -> BaseDistribution:
        from optuna.distributions import CategoricalDistribution

        return CategoricalDistribution(self.choices)

    def values(self) -> list[Scalar]:
        return list(self.choices)

    def contains(self, value: Scalar) -> bool:
        return any(value == c and type(value) is type(c) for c in self.choices)


Param = IntParam | FloatParam | CategoricalParam


def compiler_params(
    allow_fast_math: bool,
    opt_levels: Sequence[str] = ("O2", "O3"),
    unroll: Sequence[int] = (1, 2, 4, 8),
) -> list[Param]:
    """Compiler options as parameters; ``fast_math`` only if the contract's tolerance allows."""
    params: list[Param] = [
        CategoricalParam("opt_level", tuple(opt_levels)),
        CategoricalParam("unroll", tuple(unroll)),
    ]
    if allow_fast_math:
        params.append(CategoricalParam("fast_math", (False, True)))
    return params


def declared_param(name: str, spec: object) -> Param:
    """One declared parameter (see the module docstring for the accepted forms)."""
    if isinstance(spec, range):
        return IntParam(name, spec.start, spec[-1], spec.step)
    if isinstance(spec, list | tuple):
        return CategoricalParam(name, tuple(spec))
    if isinstance(spec, Mapping) and "choices" in spec:
        return CategoricalParam(name, tuple(spec["choices"]))
    if isinstance(spec, Mapping) and {"low", "high"} <= spec.keys():
        bounds = (spec["low"], spec["high"], spec.get("step"))
        if all(isinstance(b, int) for b in bounds if b is not None):
            return IntParam(name, spec["low"], spec["high"], spec.get("step") or 1,
                            bool(spec.get("log", False)))  # fmt: skip
        return FloatParam(name, float(spec["low"]), float(spec["high"]), spec.get("step"),
                          bool(spec.get("log", False)))  # fmt: skip
    raise ValueError(
        f"cannot read the declaration of parameter {name!r} ({spec!r}): use a list of "
        "choices, a range, {'choices': [...]} or {'low': .., 'high': .., 'step'?, 'log'?}"
    )


class SearchSpace:
    """An ordered set of named parameters.

    Example:
        >>> s = SearchSpace.from_declared({"block": [64, 128], "tile": range(1, 5)})
        >>> s.size
        8
    """

    def __init__(self, params: Sequence[Param]) -> None:
        names = [p.name for p in params]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate parameter names in {names}: rename one of them")
        self.params = tuple(params)

    def __repr__(self) -> str:
        return f"SearchSpace({', '.join(self.names)}; size={self.size})"

    @classmethod
    def from_declared(
        cls, declared: Mapping[str, object], compiler: bool = False, allow_fast_math: bool = False
    ) -> SearchSpace:
        """Build a space from a declaration, optionally adding the compiler options."""
        params = [declared_param(n, s) for n, s in declared.items()]
        if compiler:
            params += compiler_params(allow_fast_math)
        return cls(params)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.params]

    @property
    def size(self) -> int | None:
        """Number of grid points, or None when a float parameter has no step."""
        try:
            return math.prod(len(p.values()) for p in self.params)
        except ValueError:
            return None

    def distributions(self) -> dict[str, BaseDistribution]:
        return {p.name: p.distribution() for p in self.params}

    def grid(self) -> Iterator[dict[str, Scalar]]:
        """Every combination, first parameter slowest (raises for step-less floats)."""
        for combo in itertools.product(*(p.values() for p in self.params)):
            yield dict(zip(self.names, combo, strict=True))

    def sample(self, rng: np.random.Generator) -> dict[str, Scalar]:
        """One uniform draw (log-uniform for log parameters, lattice-aligned for steps)."""
        return {p.name: _draw(p, rng) for p in self.params}

    def validate(self, params: Mapping[str, Scalar]) -> dict[str, Scalar]:
        """Return ``params`` as a dict if every name is known and every value is allowed."""
        if set(params) != set(self.names):
            raise ValueError(
                f"parameters {sorted(params)} do not match the space {self.names}: pass "
                "exactly one value per declared parameter"
            )
        for p in self.params:
            if not p.contains(params[p.name]):
                raise ValueError(f"value {params[p.name]!r} is outside parameter {p}")
        return {n: params[n] for n in self.names}


def _draw(p: Param, rng: np.random.Generator) -> Scalar:
    if isinstance(p, CategoricalParam):
        return p.choices[int(rng.integers(len(p.choices)))]
    if isinstance(p, IntParam) and not p.log:
        return p.low + p.step * int(rng.integers((p.high - p.low) // p.step + 1))
    if isinstance(p, IntParam):  # log-scaled int: floor of a log-uniform draw on [low, high + 1)
        return min(int(math.exp(rng.uniform(math.log(p.low), math.log(p.high + 1)))), p.high)
    if p.log:
        return float(math.exp(rng.uniform(math.log(p.low), math.log(p.high))))
    if p.step:
        return p.values()[int(rng.integers(len(p.values())))]
    return float(rng.uniform(p.low, p.high))
