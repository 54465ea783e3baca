"""PTX lexical layer: split text into statements, labels and braces; parse operands."""

from __future__ import annotations

import re
from dataclasses import dataclass

SPECIAL_PREFIXES = (
    "%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid",
    "%gridid", "%clock", "%lanemask", "%globaltimer", "%dynamic_smem_size", "%total_smem_size",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Operand:
    """One instruction operand.

    ``kind`` is one of ``reg`` (``name``; ``neg`` for ``!%p``), ``special`` (``%tid.x``), ``int``
    / ``float`` immediates (``value``; ``ftype`` ``f32``/``f64`` for hex floats), ``addr``
    (``name`` is the base register or symbol, ``offset`` bytes), ``vec`` (``items``), ``pair``
    (``%r|%p``: ``items``), ``sym`` (a label or variable name) and ``sink`` (``_``).
    """

    kind: str
    name: str = ""
    value: int | float = 0
    offset: int = 0
    neg: bool = False
    ftype: str = ""
    items: tuple[Operand, ...] = ()


# ---------------------------------------------------------------------------------- lexing
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LINE_DIRECTIVES = (".version", ".target", ".address_size", ".loc", ".file")
_LABEL = re.compile(r"^\s*([$%\w.]+)\s*$")


def _strip_comments(text: str) -> str:
    return _COMMENTS.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def _lex(text: str) -> list[tuple[str, str, int]]:
    """Split PTX into ('stmt'|'label'|'open'|'close', text, line) items."""
    items: list[tuple[str, str, int]] = []
    buf: list[str] = []
    start, line, depth, parens = 1, 1, 0, 0
    for ch in _strip_comments(text):
        if ch == "\n":
            line += 1
            head = "".join(buf).strip()
            if head.startswith(_LINE_DIRECTIVES):
                items.append(("stmt", head, start))
                buf = []
                continue
        if not "".join(buf).strip():
            start = line
        cur = "".join(buf) if ch in "{}:;" else ""
        if ch == ";" and depth == 0:
            if cur.strip():
                items.append(("stmt", cur.strip(), start))
            buf = []
        elif ch == "{" and depth == 0 and (not cur.strip() or _is_header(cur, parens)):
            if cur.strip():
                items.append(("stmt", cur.strip(), start))
            items.append(("open", "", line))
            buf = []
        elif ch == "}" and depth == 0:
            items.append(("close", "", line))
            buf = []
        elif ch == ":" and depth == 0 and _LABEL.match(cur):
            items.append(("label", cur.strip(), start))
            buf = []
        else:
            depth += (ch == "{") - (ch == "}")
            parens += (ch == "(") - (ch == ")")
            buf.append(ch)
    return items


def _is_header(cur: str, parens: int) -> bool:
    return parens == 0 and bool(re.search(r"\.(entry|func)\b", cur))


# --------------------------------------------------------------------------------- operands
_INT = re.compile(r"^-?(0[xX][0-9a-fA-F]+|\d+)[uU]?$")
_ADDR = re.compile(r"^\[\s*([^\]+]+?)\s*(?:\+\s*(-?\s*(?:0[xX][0-9a-fA-F]+|\d+)))?\s*\]$")


def _split_top(text: str) -> list[str]:
    out, buf, depth = [], [], 0
    for ch in text:
        if ch == "," and depth == 0:
            out.append("".join(buf).strip())
            buf = []
            continue
        depth += (ch in "{[(") - (ch in "}])")
        buf.append(ch)
    if "".join(buf).strip():
        out.append("".join(buf).strip())
    return out


def parse_operand(text: str) -> Operand:
    """Parse one operand (see :class:`Operand` for the kinds)."""
    t = text.strip()
    if t == "_":
        return Operand("sink")
    if t.startswith("{"):
        return Operand("vec", items=tuple(parse_operand(s) for s in _split_top(t[1:-1])))
    if t.startswith("["):
        m = _ADDR.match(t)
        if not m:
            raise ValueError(f"bad address expression {t!r}")
        off = int(m.group(2).replace(" ", ""), 0) if m.group(2) else 0
        return Operand("addr", name=m.group(1), offset=off)
    if "|" in t:
        return Operand("pair", items=tuple(parse_operand(s) for s in t.split("|")))
    if t.startswith("!"):
        return Operand("reg", name=t[1:].strip(), neg=True)
    if t.startswith(SPECIAL_PREFIXES) and not re.match(r"^%\w+\d+$", t):
        return Operand("special", name=t)
    if t.startswith("%"):
        return Operand("reg", name=t)
    if re.match(r"^0[fF][0-9a-fA-F]{8}$", t):
        return Operand("float", value=int(t[2:], 16), ftype="f32")
    if re.match(r"^0[dD][0-9a-fA-F]{16}$", t):
        return Operand("float", value=int(t[2:], 16), ftype="f64")
    if _INT.match(t):
        return Operand("int", value=int(t.rstrip("uU"), 0))
    if re.match(r"^-?\d+\.\d*([eE][-+]?\d+)?$", t):
        return Operand("float", value=float(t))
    return Operand("sym", name=t)
