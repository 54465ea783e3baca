"""Accel-Sim trace text: kernel headers, instruction lines, memory-address compression.

The syntax follows Accel-Sim's NVBit tracer (``tracer_tool.cu``) and its parser
(``trace_parser.cc``), tracer versions 3-5::

    [line_num] PC mask dest_num [R<d>...] OPCODE src_num [R<s>...] mem_width [mode addr...] imm

Address modes (only when ``mem_width > 0``):

* 0 - one hex address per active lane;
* 1 - ``base stride``: the active lanes form one contiguous run with a constant stride;
* 2 - ``base`` then one decimal delta per further active lane, each relative to the previous
  active lane's address.

The tracer writes mode 1 when it is valid and mode 2 otherwise; mode 0 only when compression
is switched off. The writer here picks the shortest valid text: mode 1 when valid, else mode 2,
unless scattered addresses make the decimal deltas longer than the hex list (then mode 0).
"""

from __future__ import annotations

import lzma
import sys
from pathlib import Path
from typing import IO

from kernelwright.errors import TraceFormatError
from kernelwright.tools.gpusim.records import KernelInfo, TraceInstruction

TRACES_FORMAT = (
    "#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] "
    "mem_width [adrrescompress?] [mem_addresses] immediate"
)
TRACER_VERSION = 5
# Header keys that KernelInfo holds in named fields (everything else goes to ``extra``).
_NAMED_KEYS = (
    "kernel name", "kernel id", "grid dim", "block dim", "shmem", "nregs", "binary version",
    "cuda stream id", "shmem base_addr", "local mem base_addr",
)
_MAX_NREGS = 255
_intern = sys.intern



def open_text(path: Path) -> IO[str]:
    """Open a trace text file, decompressing ``.xz`` on the fly."""
    if path.suffix == ".xz":
        return lzma.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")  # noqa: SIM115


def parse_line(tok: list[str], skip: int, path: Path, lineno: int) -> TraceInstruction:
    """:func:`parse_instruction` from field ``skip``; errors name the file and line."""
    try:
        return parse_instruction(tok, skip)
    except ValueError as exc:
        raise TraceFormatError(
            f"{path}:{lineno}: cannot parse instruction {' '.join(tok)[:120]!r}: {exc}. Fix: "
            "check that the active-lane mask matches the number of addresses and that the "
            "header's tracer version / enable lineinfo fit the lines."
        ) from exc


# ----------------------------------------------------------------------------- addresses
def compress_addresses(mask: int, addresses: tuple[int, ...], compress: bool = True) -> str:
    """Encode one instruction's per-lane addresses as Accel-Sim does.

    Args:
        mask: active lanes; ``addresses`` holds one address per set bit, in lane order.
        addresses: the addresses.
        compress: False writes mode 0 (the tracer's uncompressed form).

    Returns:
        The ``mode addr...`` text (without the leading mem_width).
    """
    if not addresses:
        return "0"
    if not compress:
        return "0 " + " ".join(f"0x{a:x}" for a in addresses)
    if len(addresses) >= 2 and _is_contiguous(mask):
        stride = addresses[1] - addresses[0]
        if all(b - a == stride for a, b in zip(addresses, addresses[1:], strict=False)):
            return f"1 0x{addresses[0]:x} {stride}"
    deltas = " ".join(str(b - a) for a, b in zip(addresses, addresses[1:], strict=False))
    mode2 = f"2 0x{addresses[0]:x} {deltas}".rstrip()
    if len(deltas) < 3 * (len(addresses) - 1):  # under 2 digits a delta: mode 0 cannot win
        return mode2
    mode0 = "0 " + " ".join(f"0x{a:x}" for a in addresses)
    return mode0 if len(mode0) < len(mode2) else mode2


def _is_contiguous(mask: int) -> bool:
    """True if the set bits of ``mask`` form one run (e.g. 0x0ff0, not 0x0f0f)."""
    low = mask & -mask
    return mask != 0 and ((mask + low) & mask) == 0


