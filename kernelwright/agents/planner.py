"""The planner (HIERA): lower the reference, classify the work, choose the space and a strategy.

The role's protocol (:class:`Planner`), its offline policy (:class:`LoweringPlanner`) and its LLM
policy (:class:`LLMPlanner`, which refines the offline plan) live here.

The offline planner lowers the reference with the lowering compiler (``tools.lower``, once per
task and backend through a shared :class:`~kernelwright.agents.lowered.SourceCache`) and plans
around the lowered program: its fusion groups give the operator class and the strategy, its
``describe()`` the rationale, its anchors' implementation choices the space. The roofline's work
(FLOPs and compulsory bytes) is counted by tracing the reference's aten operators once
(``tools.opgraph``). A reference that does not lower gets a plan with no source that says why:
the framework space when the contract allows it, else custom kernels an LLM coder must write from
scratch (the offline coder then proposes nothing and the run stops with that reason).
"""

from __future__ import annotations

import logging
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from kernelwright.agents.llm import LLMClient
from kernelwright.agents.lowered import SOURCE_NAME, SourceCache, operator_class
from kernelwright.agents.prompting import advice_for, chat_messages, device_line
from kernelwright.errors import LLMBudgetError, LoweringError
from kernelwright.prompts import render
from kernelwright.spec import Contract, ImplementationSpace, Task
from kernelwright.spec.inputs import init_inputs_for, nominal_inputs
from kernelwright.spec.opclass import OperatorClass
from kernelwright.spec.plan import GroupSpace, Plan
from kernelwright.tools.lower.choose import Timer, choose_spaces
from kernelwright.tools.opgraph import OpGraph, arithmetic_intensity, trace_reference

log = logging.getLogger(__name__)

ParamValue = int | float | str | bool


@runtime_checkable
class Planner(Protocol):
    """Reads the task and its contract once and says what to build and why."""

    def plan(self, task: Task, contract: Contract, backend: str) -> Plan: ...


# Machine balance (FLOP per byte) above which a task is compute-bound; refined by the profiler's
# measured peaks, this only words the rationale.
DEFAULT_BALANCE = 4.0


def trace_work(task: Task) -> OpGraph | None:
    """The reference's aten operators on the nominal inputs (seed 0), for counting its work.

    ``None`` when the reference cannot even run under the tracer (the plan then has no
    roofline, which the profiler reports as an unknown bound).
    """
    try:
        module = task.module()
        model = module.Model(*init_inputs_for(module))
        return trace_reference(model, nominal_inputs(module, 0))
    except Exception as exc:  # noqa: BLE001 - any failure of user code only loses the roofline
        log.warning("could not trace %s for its work: %s", task.name, exc)
        return None


def _bound(graph: OpGraph | None, balance: float) -> str:
    if graph is None:
        return "The reference's work could not be counted (no roofline bound)."
    intensity = arithmetic_intensity(graph)
    bound = "compute" if intensity > balance else "memory"
    return (f"It runs {graph.describe()} at {intensity:.2f} FLOP/byte, so it is {bound}-bound "
            "on a CPU-class device.")


