"""What the LLM policies ask the model to return, and how a coder reply becomes a module."""

from __future__ import annotations

from pydantic import BaseModel, Field

from kernelwright.prompts import apply_edits, check_module, extract_module, parse_edits
from kernelwright.spec import ImplementationSpace
from kernelwright.spec.plan import Action

ParamValue = int | float | str | bool


class PlanReply(BaseModel):
    """The planner's answer (a tool call named ``PlanReply``)."""

    space: ImplementationSpace = Field(description="the implementation space to work in")
    backend: str = Field(description="the backend to write kernels for")
    strategy: str = Field(description="the optimisation strategy in a few sentences")
    steps: list[str] = Field(default_factory=list, description="refinement steps, in order")
    params: dict[str, ParamValue] = Field(default_factory=dict, description="tunables")
    rationale: str = Field(description="why it should win; the expected bottleneck")


class CritiqueReply(BaseModel):
    """The critic's answer (a tool call named ``CritiqueReply``)."""

    decision: Action = Field(description="what the team does next")
    diagnosis: str = Field(description="what limits the candidate now, with evidence")
    next_steps: list[str] = Field(default_factory=list, description="changes for the coder")
    confidence: float = Field(0.5, ge=0.0, le=1.0)


def coder_parser(parent_source: str | None, edit_mode: bool):
    """A ``text -> module source`` parser for coder replies.

    In edit mode the reply must hold SEARCH/REPLACE edits of the parent's evolve blocks; else it
    must hold one complete module. Either way the result must parse and define ``ModelNew``.
    """

    def parse(text: str) -> str:
        if edit_mode and parent_source is not None:
            return check_module(apply_edits(parent_source, parse_edits(text)))
        return extract_module(text)

    return parse
