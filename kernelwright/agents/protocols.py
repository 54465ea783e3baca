"""The four roles of the optimisation loop, as protocols with interchangeable policies.

Each role has an offline policy (rules and kernel templates; no LLM) and, where an LLM is
configured, an LLM policy behind the same protocol. Agents receive what they need and return
small, serialisable pydantic objects; the graph stores those in its state.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from kernelwright.spec import Candidate, Contract, Task
from kernelwright.spec.plan import Decision, History, Plan, Profile
from kernelwright.spec.result import EvalResult


@runtime_checkable
class Planner(Protocol):
    def plan(self, task: Task, contract: Contract, backend: str) -> Plan: ...


@runtime_checkable
class Coder(Protocol):
    def propose(
        self, task: Task, contract: Contract, plan: Plan, history: History, n: int
    ) -> list[Candidate]:
        """Up to ``n`` new candidates not yet in ``history`` (empty when it has no more ideas)."""
        ...


@runtime_checkable
class Profiler(Protocol):
    def profile(self, candidate: Candidate, result: EvalResult, plan: Plan) -> Profile: ...


@runtime_checkable
class Critic(Protocol):
    def decide(self, plan: Plan, history: History, elapsed_s: float) -> Decision: ...
