"""PTX front end: parse what ``nvcc -arch=sm_90 -ptx`` emits into :class:`Module` objects.

Covers module directives, ``.entry``/``.func`` definitions with parameters, ``.reg``
declarations (``%r<N>`` ranges, predicates, nested scopes), labels, predicated instructions,
vector operands, address expressions and ``.shared``/``.local``/``.global``/``.const``
variable declarations (static and ``extern`` dynamic shared memory).

Example:
    >>> mod = parse_ptx(open("k.ptx").read())
    >>> mod.kernels["vadd"].params[0].type
    'u64'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kernelwright.errors import PtxParseError
from kernelwright.tools.gpusim._ptx_lex import (
    Operand,
    _lex,
    _split_top,
    parse_operand,
)

TYPE_NAMES = frozenset(
    "pred b8 b16 b32 b64 b128 u8 u16 u32 u64 s8 s16 s32 s64 f16 f16x2 bf16 bf16x2 f32 f64".split()
)
TYPE_SIZES = {"pred": 1, "f16x2": 4, "bf16x2": 4, "b128": 16}
for _t in TYPE_NAMES - TYPE_SIZES.keys():
    TYPE_SIZES[_t] = int(re.sub(r"\D", "", _t)) // 8

SPACES = frozenset({"global", "shared", "local", "param", "const", "generic"})

_FIX = ". Fix: give PTX as `nvcc -ptx` or `ptxas` accept it (one .entry per kernel)"



@dataclass(frozen=True, slots=True)
class Instruction:
    """One PTX instruction: ``@pred opcode.mods.types operands``."""

    opcode: str  # the full dotted opcode, e.g. "ld.global.nc.v2.f64"
    base: str  # "ld"
    mods: tuple[str, ...]  # ("global", "nc", "v2")
    types: tuple[str, ...]  # ("f64",)
    operands: tuple[Operand, ...]
    pred: str | None = None
    pred_neg: bool = False
    line: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: str
    offset: int
    size: int
    align: int


@dataclass(frozen=True, slots=True)
class Variable:
    """A ``.shared``/``.local``/``.global``/``.const`` variable."""

    name: str
    space: str
    type: str
    size: int  # bytes; 0 for an extern (dynamic) array
    align: int
    extern: bool = False
    init: bytes | None = None


@dataclass
class Kernel:
    """One parsed ``.entry`` (or ``.func``)."""

    name: str
    params: list[Param]
    regs: dict[str, str]  # register name -> type (ranges expanded)
    instructions: list[Instruction]
    labels: dict[str, int]  # label -> instruction index
    variables: list[Variable]  # shared / local declared in the body
    is_entry: bool = True
    line: int = 0
    directives: dict[str, str] = field(default_factory=dict)

    @property
    def param_bytes(self) -> int:
        return max((p.offset + p.size for p in self.params), default=0)

    def shared_vars(self) -> list[Variable]:
        return [v for v in self.variables if v.space == "shared"]


@dataclass
class Module:
    version: str = ""
    target: str = ""
    address_size: int = 64
    kernels: dict[str, Kernel] = field(default_factory=dict)
    functions: dict[str, Kernel] = field(default_factory=dict)
    variables: list[Variable] = field(default_factory=list)


# ------------------------------------------------------------------------------ statements
def parse_instruction(text: str, line: int = 0) -> Instruction:
    """Parse one instruction statement (without the trailing ``;``)."""
    pred, neg = None, False
    s = text.strip()
    if s.startswith("@"):
        head, s = s.split(None, 1)
        neg = head.startswith("@!")
        pred = head[2:] if neg else head[1:]
    parts = s.split(None, 1)
    opcode = parts[0]
    pieces = opcode.split(".")
    types = tuple(p for p in pieces[1:] if p in TYPE_NAMES)
    mods = tuple(p for p in pieces[1:] if p not in TYPE_NAMES)
    ops = tuple(parse_operand(o) for o in _split_top(parts[1])) if len(parts) > 1 else ()
    return Instruction(opcode, pieces[0], mods, types, ops, pred, neg, line, text.strip())


_VAR = re.compile(
    r"^(?P<ext>\.extern\s+)?(?:\.visible\s+|\.weak\s+)?\.(?P<space>shared|local|global|const)\s+"
    r"(?:\.align\s+(?P<align>\d+)\s+)?\.(?P<type>\w+)\s+(?P<name>[$%\w]+)"
    r"(?P<dims>(?:\[\d*\])*)\s*(?:=\s*(?P<init>.*))?$",
    re.S,
)


def parse_variable(text: str) -> Variable | None:
    """Parse a state-space variable declaration, or return None if ``text`` is not one."""
    m = _VAR.match(text.strip())
    if not m:
        return None
    vtype = m.group("type")
    n = 1
    for d in re.findall(r"\[(\d*)\]", m.group("dims")):
        n *= int(d) if d else 0
    size = TYPE_SIZES.get(vtype, 1) * n
    init = _parse_init(m.group("init"), vtype) if m.group("init") else None
    align = int(m.group("align") or TYPE_SIZES.get(vtype, 1))
    return Variable(m.group("name"), m.group("space"), vtype, size, align, bool(m.group("ext")),
                    init)  # fmt: skip


def _parse_init(text: str, vtype: str) -> bytes:
    import numpy as np

    vals = [v.strip() for v in text.strip().strip("{}").split(",") if v.strip()]
    from kernelwright.tools.gpusim._types import DTYPES

    dt = np.dtype(DTYPES.get(vtype, np.uint8))
    if dt.kind == "f":
        arr = np.array([float(v) for v in vals], dtype=dt)
    else:
        arr = np.array([int(v, 0) & ((1 << (8 * dt.itemsize)) - 1) for v in vals], dtype=np.uint64)
        arr = arr.astype(dt.newbyteorder("=").str.replace("i", "u"))
    return arr.tobytes()


_REG = re.compile(r"^\.reg\s+(?:\.v\d\s+)?\.(\w+)\s+(.+)$", re.S)


def _parse_reg_decl(text: str, regs: dict[str, str], rename: dict[str, str], scope: int) -> None:
    m = _REG.match(text)
    if not m:
        raise ValueError(f"bad .reg declaration {text!r}")
    rtype = m.group(1)
    for item in _split_top(m.group(2)):
        rng = re.match(r"^(%?[$\w]+)<(\d+)>$", item)
        if not rng and not re.match(r"^%?[$\w]+$", item):
            raise ValueError(f"bad register name {item!r}")
        names = [f"{rng.group(1)}{i}" for i in range(int(rng.group(2)))] if rng else [item]
        for nm in names:
            key = nm if scope == 0 else f"{nm}#{scope}"
            if scope:
                rename[nm] = key
            regs[key] = rtype


_PARAM = re.compile(
    r"^\.param\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+(?:\.ptr\s+(?:\.\w+\s+)*)?([$\w]+)(?:\[(\d+)\])?$"
)


def _parse_params(text: str) -> list[Param]:
    params, off = [], 0
    for item in _split_top(text):
        m = _PARAM.match(" ".join(item.split()))
        if not m:
            raise ValueError(f"bad parameter {item!r}")
        ptype = m.group(2)
        size = TYPE_SIZES.get(ptype, 1) * int(m.group(4) or 1)
        align = int(m.group(1) or TYPE_SIZES.get(ptype, 1))
        off = -(-off // align) * align
        params.append(Param(m.group(3), ptype, off, size, align))
        off += size
    return params


_HEADER = re.compile(r"\.(entry|func)\s+(?:\([^)]*\)\s*)?([$\w]+)\s*(?:\((.*?)\))?(.*)$", re.S)


def _parse_header(text: str) -> tuple[str, bool, list[Param], dict[str, str]]:
    m = _HEADER.search(text)
    if not m:
        raise ValueError(f"bad function header {text[:60]!r}")
    directives = dict(re.findall(r"\.(maxntid|reqntid|minnctapersm|maxnreg)\s+([\d,\s]+)",
                                 m.group(4)))  # fmt: skip
    return m.group(2), m.group(1) == "entry", _parse_params(m.group(3) or ""), directives


# ---------------------------------------------------------------------------------- module
_SKIP = (
    ".loc",
    ".file",
    ".pragma",
    ".section",
    ".param",
    ".maxntid",
    ".reqntid",
    ".callprototype",
)


def parse_ptx(text: str) -> Module:
    """Parse a whole PTX module.

    Raises:
        PtxParseError: naming the line and the statement that could not be read.
    """
    items = _lex(text)
    mod, i = Module(), 0
    while i < len(items):
        kind, stmt, line = items[i]
        i += 1
        if kind != "stmt":
            if kind == "open":
                raise PtxParseError(f"PTX line {line}: unexpected '{{' at module level{_FIX}")
            continue
        try:
            if re.search(r"\.(entry|func)\b", stmt):
                if i < len(items) and items[i][0] == "open":
                    fn, i = _parse_function(stmt, items, i + 1, line)
                    (mod.kernels if fn.is_entry else mod.functions)[fn.name] = fn
                continue
            _module_directive(mod, stmt)
        except PtxParseError:
            raise
        except (ValueError, IndexError, KeyError) as exc:
            raise PtxParseError(
                f"PTX line {line}: cannot parse {stmt[:80]!r}: {exc}{_FIX}"
            ) from exc
    return mod


def _module_directive(mod: Module, stmt: str) -> None:
    word = stmt.split(None, 1)
    if word[0] == ".version":
        mod.version = word[1]
    elif word[0] == ".target":
        mod.target = word[1]
    elif word[0] == ".address_size":
        mod.address_size = int(word[1])
    else:
        var = parse_variable(stmt)
        if var is not None:
            mod.variables.append(var)


def _parse_function(header: str, items: list, i: int, hline: int) -> tuple[Kernel, int]:
    name, is_entry, params, directives = _parse_header(header)
    fn = Kernel(name, params, {}, [], {}, [], is_entry, hline, directives)
    scopes: list[dict[str, str]] = [{}]
    counter = 0
    while i < len(items):
        kind, stmt, line = items[i]
        i += 1
        if kind == "close":
            scopes.pop()
            if not scopes:
                return fn, i
        elif kind == "open":
            counter += 1
            scopes.append(dict(scopes[-1]))
        elif kind == "label":
            fn.labels[stmt] = len(fn.instructions)
        else:
            _body_statement(fn, stmt, line, scopes, counter)
    raise PtxParseError(f"PTX line {hline}: function {name} has no closing '}}'{_FIX}")


def _body_statement(fn: Kernel, stmt: str, line: int, scopes: list, scope_id: int) -> None:
    try:
        if stmt.startswith(".reg"):
            depth = len(scopes) - 1
            _parse_reg_decl(stmt, fn.regs, scopes[-1], scope_id if depth else 0)
        elif stmt.startswith((".shared", ".local", ".global", ".const")):
            var = parse_variable(stmt)
            if var is None:
                raise ValueError("bad variable declaration")
            fn.variables.append(var)
        elif stmt.startswith(_SKIP) or stmt.startswith("."):
            return
        else:
            ins = parse_instruction(stmt, line)
            if len(scopes) > 1 and scopes[-1]:
                ins = _renamed(ins, scopes[-1])
            fn.instructions.append(ins)
    except (ValueError, IndexError) as exc:
        raise PtxParseError(
            f"PTX line {line} (in {fn.name}): cannot parse {stmt[:80]!r}: {exc}{_FIX}"
        ) from exc


def _renamed(ins: Instruction, names: dict[str, str]) -> Instruction:
    def ren(op: Operand) -> Operand:
        if op.kind in ("reg", "addr") and op.name in names:
            return Operand(
                op.kind, names[op.name], op.value, op.offset, op.neg, op.ftype, op.items
            )
        if op.items:
            return Operand(op.kind, op.name, op.value, op.offset, op.neg, op.ftype,
                           tuple(ren(o) for o in op.items))  # fmt: skip
        return op

    pred = names.get(ins.pred, ins.pred) if ins.pred else None
    return Instruction(ins.opcode, ins.base, ins.mods, ins.types,
                       tuple(ren(o) for o in ins.operands), pred, ins.pred_neg, ins.line,
                       ins.text)  # fmt: skip
