"""Take a kernel's constant buffer offsets out of its text, to be added to its pointers.

An RNN's steps read the input at ``x[t]``: the same kernel but for the step's offset, which
the index algebra folds into every subscript (``x0[128*i0 + j + 64512]``). With each
argument's smallest constant offset moved to the launch (the pointer passed is ``x0 +
64512``), the steps' kernels are one text. Only plain subscripts are rewritten: an argument
named anywhere but right before ``[`` (passed on, its address taken) keeps its text.
"""

from __future__ import annotations

import re

# C storage types of kernel arguments and their sizes (dtypes.storage_type)
_BYTES = {"float": 4, "double": 8, "unsigned short": 2, "short": 2, "int": 4, "long long": 8,
          "unsigned char": 1, "signed char": 1, "bool": 1, "char": 1}
_PARAM = re.compile(r"(?:const\s+)?([a-z ]+?)\s*\*\s*(?:__restrict__\s+)?(\w+)$")
_TAIL = re.compile(r"^(.*\S) ([+-]) (\d+)$", re.S)


def rebased(text: str, args: list[str]) -> tuple[str, list[int]] | None:
    """``(text, byte offset per argument)`` with each argument's smallest non-negative
    constant subscript offset taken out, or None where the text is not a plain C function
    over pointers (a helper before it, a parameter type not known)."""
    if not text.startswith('extern "C"'):
        return None
    open_at = text.find("{")
    head, body = text[:open_at], text[open_at:]
    sizes = _param_sizes(head)
    if sizes is None or list(sizes) != args:
        return None
    offsets = []
    for name in args:
        body, elements = _rebase_argument(body, name)
        offsets.append(elements * sizes[name])
    return head + body, offsets


def _param_sizes(head: str) -> dict[str, int] | None:
    inside = head[head.find("(") + 1: head.rfind(")")]
    out: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in inside.split(","))):
        m = _PARAM.match(part)
        if m is None or m.group(1).strip() not in _BYTES:
            return None
        out[m.group(2)] = _BYTES[m.group(1).strip()]
    return out


def _rebase_argument(body: str, name: str) -> tuple[str, int]:
    spans = []
    for m in re.finditer(rf"\b{re.escape(name)}\b", body):
        if body[m.end():m.end() + 1] != "[":
            return body, 0
        end = _closing(body, m.end())
        if end is None:
            return body, 0
        spans.append((m.end() + 1, end))
    parts = [_split(body[a:b]) for a, b in spans]
    base = min((c for _, c in parts), default=0)
    if base <= 0:
        return body, 0
    out, at = [], 0
    for (a, b), (rest, c) in zip(spans, parts, strict=True):
        left = c - base
        text = (f"{rest} + {left}" if left else rest) if rest else str(left)
        out += [body[at:a], text]
        at = b
    out.append(body[at:])
    return "".join(out), base


def _closing(text: str, open_at: int) -> int | None:
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"[": 1, "]": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return None


def _split(subscript: str) -> tuple[str, int]:
    """``(the rest, constant)`` of a subscript whose last top-level term is an integer."""
    s = subscript.strip()
    if s.isdigit():
        return "", int(s)
    m = _TAIL.match(s)
    if m is None or not _sum_at_top(m.group(1)):
        return s, 0
    return m.group(1), int(m.group(3)) * (1 if m.group(2) == "+" else -1)


def _sum_at_top(text: str) -> bool:
    """Whether ``text + c`` adds ``c`` to all of ``text``: brackets balanced and no operator
    binding looser than ``+`` at the top level (``c ? a : b + 5`` adds 5 to ``b`` only)."""
    depth = 0
    for ch in text:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if depth < 0 or (depth == 0 and ch in "?:<>=&|!^,"):
            return False
    return depth == 0
