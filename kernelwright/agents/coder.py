"""The offline coder: instantiate kernel templates and move through their parameter spaces.

Deterministic for a given history (its generator is seeded by the run seed and the round), so a
resumed run proposes what the interrupted one would have.
"""

from __future__ import annotations

import numpy as np

from kernelwright.agents.matching import op_spec_from_plan
from kernelwright.errors import ConfigError
from kernelwright.spec import Candidate, Contract, Task
from kernelwright.spec.plan import Action, History, Plan
from kernelwright.templates import OpSpec, Template, get_template

Params = dict[str, int | str | bool]


class TemplateCoder:
    """Offline coder over the template library.

    First round: every planned template at its defaults. Then, following the critic: vary
    parameters -> one-step neighbours of the best candidate's parameters (then two-step);
    switch template -> the defaults of templates not tried yet; search -> random points of the
    best template's space.

    Example:
        >>> TemplateCoder(seed=0)
        TemplateCoder(seed=0)
    """

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def propose(
        self, task: Task, contract: Contract, plan: Plan, history: History, n: int
    ) -> list[Candidate]:
        spec = op_spec_from_plan(plan.operator_class.value, plan.op_spec)
        if spec is None or not plan.templates or n <= 0:
            return []
        rng = np.random.default_rng([self.seed, history.round])
        seen = {p.candidate_id for p in history.profiles}
        out: dict[str, Candidate] = {}
        for template, params in self._ideas(plan, history, rng):
            candidate = _instantiate(template, params, spec)
            if candidate is not None and candidate.id not in seen:
                out.setdefault(candidate.id, candidate)
            if len(out) >= n:
                break
        return list(out.values())

    def _ideas(self, plan: Plan, history: History, rng: np.random.Generator):
        templates = [get_template(name) for name in plan.templates]
        tried = {p.template for p in history.profiles}
        untried = [t for t in templates if f"template:{t.name}" not in tried]
        action = history.last_decision.action if history.last_decision else None
        if action in (None, Action.SWITCH_TEMPLATE):
            yield from ((t, t.default_params()) for t in untried)
        base_template, base = _best_point(history, templates)
        if action == Action.SEARCH:
            yield from _random_points(base_template, rng, 64)
        yield from _neighbours(base_template, base, rng, steps=1)
        yield from _neighbours(base_template, base, rng, steps=2)
        yield from ((t, t.default_params()) for t in untried)
        yield from _random_points(base_template, rng, 64)

    def __repr__(self) -> str:
        return f"TemplateCoder(seed={self.seed})"


def _instantiate(template: Template, params: Params, spec: OpSpec) -> Candidate | None:
    try:
        return template.candidate(params, spec)
    except ConfigError:
        return None  # a combination the template's rules exclude


def _best_point(history: History, templates: list[Template]) -> tuple[Template, Params]:
    best = history.parent or history.best
    by_name = {f"template:{t.name}": t for t in templates}
    if best is not None and best.template in by_name:
        template = by_name[best.template]
        return template, {k: v for k, v in best.params.items() if k in template.space()}
    return templates[0], templates[0].default_params()


def _neighbours(template: Template, base: Params, rng: np.random.Generator, steps: int):
    """Points that move ``steps`` parameters one position along their choices, shuffled."""
    space = template.space()
    names = list(space)
    moves = []
    for name in names:
        choices = list(space[name])
        i = choices.index(base[name]) if base.get(name) in choices else 0
        moves += [(name, choices[j]) for j in (i - 1, i + 1) if 0 <= j < len(choices)]
    order = rng.permutation(len(moves))
    if steps == 1:
        for k in order:
            name, value = moves[k]
            yield template, {**base, name: value}
        return
    for a in order:
        for b in order:
            (na, va), (nb, vb) = moves[a], moves[b]
            if na < nb:
                yield template, {**base, na: va, nb: vb}


def _random_points(template: Template, rng: np.random.Generator, count: int):
    space = template.space()
    for _ in range(count):
        yield template, {name: values[rng.integers(len(values))] for name, values in space.items()}
