"""What the LLM policies of every role share: how a profile, a plan and advice read in a prompt.

The roles' LLM policies live in their role's module (:mod:`planner`, :mod:`coder`,
:mod:`critic`); the connection (chat model, usage ledger, reply repair) in :mod:`llm`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kernelwright.prompts import render
from kernelwright.prompts.context import Feedback
from kernelwright.spec import Candidate, fitness
from kernelwright.spec.plan import Plan, Profile
from kernelwright.tools.knowledge import retrieve

log = logging.getLogger(__name__)

SourceLookup = Callable[[str], Candidate | None]
DEFAULT_DEVICE = "the SYCL CPU device (Intel OpenCL runtime; 64-256 work-items per group)"
DEVICES = {
    "sycl": DEFAULT_DEVICE,
    "cpp": "the host CPU, C++ with OpenMP threads and SIMD (g++ -O3 -march=native -fopenmp)",
    "cuda": "an NVIDIA GPU (CUDA C++ built with nvcc)",
}


def device_line(backend: str) -> str:
    """What runs the kernels of ``backend``, in one line for the planner."""
    return DEVICES.get(backend, f"the {backend} backend's device")


def machine_text(peaks: object | None, backend: str) -> str:
    """The hardware in a few lines: device, cores, SIMD ISA, caches, measured peaks."""
    from kernelwright.tools.cpuinfo import host_summary

    lines = [f"Kernels run on {device_line(backend)}."]
    if backend in ("cpp", "sycl"):
        lines.append(host_summary())
    bw, gf = getattr(peaks, "bandwidth_gbps", None), getattr(peaks, "gflops", None)
    if bw and gf:
        lines.append(
            f"Measured peaks: {bw:.3g} GB/s memory bandwidth, {gf:.3g} GFLOP/s fp32 "
            f"(ridge {gf / bw:.3g} FLOP/byte); the roofline bound below uses them."
        )
    return "\n".join(lines)


def feedback_from_profile(profile: Profile) -> Feedback:
    """What the prompts say about an evaluated candidate, from its ``Profile``."""
    verdict = "correct" if profile.correct else f"not correct (level {profile.level} of 5)"
    timing = None
    if profile.speedup is not None:
        timing = (
            f"speedup {profile.speedup:.3g}x "
            f"(spread {profile.speedup_low or 0:.3g}-{profile.speedup_high or 0:.3g})"
        )
    stats = [
        f"{k}: " + ", ".join(f"{n}={v}" for n, v in s.items() if v is not None)
        for k, s in profile.stats.items()
    ]
    roof = profile.roofline.model_dump(exclude_none=True) if profile.roofline else {}
    return Feedback(
        verdict=verdict,
        error=profile.error,
        flags=list(profile.flags),
        timing=timing,
        kernel_stats=stats,
        profile=[f"roofline {k}: {_num(v)}" for k, v in roof.items()],
    )


def _num(v: object) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def profile_fitness(profile: Profile) -> float:
    """KernelFoundry's fitness of an evaluated candidate (:func:`kernelwright.spec.fitness`)."""
    return fitness(profile.level, profile.speedup)


def advice_for(plan: Plan, k: int):
    """Up to ``k`` knowledge-base entries for the plan's operator class and backend."""
    try:
        return retrieve(plan.operator_class.value, plan.backend, k=k)
    except ValueError:  # a backend the knowledge base has no entries for
        return []


def chat_messages(role: str, user: str) -> list[tuple[str, str]]:
    """The system prompt of ``role`` and the rendered user prompt."""
    return [("system", render("system.j2", role=role)), ("user", user)]


def plan_text(plan: Plan) -> str:
    """The plan in two lines, as the coder and critic prompts show it."""
    text = (
        f"{plan.operator_class.value} task, space {plan.implementation_space.value}, backend "
        f"{plan.backend}. Strategy: {plan.strategy}\nRationale: {plan.rationale}"
    )
    if plan.flops or plan.min_bytes:
        intensity = plan.flops / plan.min_bytes if plan.min_bytes else float("inf")
        text += (
            f"\nWork: {plan.flops:.3g} FLOP over at least {plan.min_bytes:.3g} bytes moved "
            f"(arithmetic intensity {intensity:.3g} FLOP/byte; compare with the machine's ridge)"
        )
    return text


def lookup_source(lookup: SourceLookup | None, candidate_id: str) -> Candidate | None:
    """The candidate ``candidate_id`` from ``lookup`` (the run store), ``None`` if absent."""
    if lookup is None:
        return None
    try:
        return lookup(candidate_id)
    except (OSError, KeyError, ValueError):  # not in the store (yet): show no source
        log.debug("candidate %s not found for the prompt", candidate_id)
        return None


def profile_summary(profile: Profile | None) -> str:
    """One line: correct and how fast, or the ladder level reached."""
    if profile is None:
        return "not evaluated"
    if profile.correct and profile.speedup is not None:
        return f"correct, {profile.speedup:.3g}x faster than the reference"
    return f"not correct (level {profile.level} of 5)"
