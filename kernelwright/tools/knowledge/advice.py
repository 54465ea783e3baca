"""Expert optimisation advice per operator class and backend (HIERA's knowledge base).

The advice is data: one YAML file per operator class plus ``general.yaml`` in this package.
Retrieval is a deterministic ranking: priority-10 rules (correctness) first, then entries
written for the operator class, then general ones; within each, by priority (+2 when written for
this backend), then by id.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict, Field

OPERATOR_CLASSES = ("elementwise", "rowwise_norm", "reduction", "layout", "gemm", "other")
BACKENDS = ("sycl", "cuda", "cpp")
ANY = "*"


class Advice(BaseModel):
    """One piece of advice, a few sentences long."""

    model_config = ConfigDict(frozen=True)
    id: str
    title: str
    text: str
    classes: list[str] = Field(default_factory=lambda: [ANY])
    backends: list[str] = Field(default_factory=lambda: [ANY])
    topics: list[str] = Field(default_factory=list)
    priority: int = 5

    def applies(self, operator_class: str, backend: str) -> bool:
        return _matches(self.classes, operator_class) and _matches(self.backends, backend)


def _matches(values: list[str], wanted: str) -> bool:
    return ANY in values or wanted in values


@cache
def load_advice() -> tuple[Advice, ...]:
    """Every advice entry shipped with kernelwright (read once)."""
    root = resources.files("kernelwright.tools.knowledge")
    entries: list[Advice] = []
    for item in sorted(root.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".yaml"):
            entries += [Advice(**raw) for raw in yaml.safe_load(item.read_text()) or []]
    ids = [a.id for a in entries]
    if len(ids) != len(set(ids)):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"duplicate advice ids in kernelwright/tools/knowledge: {dupes}")
    return tuple(entries)


def retrieve(
    operator_class: str, backend: str, k: int = 5, topics: list[str] | None = None
) -> list[Advice]:
    """The ``k`` most specific pieces of advice for ``operator_class`` on ``backend``.

    ``topics`` (e.g. ``["numerics"]``) keeps only entries tagged with one of them. An unknown
    operator class or backend raises ``ValueError`` listing the choices.

    Example:
        >>> [a.id for a in retrieve("rowwise_norm", "sycl", k=2)]
        ['correctness-first', 'norm-row-per-group']
    """
    _check(str(operator_class), OPERATOR_CLASSES, "operator class")
    _check(backend, BACKENDS, "backend")
    pool = [a for a in load_advice() if a.applies(str(operator_class), backend)]
    if topics:
        pool = [a for a in pool if set(a.topics) & set(topics)]
    return sorted(pool, key=lambda a: _rank(a, str(operator_class), backend))[:k]


def _rank(a: Advice, operator_class: str, backend: str) -> tuple[int, int, int, str]:
    lead = 0 if a.priority >= 10 else 1  # correctness rules lead every list
    generic = 0 if operator_class in a.classes else 1
    return (lead, generic, -(a.priority + 2 * (backend in a.backends)), a.id)


def _check(value: str, choices: tuple[str, ...], what: str) -> None:
    if value not in choices:
        raise ValueError(f"unknown {what} {value!r}; choose one of {', '.join(choices)}")
