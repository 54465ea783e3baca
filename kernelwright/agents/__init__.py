"""The four roles (planner, coder, profiler, critic): protocols, offline and LLM policies."""

from kernelwright.agents.protocols import Coder, Critic, Planner, Profiler
from kernelwright.spec.plan import Action, Decision, History, Plan, Profile, Roofline

__all__ = [
    "Action",
    "Coder",
    "Critic",
    "Decision",
    "History",
    "Plan",
    "Planner",
    "Profile",
    "Profiler",
    "Roofline",
]
