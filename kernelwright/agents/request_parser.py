"""The request parser: a request in plain words (plus a task file or a pasted module) -> a run.

Two policies behind one ``parse(text) -> RunRequest`` method:

* ``OfflineRequestParser`` reads the words with explicit rules (no LLM). It finds
  - the task: a ``*.py`` path in the text, or a pasted PyTorch module (a fenced code block, or
    text that defines ``class Model`` and ``get_inputs``);
  - the backend: ``sycl`` / ``dpc++``, ``cpp`` / ``c++`` / ``openmp``, ``cuda`` / ``nvcc``;
  - the budget: ``budget 12``, ``12 evaluations|evals|tries|candidates``; a time limit:
    ``in 10 minutes``, ``within 90 s``, ``for 2 hours``;
  - tolerance words: ``exact`` / ``bit-exact`` (atol = rtol = 0, for the dtype named next to it,
    e.g. ``fp32 exact``, else for every float dtype); ``bf16 ok`` / ``fp16 is fine`` (fp32
    outputs may carry the error of that dtype: its default tolerance); a number such as
    ``1e-3`` or ``tolerance 0.001`` (atol = rtol = that number); ``atol 1e-5 rtol 1e-3``;
  - implementation spaces: ``no vendor libraries`` / ``no cuBLAS`` (exclude vendor_library),
    ``vendor libraries ok`` (include), ``no torch ops`` (exclude framework), ``torch ops ok``
    (include), ``custom kernels only`` (only custom_kernel).
* ``LLMRequestParser`` asks the configured LLM for the same fields as one structured object
  (``prompts/request_parser.j2``); pasted code and paths are still taken by the offline rules
  (the model never copies code). A malformed or failed answer falls back to the offline parse,
  with a note saying so.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from kernelwright.agents.request_words import (
    ATOL,
    BACKEND,
    BACKEND_WORDS,
    BUDGET,
    DTYPE_WORDS,
    EXACT,
    FENCE,
    LOOSE,
    NAME_WORDS,
    PATH,
    RTOL,
    SCI,
    SPACE_RULES,
    TIME,
    TOL,
    UNIT,
)
from kernelwright.spec.contract import DEFAULT_TOLERANCES, ImplementationSpace

if TYPE_CHECKING:
    from kernelwright.agents.llm import LLMClient

log = logging.getLogger(__name__)

BACKENDS = ("sycl", "cpp", "cuda")
ALL_DTYPES = "*"  # a tolerance for every floating dtype


class RunRequest(BaseModel):
    """What a user asked for; ``None`` means "not said" (the settings' default applies)."""

    text: str = ""
    task_path: str | None = None
    task_source: str | None = None  # a pasted PyTorch module
    task_name: str | None = None  # a name for a pasted module
    backend: str | None = None
    budget: int | None = Field(None, ge=1)
    time_limit_s: float | None = Field(None, gt=0)
    tolerances: dict[str, tuple[float, float]] = Field(default_factory=dict)  # dtype -> atol, rtol
    include_spaces: list[ImplementationSpace] = Field(default_factory=list)
    exclude_spaces: list[ImplementationSpace] = Field(default_factory=list)
    only_spaces: list[ImplementationSpace] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    parser: Literal["offline", "llm"] = "offline"

    def amended(self, other: RunRequest) -> RunRequest:
        """This request with what ``other`` (a later message, a rejection reason) says on top."""
        update = {
            k: getattr(other, k)
            for k in ("task_path", "task_source", "task_name", "backend", "budget", "time_limit_s")
            if getattr(other, k) is not None
        }
        tolerances = {**self.tolerances, **other.tolerances}
        include = [s for s in self.include_spaces if s not in other.exclude_spaces]
        exclude = [s for s in self.exclude_spaces if s not in other.include_spaces]
        return self.model_copy(
            update={
                **update,
                "tolerances": tolerances,
                "include_spaces": _union(include, other.include_spaces),
                "exclude_spaces": _union(exclude, other.exclude_spaces),
                "only_spaces": other.only_spaces or self.only_spaces,
                "notes": [*self.notes, *other.notes],
            }
        )

    def allowed_spaces(self, task_spaces: list[ImplementationSpace]) -> list[ImplementationSpace]:
        """The spaces a run may use: the task's own, widened and narrowed by the request."""
        spaces = list(self.only_spaces) or _union(task_spaces, self.include_spaces)
        kept = [s for s in spaces if s not in self.exclude_spaces]
        return kept or [ImplementationSpace.CUSTOM_KERNEL]

    def describe(self) -> str:
        """One plain line per understood field (printed back to the user)."""
        lines = []
        if self.task_path:
            lines.append(f"task: {self.task_path}")
        elif self.task_source:
            lines.append(f"task: pasted module ({len(self.task_source.splitlines())} lines)")
        for name in ("backend", "budget", "time_limit_s"):
            if getattr(self, name) is not None:
                lines.append(f"{name.replace('_', ' ')}: {getattr(self, name)}")
        for dtype, (atol, rtol) in self.tolerances.items():
            which = "every float dtype" if dtype == ALL_DTYPES else dtype
            lines.append(f"tolerance {which}: atol={atol:g} rtol={rtol:g}")
        for label, spaces in (
            ("only", self.only_spaces),
            ("allow", self.include_spaces),
            ("exclude", self.exclude_spaces),
        ):
            if spaces:
                lines.append(f"spaces {label}: {', '.join(s.value for s in spaces)}")
        return "\n".join([*lines, *(f"note: {n}" for n in self.notes)])


def _union(a: list, b: list) -> list:
    return [*a, *(x for x in b if x not in a)]


# -- offline rules ---------------------------------------------------------------------------
# -- offline rules: the patterns live in request_words.py ---------------------------------


class OfflineRequestParser:
    """Explicit rules over the words of a request (see the module docstring).

    Example:
        >>> r = OfflineRequestParser().parse("make task.py faster, keep fp32 exact, budget 6")
        >>> r.task_path, r.budget, r.tolerances
        ('task.py', 6, {'float32': (0.0, 0.0)})
    """

    def parse(self, text: str) -> RunRequest:
        source, words = _split_code(text)
        fields: dict = {"text": text, "task_source": source}
        if source is not None:
            fields["task_name"] = _name_from(words + " " + source)
        elif (path := _path_in(words)) is not None:
            fields["task_path"] = path
        fields["backend"] = _backend_in(words)
        fields["budget"] = _first_int(BUDGET, words)
        fields["time_limit_s"] = _time_in(words)
        fields["tolerances"] = _tolerances_in(words)
        for kind, spaces in _spaces_in(words).items():
            fields[f"{kind}_spaces"] = spaces
        return RunRequest(**fields)

    def __repr__(self) -> str:
        return "OfflineRequestParser()"


def _split_code(text: str) -> tuple[str | None, str]:
    """(pasted module or None, the words around it)."""
    for match in FENCE.finditer(text):
        if "class Model" in match.group(1):
            return match.group(1).strip() + "\n", text[: match.start()] + text[match.end() :]
    if "class Model" in text and "def get_inputs" in text:
        lines = text.splitlines()
        start = next(
            i for i, line in enumerate(lines)
            if line.startswith(("import ", "from ", "class ", "def ", "#", "@"))
        )  # fmt: skip
        return "\n".join(lines[start:]).strip() + "\n", "\n".join(lines[:start])
    return None, text


def _path_in(words: str) -> str | None:
    match = PATH.search(words)
    return match.group(1) if match else None


def _backend_in(words: str) -> str | None:
    for match in BACKEND.finditer(words):
        if match.group(1) is None:
            return BACKEND_WORDS[match.group(2).lower()]
    return None


def _first_int(patterns: list[re.Pattern], words: str) -> int | None:
    for pattern in patterns:
        if (match := pattern.search(words)) is not None and int(match.group(1)) > 0:
            return int(match.group(1))
    return None


def _time_in(words: str) -> float | None:
    match = TIME.search(words)
    if match is None:
        return None
    return float(match.group(1)) * UNIT[match.group(2)[0].lower()]


def _tolerances_in(words: str) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    for match in LOOSE.finditer(words):
        loose = DEFAULT_TOLERANCES[DTYPE_WORDS[(match.group(1) or match.group(2)).lower()]]
        out["float32"] = loose
    atol, rtol = ATOL.search(words), RTOL.search(words)
    if atol or rtol:
        a = float(atol.group(1)) if atol else None
        r = float(rtol.group(1)) if rtol else None
        out[ALL_DTYPES] = (a if a is not None else r, r if r is not None else a)
    else:
        number = TOL.search(words) or re.search(SCI, words)
        if number is not None:
            out[ALL_DTYPES] = (float(number.group(1)), float(number.group(1)))
    for match in EXACT.finditer(words):
        named = match.group(1) or match.group(2)
        out[DTYPE_WORDS[named.lower()] if named else ALL_DTYPES] = (0.0, 0.0)
    return out


def _spaces_in(words: str) -> dict[str, list[ImplementationSpace]]:
    out: dict[str, list[ImplementationSpace]] = {"include": [], "exclude": [], "only": []}
    for pattern, kind, space in SPACE_RULES:
        if pattern.search(words) and space not in out[kind]:
            out[kind].append(space)
    for space in out["exclude"]:  # "don't use BLAS" also reads as "use BLAS": the no wins
        if space in out["include"]:
            out["include"].remove(space)
    return out


def _name_from(text: str) -> str:
    lowered = text.lower()
    found = next((w for w in NAME_WORDS if w in lowered), None)
    return f"chat_{found}" if found else "chat_task"


# -- the LLM policy --------------------------------------------------------------------------
class ToleranceItem(BaseModel):
    dtype: str = Field(description="float32, float16, bfloat16, float64 or * for all")
    atol: float = Field(ge=0)
    rtol: float = Field(ge=0)

    @field_validator("dtype")
    @classmethod
    def _known(cls, value: str) -> str:
        value = DTYPE_WORDS.get(value.lower().removeprefix("torch."), value)
        if value != ALL_DTYPES and value not in DEFAULT_TOLERANCES:
            raise ValueError(f"unknown dtype {value!r}")
        return value


class RequestReply(BaseModel):
    """What the LLM returns for a request (every field optional: null = not said)."""

    task_path: str | None = None
    backend: Literal["sycl", "cpp", "cuda"] | None = None
    budget: int | None = Field(None, ge=1)
    time_limit_s: float | None = Field(None, gt=0)
    tolerances: list[ToleranceItem] = Field(default_factory=list)
    include_spaces: list[ImplementationSpace] = Field(default_factory=list)
    exclude_spaces: list[ImplementationSpace] = Field(default_factory=list)
    only_spaces: list[ImplementationSpace] = Field(default_factory=list)


class LLMRequestParser:
    """Asks the LLM to read the request; falls back to the offline rules on a bad answer.

    Example:
        >>> LLMRequestParser(client).parse("softmax.py, bf16 ok, 20 tries")  # doctest: +SKIP
    """

    def __init__(self, client: LLMClient, fallback: OfflineRequestParser | None = None) -> None:
        self.client = client
        self.fallback = fallback or OfflineRequestParser()

    def __repr__(self) -> str:
        return f"LLMRequestParser({self.client!r})"

    def parse(self, text: str) -> RunRequest:
        from kernelwright.agents.llm import LLMError
        from kernelwright.prompts import render

        offline = self.fallback.parse(text)
        _, words = _split_code(text)
        user = render(
            "request_parser.j2",
            request=words.strip(),
            backends=list(BACKENDS),
            spaces=[s.value for s in ImplementationSpace],
            tool_name=RequestReply.__name__,
        )
        messages = [("system", render("system.j2", role="the request parser")), ("user", user)]
        try:
            reply = self.client.ask_structured("request_parser", messages, RequestReply)
        except (LLMError, ValidationError) as exc:
            return _with_note(
                offline, f"the LLM request parser failed ({exc}); used the offline rules"
            )
        if reply is None:
            return _with_note(
                offline, "the LLM request parser gave a malformed answer; used the offline rules"
            )
        return _from_reply(reply, offline, words)


def _with_note(request: RunRequest, note: str) -> RunRequest:
    log.warning("%s", note)
    return request.model_copy(update={"notes": [*request.notes, note]})


def _from_reply(reply: RequestReply, offline: RunRequest, words: str) -> RunRequest:
    """The LLM's fields; code and paths only from the text itself (no invented files)."""
    path = reply.task_path if reply.task_path and reply.task_path in words else offline.task_path
    return offline.model_copy(
        update={
            "task_path": None if offline.task_source else path,
            "backend": reply.backend,
            "budget": reply.budget,
            "time_limit_s": reply.time_limit_s,
            "tolerances": {t.dtype: (t.atol, t.rtol) for t in reply.tolerances},
            "include_spaces": reply.include_spaces,
            "exclude_spaces": reply.exclude_spaces,
            "only_spaces": reply.only_spaces,
            "parser": "llm",
        }
    )
