"""The reply formats our prompts ask for, and strict parsers for them (pure text, no LLM).

- fenced code blocks (```python ... ```) holding a whole candidate module;
- SEARCH/REPLACE edits (aider/OpenEvolve style) applied to ``[EVOLVE_START]``/``[EVOLVE_END]``
  regions of a module, or to the sections of a meta-prompt;
- a JSON object, fenced or bare, as the fallback for structured replies.

Every parser raises ``ReplyFormatError`` with a message written to be fed back to the model.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

from kernelwright.errors import ReplyFormatError

EVOLVE_START = "[EVOLVE_START]"
EVOLVE_END = "[EVOLVE_END]"

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+.-]*)[^\n]*$", re.MULTILINE)
_SEARCH = re.compile(r"^[ \t]*<{5,}[ \t]*SEARCH[ \t]*$", re.MULTILINE)
_DIVIDER = re.compile(r"^[ \t]*={5,}[ \t]*$", re.MULTILINE)
_REPLACE = re.compile(r"^[ \t]*>{5,}[ \t]*REPLACE[ \t]*$", re.MULTILINE)



@dataclass(frozen=True)
class CodeBlock:
    language: str
    text: str


@dataclass(frozen=True)
class Edit:
    """One SEARCH/REPLACE edit: replace the exact text ``search`` by ``replace``."""

    search: str
    replace: str


def code_blocks(text: str) -> list[CodeBlock]:
    """Every fenced code block of ``text``; raise if a fence is left open (a truncated reply)."""
    text = text.replace("\r\n", "\n")
    blocks: list[CodeBlock] = []
    pos = 0
    while (opening := _FENCE.search(text, pos)) is not None:
        fence, lang = opening.group(1), opening.group(2).lower()
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M)
        end = closing.search(text, opening.end())
        if end is None:
            raise ReplyFormatError(
                "the reply ends inside a code block (no closing ``` fence): it was probably cut "
                "off. Reply again with the complete code block, shorter if needed."
            )
        blocks.append(CodeBlock(lang, text[opening.end() + 1 : end.start()]))
        pos = end.end()
    return blocks


def extract_module(text: str, must_define: str = "ModelNew") -> str:
    """The Python module in a reply: the fenced python block defining ``must_define``.

    A reply that is bare Python (no fences) is accepted when it parses and defines the class.
    """
    blocks = code_blocks(text)
    wanted = re.compile(rf"^class\s+{re.escape(must_define)}\b", re.MULTILINE)
    if not blocks:
        return _checked_python(text.strip() + "\n", wanted, must_define, bare=True)
    python = [b for b in blocks if b.language in ("python", "py", "python3", "")]
    defining = [b for b in python if wanted.search(b.text)]
    if not defining:
        raise ReplyFormatError(
            f"no ```python code block defining `class {must_define}` was found in the reply. "
            f"Reply with the whole module in one ```python block that defines {must_define}."
        )
    return _checked_python(max(defining, key=lambda b: len(b.text)).text, wanted, must_define)


def check_module(src: str, must_define: str = "ModelNew") -> str:
    """``src`` itself if it parses as Python and defines ``class must_define``; else raise."""
    wanted = re.compile(rf"^class\s+{re.escape(must_define)}\b", re.MULTILINE)
    if not wanted.search(src):
        raise ReplyFormatError(f"the resulting module no longer defines `class {must_define}`")
    return _checked_python(src, wanted, must_define)


def _checked_python(src: str, wanted: re.Pattern[str], name: str, bare: bool = False) -> str:
    if bare and not wanted.search(src):
        raise ReplyFormatError(
            f"the reply holds no code block. Reply with the whole module in one ```python block "
            f"that defines `class {name}`."
        )
    try:
        ast.parse(src)
    except SyntaxError as exc:
        raise ReplyFormatError(
            f"the Python module in the reply has a syntax error at line {exc.lineno}: {exc.msg}. "
            "Reply with a corrected, complete module."
        ) from exc
    return src


def parse_edits(text: str) -> list[Edit]:
    """The SEARCH/REPLACE edits of a reply, in order; raise on a half-written edit."""
    text = text.replace("\r\n", "\n")
    edits: list[Edit] = []
    pos = 0
    while (head := _SEARCH.search(text, pos)) is not None:
        n = len(edits) + 1
        divider = _DIVIDER.search(text, head.end())
        tail = _REPLACE.search(text, head.end())
        nxt = _SEARCH.search(text, head.end())
        if divider is None or tail is None or tail.start() < divider.start():
            problem = f"edit #{n} lacks its ======= or >>>>>>> REPLACE line"
            raise ReplyFormatError(_edit_help(problem))
        if nxt is not None and nxt.start() < tail.start():
            raise ReplyFormatError(_edit_help(f"edit #{n} starts a new SEARCH before its REPLACE"))
        search = _body(text, head.end(), divider.start())
        if not search.strip():
            raise ReplyFormatError(_edit_help(f"edit #{n} has an empty SEARCH part"))
        edits.append(Edit(search, _body(text, divider.end(), tail.start())))
        pos = tail.end()
    if not edits:
        raise ReplyFormatError(_edit_help("the reply contains no SEARCH/REPLACE edit"))
    return edits


def _body(text: str, start: int, end: int) -> str:
    body = text[start:end]
    return body[1:] if body.startswith("\n") else body


def _edit_help(problem: str) -> str:
    return (
        f"{problem}. Write each edit as:\n<<<<<<< SEARCH\n(exact lines to find)\n=======\n"
        "(lines to put instead)\n>>>>>>> REPLACE"
    )


def evolve_regions(source: str) -> list[tuple[int, int]]:
    """Character spans between ``[EVOLVE_START]`` and ``[EVOLVE_END]`` marker lines."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    offset = 0
    for line in source.splitlines(keepends=True):
        if EVOLVE_START in line:
            if start is not None:
                raise ReplyFormatError(f"nested {EVOLVE_START}: close the previous block first")
            start = offset + len(line)
        elif EVOLVE_END in line:
            if start is None:
                raise ReplyFormatError(f"{EVOLVE_END} without a matching {EVOLVE_START}")
            spans.append((start, offset))
            start = None
        offset += len(line)
    if start is not None:
        raise ReplyFormatError(f"{EVOLVE_START} is never closed by {EVOLVE_END}")
    return spans


