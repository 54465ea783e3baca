"""Agents over the lowering compiler: a planner that proposes the lowered program first, and an
offline coder that mutates its schedule and fusion decisions.

The lowered program is the seed of every run: it is correct by construction for any exported
graph, and its declared schedule space (work-group sizes, register blocks, row strategies,
implementation space of each anchor) is what the offline coder and the tuner move through. The
LLM coder starts from the same program (``LoweredCoder.seed``) and rewrites its kernels.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from kernelwright.errors import LoweringError
from kernelwright.spec import Candidate, Contract, ImplementationSpace, Task
from kernelwright.spec.opclass import OperatorClass
from kernelwright.spec.plan import Action, History, Plan
from kernelwright.tools.lower import LoweredProgram, lower_task

log = logging.getLogger(__name__)

SOURCE_NAME = "lowered"  # the name profiles carry as ``template:lowered``
_KIND_CLASS = {"gemm": OperatorClass.GEMM, "conv": OperatorClass.GEMM,
               "rows": OperatorClass.REDUCTION, "scan": OperatorClass.REDUCTION,
               "pointwise": OperatorClass.ELEMENTWISE, "vendor_gemm": OperatorClass.GEMM}


class LoweredSource:
    """One task's lowered program seen as a parameterised source (name, space, candidates).

    Example:
        >>> src = LoweredSource(lower_task(task, "sycl"))  # doctest: +SKIP
        >>> src.candidate(src.default_params())  # doctest: +SKIP
    """

    name = SOURCE_NAME

    def __init__(self, program: LoweredProgram) -> None:
        self.program = program

    def space(self) -> dict[str, list[Any]]:
        return dict(self.program.space)

    def default_params(self) -> dict[str, Any]:
        return dict(self.program.params)

    def candidate(self, params: dict[str, Any], origin: str = f"template:{SOURCE_NAME}"
                  ) -> Candidate:
        known = {k: v for k, v in params.items() if k in self.program.space}
        cand = self.program.with_params(known).candidate
        return cand.model_copy(update={"origin": origin})

    def __repr__(self) -> str:
        return f"LoweredSource({self.program.task.name}, {self.program.backend})"


class SourceCache:
    """Lowered programs per (task, backend): lowering captures the reference, so do it once."""

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
    for kind in ("gemm", "conv", "rows", "scan"):
        if kind in kinds:
            if kind == "rows" and _is_norm(program):
                return OperatorClass.ROWWISE_NORM
            return _KIND_CLASS[kind]
    return OperatorClass.ELEMENTWISE if kinds else OperatorClass.OTHER


def _is_norm(program: LoweredProgram) -> bool:
    return any(g.kind == "rows" and len(g.main) > 1 for g in program.variants[0].sched.groups)


class LoweringPlanner:
    """Offline planner: lower the reference and plan around the lowered program.

    Falls back to ``fallback`` (another planner) when the reference cannot be lowered.
    """

    def __init__(self, fallback: Any = None, cache: SourceCache | None = None) -> None:
        self.fallback = fallback
        self.cache = cache or SourceCache()

    def plan(self, task: Task, contract: Contract, backend: str) -> Plan:
        try:
            source = self.cache.get(task, contract, backend)
        except LoweringError as exc:
            if self.fallback is None:
                raise
            log.warning("lowering failed, falling back: %s", exc)
            return self.fallback.plan(task, contract, backend)
        matched = self.fallback.plan(task, contract, backend) if self.fallback else None
        prog = source.program
        vendor = any(v == "vendor" for k, v in prog.params.items() if k.endswith(".impl"))
        space = (ImplementationSpace.VENDOR_LIBRARY if vendor
                 else ImplementationSpace.CUSTOM_KERNEL)
        groups = prog.variants[0].sched.groups
        strategy = (f"lowered program: {len(groups)} fused kernel(s) "
                    f"({', '.join(g.kind for g in groups)}); tune its schedule space")
        plan = Plan(
            operator_class=operator_class(prog),
            implementation_space=space,
            backend=backend,
            strategy=strategy,
            rationale=prog.describe()[:4000],
            templates=[SOURCE_NAME],
            op_spec={"lowered": True},
        )
        if matched is not None:  # the roofline needs the work the rule planner counted
            plan = plan.model_copy(update={"flops": matched.flops,
                                           "min_bytes": matched.min_bytes})
        if matched is None or not matched.templates:
            return plan
        # Hand-written templates also fit: keep them as further sources (their op spec needs
        # the matcher's operator class), after the lowered program.
        return plan.model_copy(update={
            "operator_class": matched.operator_class,
            "templates": [SOURCE_NAME, *matched.templates],
            "op_spec": matched.op_spec,
            "strategy": f"{strategy}; templates {', '.join(matched.templates)} as alternatives",
        })

    def __repr__(self) -> str:
        return f"LoweringPlanner(fallback={self.fallback!r})"


class LoweredCoder:
    """Offline coder over the lowered program's schedule and fusion decisions.

    First round: the lowered program at its default schedule. Then, following the critic:
    vary -> one-step neighbours of the best schedule (then two-step); search -> random points;
    switch -> the other value of each implementation-space and launch choice first.
    Deterministic for a given history (seeded by the run seed and the round).

    Example:
        >>> LoweredCoder(seed=0)
        LoweredCoder(seed=0)
    """

    def __init__(self, seed: int = 0, cache: SourceCache | None = None) -> None:
        self.seed = seed
        self.cache = cache or SourceCache()

    def seed_candidate(self, task: Task, contract: Contract, plan: Plan) -> Candidate | None:
        """The lowered program at its defaults: the LLM coder's starting point."""
        try:
            source = self.cache.get(task, contract, plan.backend)
        except LoweringError:
            return None
        return source.candidate(source.default_params())

    def propose(self, task: Task, contract: Contract, plan: Plan, history: History,
                n: int) -> list[Candidate]:
        if n <= 0:
            return []
        try:
            source = self.cache.get(task, contract, plan.backend)
        except LoweringError:
            return []
        rng = np.random.default_rng([self.seed, history.round])
        seen = {p.candidate_id for p in history.profiles}
        out: dict[str, Candidate] = {}
        for params in self._ideas(source, history, rng):
            cand = source.candidate(params)
            if cand.id not in seen:
                out.setdefault(cand.id, cand)
            if len(out) >= n:
                break
        return list(out.values())

    def _ideas(self, source: LoweredSource, history: History, rng: np.random.Generator):
        space, base = source.space(), _base_params(source, history)
        action = history.last_decision.action if history.last_decision else None
        yield source.default_params()
        if action == Action.SWITCH_TEMPLATE:
            yield from _switches(space, base)
        if action == Action.SEARCH:
            yield from random_points(space, rng, 32)
        yield from neighbours(space, base, rng, steps=1)
        yield from _switches(space, base)
        yield from neighbours(space, base, rng, steps=2)
        yield from random_points(space, rng, 64)

    def __repr__(self) -> str:
        return f"LoweredCoder(seed={self.seed})"