class LoweringPlanner:
    """Offline planner: lower the reference and plan around the lowered program.

    Example:
        >>> plan = LoweringPlanner().plan(task, contract, "sycl")  # doctest: +SKIP
        >>> plan.sources  # doctest: +SKIP
        ['lowered']
    """

    def __init__(self, cache: SourceCache | None = None,
                 balance: float = DEFAULT_BALANCE, timer: Timer | None = None) -> None:
        self.cache = cache or SourceCache()
        self.balance = balance
        self.timer = timer  # None: build and time each option in this process

    def plan(self, task: Task, contract: Contract, backend: str) -> Plan:
        graph = trace_work(task)
        work = {"flops": graph.flops, "min_bytes": graph.min_bytes} if graph else {}
        try:
            source = self.cache.get(task, contract, backend)
        except LoweringError as exc:
            return self._unlowered(task, contract, backend, graph, exc).model_copy(update=work)
        chosen, share = self._choose_spaces(source)
        prog = source.program
        vendor = any(v == "vendor" for k, v in prog.params.items() if k.endswith(".impl"))
        space = (ImplementationSpace.VENDOR_LIBRARY if vendor
                 else ImplementationSpace.CUSTOM_KERNEL)
        groups = prog.variants[0].sched.groups
        strategy = (f"lowered program: {len(groups)} fused kernel(s) "
                    f"({', '.join(g.kind for g in groups)}); tune its schedule space")
        rationale = f"{_bound(graph, self.balance)}\n{prog.describe()}"
        return Plan(
            operator_class=operator_class(prog),
            implementation_space=space,
            backend=backend,
            strategy=strategy,
            rationale=rationale[:4000],
            sources=[SOURCE_NAME],
            groups=chosen,
            own_kernel_share=share,
            **work,
        )

    def _choose_spaces(self, source) -> tuple[list[GroupSpace], float | None]:
        """Time every legal space of each group; the source's defaults become the winners."""
        prog = source.program
        if not any(k.endswith(".impl") for k in prog.space):
            _, groups, _ = choose_spaces(prog, lambda p: (1.0, 0.0))  # nothing to measure
            return groups, 1.0
        try:
            params, groups, share = choose_spaces(prog, self.timer)
        except Exception as exc:  # noqa: BLE001 - a failed timing keeps the heuristic choice
            log.warning("could not time the implementation spaces of %s: %s",
                        prog.task.name, exc)
            return [], None
        chosen = prog.with_params(params)
        measured = tuple(f"{g.group} {g.kind} " for g in groups if g.timings_ms)
        chosen.notes = [n for n in prog.notes if not n.startswith(measured or ("\0",))] + [
            f"{g.group} {g.kind}: {g.space.value} ({g.form}): {g.why}" for g in groups
            if g.timings_ms]
        source.program = chosen
        return groups, share

    def _unlowered(self, task: Task, contract: Contract, backend: str,
                   graph: OpGraph | None, exc: LoweringError) -> Plan:
        """The plan of a reference the lowering compiler cannot handle: no source, and why."""
        why = " ".join(str(exc).split())[:600]
        framework = contract.allows(ImplementationSpace.FRAMEWORK)
        space = (ImplementationSpace.FRAMEWORK if framework
                 else ImplementationSpace.CUSTOM_KERNEL)
        strategy = (f"the reference does not lower ({why}); no offline source: "
                    + ("rewrite it at the framework level (fuse torch operators)" if framework
                       else "an LLM coder must write the kernel from scratch"))
        rationale = (f"{_bound(graph, self.balance)} The lowering compiler stopped: {why} "
                     f"The contract allows {', '.join(s.value for s in contract.allowed_spaces)}; "
                     f"chose {space.value}.")
        return Plan(
            operator_class=graph.classify() if graph is not None else OperatorClass.OTHER,
            implementation_space=space,
            backend=backend,
            strategy=strategy,
            rationale=rationale,
            sources=[],
        )

    def __repr__(self) -> str:
        return f"LoweringPlanner(balance={self.balance})"


class PlanReply(BaseModel):
    """The planner's answer (a tool call named ``PlanReply``)."""

    space: ImplementationSpace = Field(description="the implementation space to work in")
    backend: str = Field(description="the backend to write kernels for")
    strategy: str = Field(description="the optimisation strategy in a few sentences")
    steps: list[str] = Field(default_factory=list, description="refinement steps, in order")
    params: dict[str, ParamValue] = Field(default_factory=dict, description="tunables")
    rationale: str = Field(description="why it should win; the expected bottleneck")


class LLMPlanner:
    """Plans with the LLM on top of the offline planner's operator analysis.

    Example:
        >>> planner = LLMPlanner(client, LoweringPlanner())  # doctest: +SKIP
        >>> planner.plan(task, contract, "sycl").strategy  # doctest: +SKIP
    """

    def __init__(self, client: LLMClient, fallback: Planner, device: str | None = None) -> None:
        self.client = client
        self.fallback = fallback
        self.device = device

    def __repr__(self) -> str:
        return f"LLMPlanner({self.client!r}, fallback={self.fallback!r})"

    def plan(self, task: Task, contract: Contract, backend: str) -> Plan:
        base = self.fallback.plan(task, contract, backend)
        if self.client.over_budget():
            return base
        user = render(
            "planner.j2",
            contract=contract.render(),
            reference_source=task.path.read_text(),
            operator_class=base.operator_class.value,
            backend=backend,
            backends=[backend],
            device=self.device or device_line(backend),
            allowed_spaces=[s.value for s in contract.allowed_spaces],
            advice=advice_for(base, 6),
            history=[],
            tool_name=PlanReply.__name__,
        )
        try:
            messages = chat_messages("the planner", user)
            reply = self.client.ask_structured("planner", messages, PlanReply)
        except LLMBudgetError:
            return base
        return base if reply is None else self._merge(base, reply, contract)

    def _merge(self, base: Plan, reply: PlanReply, contract: Contract) -> Plan:
        space = reply.space if contract.allows(reply.space) else base.implementation_space
        steps = "".join(f"\n{i}. {s}" for i, s in enumerate(reply.steps, 1))
        params = f"\nStarting parameters: {reply.params}" if reply.params else ""
        return base.model_copy(
            update={
                "implementation_space": space,
                "strategy": reply.strategy.strip(),
                "rationale": f"{reply.rationale.strip()}{steps}{params}",
            }
        )
