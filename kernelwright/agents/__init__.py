"""The four roles (planner, coder, profiler, critic): one module per role, each holding the
role's protocol, its offline policy and (where there is one) its LLM policy."""

from kernelwright.agents.coder import Coder, LLMCoder, TemplateCoder
from kernelwright.agents.critic import Critic, HierarchyCritic, LLMCritic, RuleCritic
from kernelwright.agents.planner import LLMPlanner, Planner, RulePlanner
from kernelwright.agents.profiler import Profiler, RooflineProfiler

__all__ = [
    "Coder",
    "Critic",
    "HierarchyCritic",
    "LLMCoder",
    "LLMCritic",
    "LLMPlanner",
    "Planner",
    "Profiler",
    "RooflineProfiler",
    "RuleCritic",
    "RulePlanner",
    "TemplateCoder",
]
