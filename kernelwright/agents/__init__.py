"""The four roles (planner, coder, profiler, critic): one module per role, each holding the
role's protocol, its offline policy and (where there is one) its LLM policy."""

from kernelwright.agents.coder import Coder, LLMCoder, LoweredCoder
from kernelwright.agents.critic import Critic, HierarchyCritic, LLMCritic, RuleCritic
from kernelwright.agents.planner import LLMPlanner, LoweringPlanner, Planner
from kernelwright.agents.profiler import Profiler, RooflineProfiler

__all__ = [
    "Coder",
    "Critic",
    "HierarchyCritic",
    "LLMCoder",
    "LLMCritic",
    "LLMPlanner",
    "LoweredCoder",
    "LoweringPlanner",
    "Planner",
    "Profiler",
    "RooflineProfiler",
    "RuleCritic",
]