def _decode_addresses(mode: int, mask: int, tok: list[str], j: int) -> tuple[tuple[int, ...], int]:
    """Decode the addresses after ``mode``; returns them and the index after the last token.

    Modes 3 and 4 are the tensor-memory-accelerator forms (``UTMALDG`` ...) of newer tracers:
    3 = ``count addr...``; 4 = ``base count delta...`` (count - 1 deltas). Their addresses are
    per transfer, not per lane.
    """
    n = mask.bit_count()
    if mode == 3:
        count = int(tok[j])
        _need(tok, j + 1 + count, f"mode 3 lists {count} addresses")
        return tuple(int(x, 16) for x in tok[j + 1:j + 1 + count]), j + 1 + count
    if mode == 4:
        base, count = int(tok[j], 16), int(tok[j + 1])
        _need(tok, j + 1 + count, f"mode 4 has base, count {count} and {count - 1} deltas")
        out = [base] if count else []
        for x in tok[j + 2:j + 1 + count]:
            out.append(out[-1] + int(x))
        return tuple(out), j + 1 + max(count, 1)
    need = {0: n, 1: 2, 2: max(n, 1)}.get(mode)
    if need is None:
        raise ValueError(f"address mode {mode} is unknown; expected 0 (list), 1 (base stride), "
                         "2 (base deltas), 3 or 4 (TMA)")
    _need(tok, j + need, f"mode {mode} needs {need} address fields for {n} active lanes "
          f"(mask {mask:08x})")
    if mode == 0:
        return tuple(int(x, 16) for x in tok[j:j + n]), j + n
    if mode == 1:
        base, stride = int(tok[j], 16), int(tok[j + 1])
        run = (mask // (mask & -mask)) if mask else 0
        run_len = (run ^ (run + 1)).bit_length() - 1 if run else 0  # first run of ones
        out = [base + k * stride for k in range(run_len)] + [0] * (n - run_len)
        return tuple(out), j + 2
    addr = int(tok[j], 16)  # mode 2
    out = [addr]
    for x in tok[j + 1:j + n]:
        addr += int(x)
        out.append(addr)
    return (tuple(out) if n else ()), j + max(n, 1)


def _need(tok: list[str], end: int, what: str) -> None:
    if len(tok) < end:
        raise ValueError(f"{what}, but the line ends after {len(tok)} fields")


# ----------------------------------------------------------------------------- lines
def format_instruction(inst: TraceInstruction, compress: bool = True) -> str:
    """One ``.traceg`` instruction line (no tb/warp prefix, no line number)."""
    parts = [f"{inst.pc:04x} {inst.mask:08x} {len(inst.dests)}"]
    parts.extend(inst.dests)
    parts.append(inst.opcode)
    parts.append(str(len(inst.srcs)))
    parts.extend(inst.srcs)
    parts.append(str(inst.mem_width))
    if inst.mem_width:
        parts.append(compress_addresses(inst.mask, inst.addresses, compress))
    parts.append(str(inst.immediate))
    return " ".join(parts)


def parse_instruction(tok: list[str], start: int = 0) -> TraceInstruction:
    """Parse the tokens of one instruction line from index ``start`` (the PC field).

    Raises:
        ValueError: on a malformed line, saying which field was expected (callers add the file
            and line number).
    """
    try:
        pc, mask, nd = int(tok[start], 16), int(tok[start + 1], 16), int(tok[start + 2])
        j = start + 3 + nd
        dests = tuple(_intern(r) for r in tok[start + 3:j])
        opcode, ns = _intern(tok[j]), int(tok[j + 1])
        srcs = tuple(_intern(r) for r in tok[j + 2:j + 2 + ns])
        j += 2 + ns
        width = int(tok[j])
        j += 1
        addresses: tuple[int, ...] = ()
        if width:
            addresses, j = _decode_addresses(int(tok[j]), mask, tok, j + 1)
    except (ValueError, IndexError) as exc:
        raise ValueError(_diagnose(tok, start) or str(exc)) from exc
    imm = _parse_int(tok[j]) if j < len(tok) else 0
    return TraceInstruction(pc, mask, opcode, dests, srcs, width, addresses, imm)


_FIELDS = "PC mask dest_num [dests] opcode src_num [srcs] mem_width [mode addresses] immediate"


def _diagnose(tok: list[str], start: int) -> str | None:
    """Walk the fields of a line that failed to parse; say which one is not what it should be."""
    def bad(k: int, expected: str) -> str:
        got = repr(tok[k]) if k < len(tok) else "the end of the line"
        return f"instruction field {k + 1}: expected {expected}, got {got} (format: {_FIELDS})"

    if not _is_hex(tok, start):
        return bad(start, "a hex PC such as 00a0")
    if not _is_hex(tok, start + 1):
        return bad(start + 1, "a hex active mask such as ffffffff")
    if not _is_int(tok, start + 2):
        return bad(start + 2, "dest_num, the number of destination registers (0 or 1)")
    j = start + 3 + int(tok[start + 2])
    if j >= len(tok) or not tok[j][:1].isalpha():
        return bad(j, f"{int(tok[start + 2])} destination register(s) then an opcode")
    if not _is_int(tok, j + 1):
        return bad(j + 1, f"src_num (the number of source registers) after opcode {tok[j]}")
    j += 2 + int(tok[j + 1])
    if not _is_int(tok, j):
        return bad(j, "mem_width (bytes per lane, 0 for non-memory) after the source registers")
    if int(tok[j]) and not _is_int(tok, j + 1):
        return bad(j + 1, "an address mode 0-4 after a non-zero mem_width")
    return None


def _is_hex(tok: list[str], k: int) -> bool:
    if k >= len(tok):
        return False
    try:
        int(tok[k], 16)
    except ValueError:
        return False
    return True


def _is_int(tok: list[str], k: int) -> bool:
    return k < len(tok) and tok[k].lstrip("-").isdigit()


def _parse_int(text: str) -> int:
    try:
        return int(text, 0) if text.startswith("0x") else int(text)
    except ValueError:
        return 0


# ----------------------------------------------------------------------------- header
def format_header(info: KernelInfo, kernel_id: int, source: str, lineinfo: bool = False) -> str:
    """The ``-key = value`` header of a kernel file, ending with the ``#traces format`` line."""
    extra = {k: v for k, v in info.extra.items() if k not in _NAMED_KEYS}
    fixed = {
        "nvbit version": extra.pop("nvbit version", "none"),
        "accelsim tracer version": str(TRACER_VERSION),
        "enable lineinfo": "1" if lineinfo else "0",
        "trace source": extra.pop("trace source", source),
    }
    extra.pop("accelsim tracer version", None)
    extra.pop("enable lineinfo", None)
    lines = [
        f"-kernel name = {info.name}",
        f"-kernel id = {kernel_id}",
        "-grid dim = ({},{},{})".format(*info.grid),
        "-block dim = ({},{},{})".format(*info.block),
        f"-shmem = {info.shmem}",
        f"-nregs = {info.nregs}",
        f"-binary version = {info.binary_version}",
        f"-cuda stream id = {info.stream_id}",
        f"-shmem base_addr = 0x{info.shmem_base:016x}",
        f"-local mem base_addr = 0x{info.local_base:016x}",
    ]
    lines += [f"-{k} = {v}" for k, v in {**fixed, **extra}.items()]
    return "\n".join(lines) + "\n" + TRACES_FORMAT + "\n"


def parse_header_line(line: str) -> tuple[str, str] | None:
    """``-key = value`` -> (key, value); None for any other line."""
    if not line.startswith("-") or "=" not in line:
        return None
    key, _, value = line[1:].partition("=")
    return key.strip().lower(), value.strip()


def header_to_info(fields: dict[str, str]) -> KernelInfo:
    """Build a KernelInfo from parsed header fields, tolerating garbage numbers."""
    extra = {k: v for k, v in fields.items() if k not in _NAMED_KEYS}
    nregs = _safe_int(fields.get("nregs"), 0)
    if not 0 <= nregs <= _MAX_NREGS:
        extra["nregs (untrusted)"] = fields["nregs"]
        nregs = 0
    binary = _safe_int(fields.get("binary version"), 0)
    if not 0 <= binary < 1000:
        extra["binary version (untrusted)"] = fields["binary version"]
        binary = 0
    return KernelInfo(
        kernel_id=_safe_int(fields.get("kernel id"), 0),
        name=fields.get("kernel name", ""),
        grid=_dim3(fields.get("grid dim")),
        block=_dim3(fields.get("block dim")),
        shmem=max(0, _safe_int(fields.get("shmem"), 0)),
        nregs=nregs,
        binary_version=binary,
        stream_id=_safe_int(fields.get("cuda stream id"), 0),
        shmem_base=_safe_int(fields.get("shmem base_addr"), 0),
        local_base=_safe_int(fields.get("local mem base_addr"), 0),
        extra=extra,
    )


def _safe_int(text: str | None, default: int) -> int:
    if text is None:
        return default
    try:
        return int(text, 0)
    except ValueError:
        try:
            return int(text.lstrip("0") or "0")
        except ValueError:
            return default


def _dim3(text: str | None) -> tuple[int, int, int]:
    if not text:
        return (1, 1, 1)
    vals = [_safe_int(v, 1) for v in text.strip("() ").split(",")]
    vals = (vals + [1, 1, 1])[:3]
    return (max(vals[0], 1), max(vals[1], 1), max(vals[2], 1))
