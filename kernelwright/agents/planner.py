"""The planner (HIERA): classify the reference, choose the implementation space and a strategy.

The role's protocol (:class:`Planner`), its offline policy (:class:`RulePlanner`) and its LLM
policy (:class:`LLMPlanner`, which refines the offline plan) live here.

It traces the reference's operators once, classifies the work (elementwise chain, row-wise
normalisation, reduction, GEMM with epilogue, layout change, other), places it on the roofline
(arithmetic intensity against this machine's balance), picks the space the contract allows, and
names the kernel templates that can implement it, best first.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from kernelwright.agents.llm import LLMClient
from kernelwright.agents.matching import ModelShape, match_templates, model_shape
from kernelwright.agents.prompting import DEFAULT_DEVICE, advice_for, chat_messages
from kernelwright.errors import LLMBudgetError
from kernelwright.prompts import render
from kernelwright.spec import Contract, ImplementationSpace, Task
from kernelwright.spec.inputs import init_inputs_for, nominal_inputs
from kernelwright.spec.opclass import OperatorClass
from kernelwright.spec.plan import Plan
from kernelwright.tools.opgraph import (
    OpGraph,
    arithmetic_intensity,
    trace_reference,
)

STRATEGIES: dict[OperatorClass, str] = {
    OperatorClass.ELEMENTWISE: "one fused pass: vectorised loads, several items per work-item",
    OperatorClass.ROWWISE_NORM: "one work-group per row: work-group reductions, single pass "
    "over the row held in registers/local memory",
    OperatorClass.REDUCTION: "tree reduction in work-group local memory, one partial per group",
    OperatorClass.LAYOUT: "tiled transpose through local memory so reads and writes coalesce",
    OperatorClass.GEMM: "tiled, register-blocked GEMM with the epilogue fused into the store",
    OperatorClass.OTHER: "framework-level rewrite: fuse torch operators",
}

ParamValue = int | float | str | bool


@runtime_checkable
class Planner(Protocol):
    """Reads the task and its contract once and says what to build and why."""

    def plan(self, task: Task, contract: Contract, backend: str) -> Plan: ...


# Machine balance (FLOP per byte) above which a task is compute-bound; refined by the profiler's
# measured peaks, this only orders the advice in the rationale.
DEFAULT_BALANCE = 4.0


def trace_task(task: Task) -> tuple[OpGraph, ModelShape]:
    """Trace the reference's operators on the nominal inputs (seed 0)."""
    module = task.module()
    shape = model_shape(module)
    model = module.Model(*init_inputs_for(module))
    return trace_reference(model, nominal_inputs(module, 0), shape.inputs), shape


def choose_space(contract: Contract, op_class: OperatorClass) -> ImplementationSpace:
    """Custom kernels where allowed and a template family exists; else what the contract allows."""
    custom = contract.allows(ImplementationSpace.CUSTOM_KERNEL)
    if custom and op_class != OperatorClass.OTHER:
        return ImplementationSpace.CUSTOM_KERNEL
    for space in (ImplementationSpace.FRAMEWORK, ImplementationSpace.VENDOR_LIBRARY):
        if contract.allows(space):
            return space
    return ImplementationSpace.CUSTOM_KERNEL


class RulePlanner:
    """Offline planner: operator-graph rules and the template library, no LLM.

    Example:
        >>> RulePlanner().plan(task, contract, "sycl").strategy  # doctest: +SKIP
        'tiled, register-blocked GEMM with the epilogue fused into the store'
    """

    def __init__(self, balance: float = DEFAULT_BALANCE) -> None:
        self.balance = balance

    def plan(self, task: Task, contract: Contract, backend: str) -> Plan:
        graph, shape = trace_task(task)
        op_class = graph.classify()
        space = choose_space(contract, op_class)
        custom = space == ImplementationSpace.CUSTOM_KERNEL
        matches = match_templates(graph, shape, backend) if custom else []
        intensity = arithmetic_intensity(graph)
        bound = "compute" if intensity > self.balance else "memory"
        rationale = (
            f"The reference runs {graph.describe()}: a {op_class.value} task at "
            f"{intensity:.2f} FLOP/byte, so it is {bound}-bound on a CPU-class device. "
            f"The contract allows {', '.join(s.value for s in contract.allowed_spaces)}; "
            f"chose {space.value}. "
            + (
                f"Templates that implement it: {', '.join(m.name for m in matches)}."
                if matches
                else "No kernel template implements this operator graph."
            )
        )
        return Plan(
            operator_class=op_class,
            implementation_space=space,
            backend=backend,
            strategy=STRATEGIES[op_class],
            rationale=rationale,
            templates=[m.name for m in matches],
            op_spec=matches[0].op_spec if matches else {},
            flops=graph.flops,
            min_bytes=graph.min_bytes,
        )

    def __repr__(self) -> str:
        return f"RulePlanner(balance={self.balance})"


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
        >>> planner = LLMPlanner(client, RulePlanner())  # doctest: +SKIP
        >>> planner.plan(task, contract, "sycl").strategy  # doctest: +SKIP
    """

    def __init__(self, client: LLMClient, fallback: Planner, device: str = DEFAULT_DEVICE) -> None:
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
            device=self.device,
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