def _base_params(source: LoweredSource, history: History) -> dict[str, Any]:
    best = history.parent or history.best
    base = source.default_params()
    if best is not None and best.template == f"template:{SOURCE_NAME}":
        base.update({k: v for k, v in best.params.items() if k in source.space()})
    return base


def _switches(space: dict[str, list[Any]], base: dict[str, Any]):
    """Flip each discrete decision (implementation space, launch mode, row strategy)."""
    for name, choices in space.items():
        if name.endswith((".impl", ".strategy")) or name == "launch":
            for value in choices:
                if value != base.get(name):
                    yield {**base, name: value}


def neighbours(space: dict[str, list[Any]], base: dict[str, Any], rng: np.random.Generator,
               steps: int):
    """Points moving ``steps`` parameters one position along their choices, shuffled."""
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


def random_points(space: dict[str, list[Any]], rng: np.random.Generator, count: int):
    for _ in range(count):
        yield {name: values[rng.integers(len(values))] for name, values in space.items()}


class PlanCoder:
    """The offline coder a run uses when the plan holds the lowered program and templates.

    Round one: the lowered program at its defaults, then the templates' defaults. Later rounds
    start from the source of the current parent (the lowered program's schedule space or the
    parent's template) and fill the rest of the round from the other. A plan without the lowered
    program (a reference that does not lower) goes to the template coder alone.
    """

    def __init__(self, lowered: LoweredCoder, templates: Any) -> None:
        self.lowered = lowered
        self.templates = templates

    def propose(self, task: Task, contract: Contract, plan: Plan, history: History,
                n: int) -> list[Candidate]:
        if SOURCE_NAME not in plan.templates:
            return self.templates.propose(task, contract, plan, history, n)
        others = [t for t in plan.templates if t != SOURCE_NAME]
        low = (self.lowered, plan.model_copy(update={"templates": [SOURCE_NAME]}))
        tpl = (self.templates, plan.model_copy(update={"templates": others}))
        parent = history.parent or history.best
        on_template = parent is not None and parent.template != f"template:{SOURCE_NAME}"
        order = [tpl, low] if on_template else [low, tpl]
        quota = [1, n - 1] if not history.profiles and others else [n, n]
        out: dict[str, Candidate] = {}
        for (coder, sub_plan), want in zip(order, quota, strict=True):
            want = min(want, n - len(out))
            if want > 0 and sub_plan.templates:
                for cand in coder.propose(task, contract, sub_plan, history, want):
                    out.setdefault(cand.id, cand)
        return list(out.values())[:n]

    def seed_candidate(self, task: Task, contract: Contract, plan: Plan) -> Candidate | None:
        """The lowered program at its defaults (``None`` for a template-only plan)."""
        if SOURCE_NAME not in plan.templates:
            return None
        return self.lowered.seed_candidate(task, contract, plan)

    def __repr__(self) -> str:
        return f"PlanCoder({self.lowered!r}, {self.templates!r})"