def apply_edits(source: str, edits: list[Edit], *, only_evolve_blocks: bool = True) -> str:
    """Apply ``edits`` in order; each SEARCH must match exactly once, inside an evolve block.

    When ``source`` has no evolve markers (or ``only_evolve_blocks`` is False) any text may be
    edited. A SEARCH that differs from the source only in trailing whitespace still matches.
    """
    for n, edit in enumerate(edits, 1):
        spans = evolve_regions(source) if only_evolve_blocks else []
        start, end = _locate(source, edit.search, n)
        if spans and not any(a <= start and end <= b for a, b in spans):
            raise ReplyFormatError(
                f"edit #{n} changes text outside the {EVOLVE_START}/{EVOLVE_END} blocks; only "
                "the code between those markers may change"
            )
        if spans and (EVOLVE_START in edit.replace or EVOLVE_END in edit.replace):
            raise ReplyFormatError(f"edit #{n} must not add or remove the evolve markers")
        source = source[:start] + edit.replace + source[end:]
    return source


def _locate(source: str, search: str, n: int) -> tuple[int, int]:
    hits = [m.start() for m in re.finditer(re.escape(search), source)]
    if len(hits) == 1:
        return hits[0], hits[0] + len(search)
    if not hits:
        loose = _loose_pattern(search)
        found = [(m.start(), m.end()) for m in loose.finditer(source)]
        if len(found) == 1:
            return found[0]
        hits = [a for a, _ in found]
    if not hits:
        raise ReplyFormatError(
            f"the SEARCH part of edit #{n} was not found; copy the lines to change exactly "
            "from the current code (same indentation)"
        )
    raise ReplyFormatError(
        f"the SEARCH part of edit #{n} matches {len(hits)} places; include more surrounding "
        "lines so it matches exactly one"
    )


def _loose_pattern(search: str) -> re.Pattern[str]:
    lines = search.strip("\n").split("\n")
    return re.compile(r"[ \t]*\n".join(re.escape(line.rstrip()) for line in lines) + r"[ \t]*")


def extract_json(text: str) -> dict:
    """The JSON object in a reply: a fenced ```json block, else the outermost ``{...}``."""
    candidates = [b.text for b in _safe_blocks(text) if b.language in ("json", "")]
    first, last = text.find("{"), text.rfind("}")
    if 0 <= first < last:
        candidates.append(text[first : last + 1])
    for cand in candidates:
        try:
            value = json.loads(cand)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise ReplyFormatError("the reply holds no valid JSON object; reply with one JSON object")


def _safe_blocks(text: str) -> list[CodeBlock]:
    try:
        return code_blocks(text)
    except ReplyFormatError:
        return []
