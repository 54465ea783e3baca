"""The task file of a chat run: the user's module plus what the conversation asked for.

A chat run never edits the user's file. It writes a revision into the run store: the user's
source (a file's text or a pasted module) followed by a block that overrides the task's own
``TOLERANCES`` and ``ALLOWED_SPACES`` with what the request said, and that quotes the request and
every rejection reason as comments (an LLM planner and coder read the task source, so they read
the user's words too). The contract is then derived from this file as for any task, so the
harness enforces the user's tolerance and spaces with no special path.
"""

from __future__ import annotations

from kernelwright.agents.request_parser import ALL_DTYPES, RunRequest
from kernelwright.spec.contract import DEFAULT_SPACES, DEFAULT_TOLERANCES, ImplementationSpace
from kernelwright.spec.task import import_task_module

MARKER = "# ---- kernelwright chat: the conversation's constraints (override the above) ----"


def task_spaces(path) -> list[ImplementationSpace]:
    """The implementation spaces the task file itself allows."""
    names = getattr(import_task_module(path), "ALLOWED_SPACES", None) or DEFAULT_SPACES
    return [ImplementationSpace(n) for n in names]


def tolerance_table(request: RunRequest) -> dict[str, tuple[float, float]]:
    """Per-dtype (atol, rtol): ``*`` expands to every float dtype, named dtypes win over it."""
    table: dict[str, tuple[float, float]] = {}
    if ALL_DTYPES in request.tolerances:
        table = {dtype: request.tolerances[ALL_DTYPES] for dtype in DEFAULT_TOLERANCES}
    table.update({k: v for k, v in request.tolerances.items() if k != ALL_DTYPES})
    return table


def revision_source(
    base_source: str,
    request: RunRequest,
    spaces: list[ImplementationSpace],
    reasons: list[str],
) -> str:
    """The base module followed by the constraints block (comments quote user text safely)."""
    lines = ["", "", MARKER]
    lines += _comment("request", _request_words(request))
    for reason in reasons:
        lines += _comment("rejected because", reason)
    tolerances = tolerance_table(request)
    if tolerances:
        body = ", ".join(f"{k!r}: ({a!r}, {r!r})" for k, (a, r) in sorted(tolerances.items()))
        lines.append(f"TOLERANCES = {{**globals().get('TOLERANCES', {{}}), {body}}}")
    allowed = request.allowed_spaces(spaces)
    lines.append(f"ALLOWED_SPACES = {[s.value for s in allowed]!r}")
    return base_source.rstrip("\n") + "\n".join(lines) + "\n"


def _request_words(request: RunRequest) -> str:
    text = request.text
    if request.task_source:
        text = text.replace(request.task_source.strip(), "<pasted module>")
    return text.strip()


def _comment(label: str, text: str) -> list[str]:
    """``text`` as comment lines: no character can end the comment and start code."""
    clean = "".join(ch if ch.isprintable() or ch == "\n" else " " for ch in text)
    rows = [row.strip() for row in clean.split("\n") if row.strip()]
    return [f"# {label}: {row}" for row in rows] if rows else []
