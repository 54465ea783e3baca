"""The four roles (planner, coder, profiler, critic): protocols, offline and LLM policies."""

from kernelwright.agents.protocols import (
    Action,
    Coder,
    Critic,
    Decision,
    History,
    Plan,
    Planner,
    Profile,
    Profiler,
    Roofline,
)

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
