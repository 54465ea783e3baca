"""Opcode classifier: PTX names (``ld.global.f32``) and SASS names (``LDG.E.128.SYS``) -> OpClass.

The class decides which execution unit an instruction occupies, its latency, and which memory
path it takes in the timing model. Unknown opcodes are integer ALU work.
"""

from __future__ import annotations

from enum import IntEnum
from functools import lru_cache


class OpClass(IntEnum):
    """Timing classes of warp instructions."""

    INT = 0
    FP32 = 1
    FP64 = 2
    SFU = 3
    TENSOR = 4
    BRANCH = 5
    EXIT = 6
    BARRIER = 7
    LD_GLOBAL = 8
    ST_GLOBAL = 9
    LD_LOCAL = 10
    ST_LOCAL = 11
    LD_SHARED = 12
    ST_SHARED = 13
    LD_CONST = 14
    ATOM_GLOBAL = 15
    ATOM_SHARED = 16
    ASYNC_COPY = 17  # cp.async / LDGSTS: global -> shared without a register result
    ASYNC_WAIT = 18  # cp.async.wait_* / DEPBAR: wait for this warp's async copies
    SHUFFLE = 19
    FENCE = 20
    NOP = 21


NUM_CLASSES = len(OpClass)
MEMORY_CLASSES = frozenset({
    OpClass.LD_GLOBAL, OpClass.ST_GLOBAL, OpClass.LD_LOCAL, OpClass.ST_LOCAL, OpClass.LD_SHARED,
    OpClass.ST_SHARED, OpClass.LD_CONST, OpClass.ATOM_GLOBAL, OpClass.ATOM_SHARED,
    OpClass.ASYNC_COPY, OpClass.SHUFFLE,
})

_SASS: dict[str, OpClass] = {
    **dict.fromkeys(("LDG", "LD", "TEX", "TLD", "TLD4", "TMML", "TXD", "TXQ", "SULD", "LDGMC"),
                    OpClass.LD_GLOBAL),
    **dict.fromkeys(("STG", "ST", "SUST"), OpClass.ST_GLOBAL),
    "LDL": OpClass.LD_LOCAL, "STL": OpClass.ST_LOCAL,
    **dict.fromkeys(("LDS", "LDSM", "LDTRAM"), OpClass.LD_SHARED),
    **dict.fromkeys(("STS", "STSM"), OpClass.ST_SHARED),
    **dict.fromkeys(("LDC", "ULDC", "LDCU"), OpClass.LD_CONST),
    **dict.fromkeys(("ATOM", "ATOMG", "RED", "REDG", "SUATOM", "SURED"), OpClass.ATOM_GLOBAL),
    "ATOMS": OpClass.ATOM_SHARED,
    **dict.fromkeys(("LDGSTS", "UBLKCP", "UTMALDG"), OpClass.ASYNC_COPY),
    **dict.fromkeys(("LDGDEPBAR", "DEPBAR", "ARRIVES", "SYNCS"), OpClass.ASYNC_WAIT),
    **dict.fromkeys(("BAR", "BARRIER"), OpClass.BARRIER),
    **dict.fromkeys(("EXIT", "KILL"), OpClass.EXIT),
    **dict.fromkeys(("BRA", "BRX", "JMP", "JMX", "CALL", "RET", "BSSY", "BSYNC", "BREAK",
                     "WARPSYNC", "BMOV", "YIELD", "SSY", "SYNC", "PBK", "BRK", "CONT", "PCNT"),
                    OpClass.BRANCH),
    **dict.fromkeys(("MEMBAR", "FENCE", "ERRBAR", "CCTL", "CCTLL", "CCTLT"), OpClass.FENCE),
    "SHFL": OpClass.SHUFFLE, "NOP": OpClass.NOP,
    **dict.fromkeys(("MUFU", "I2F", "F2I", "F2F", "FRND", "I2I", "POPC", "FLO", "BREV", "I2FP",
                     "F2IP", "FCHK"), OpClass.SFU),
    **dict.fromkeys(("HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA"),
                    OpClass.TENSOR),
}
_PTX_SPACE_LD = {"global": OpClass.LD_GLOBAL, "local": OpClass.LD_LOCAL,
                 "shared": OpClass.LD_SHARED, "const": OpClass.LD_CONST,
                 "param": OpClass.LD_CONST}
_PTX_SPACE_ST = {"global": OpClass.ST_GLOBAL, "local": OpClass.ST_LOCAL,
                 "shared": OpClass.ST_SHARED, "param": OpClass.ST_LOCAL}
_PTX_SFU = frozenset(("rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", "div", "rem",
                      "popc", "clz", "brev", "bfind", "cvt"))
_PTX_BRANCH = frozenset(("bra", "brx", "call", "ret", "bar.warp", "vote", "activemask"))
_FLOAT_TYPES = frozenset(("f32", "f16", "f16x2", "bf16", "bf16x2", "tf32", "ftz"))


@lru_cache(maxsize=4096)
def classify(opcode: str) -> OpClass:
    """Map a PTX or SASS opcode to its timing class (memoised).

    Example:
        >>> classify("LDG.E.128.SYS"), classify("st.shared.u32"), classify("FFMA")
        (<OpClass.LD_GLOBAL: 8>, <OpClass.ST_SHARED: 13>, <OpClass.FP32: 1>)
    """
    head = opcode.split(".", 1)[0]
    if head.isupper() or head[:1].isupper():
        return _classify_sass(head.upper(), opcode.upper())
    return _classify_ptx(head, opcode.split("."))


def _classify_sass(head: str, full: str) -> OpClass:
    if head in _SASS:
        return _SASS[head]
    if head.startswith("D") and head in ("DADD", "DFMA", "DMUL", "DSETP", "DMNMX", "DSET"):
        return OpClass.FP64
    if head.startswith(("F", "H")):
        return OpClass.FP32
    return OpClass.INT


def _classify_ptx(head: str, parts: list[str]) -> OpClass:
    quals = {q.split("::", 1)[0] for q in parts[1:]}  # ld.shared::cta -> shared
    memory = _ptx_memory(head, quals)
    if memory is not None:
        return memory
    if head in ("bar", "barrier") and "warp" not in quals:
        return OpClass.BARRIER
    if head in ("exit", "trap"):
        return OpClass.EXIT
    if head in _PTX_BRANCH:
        return OpClass.BRANCH
    if head in ("membar", "fence"):
        return OpClass.FENCE
    if head == "shfl":
        return OpClass.SHUFFLE
    if head in ("mma", "wmma", "wgmma"):
        return OpClass.TENSOR
    if "f64" in quals:
        return OpClass.FP64
    if head == "cvt":  # int<->float conversions run at quarter rate; int widening is ALU
        return OpClass.SFU if quals & _FLOAT_TYPES else OpClass.INT
    if head in _PTX_SFU:  # includes integer div/rem: a long multi-instruction sequence
        return OpClass.SFU
    return OpClass.FP32 if quals & _FLOAT_TYPES else OpClass.INT


def _ptx_memory(head: str, quals: set[str]) -> OpClass | None:
    if head in ("ld", "ldu", "tex", "tld4", "suld", "prefetch"):
        for space, cls in _PTX_SPACE_LD.items():
            if space in quals:
                return cls
        return OpClass.LD_GLOBAL  # generic addressing: almost always global in practice
    if head in ("st", "sust"):
        for space, cls in _PTX_SPACE_ST.items():
            if space in quals:
                return cls
        return OpClass.ST_GLOBAL
    if head in ("atom", "red"):
        return OpClass.ATOM_SHARED if "shared" in quals else OpClass.ATOM_GLOBAL
    if head == "cp" and "async" in quals:
        if quals & {"wait_all", "wait_group", "commit_group", "mbarrier"}:
            return OpClass.ASYNC_WAIT if "commit_group" not in quals else OpClass.NOP
        return OpClass.ASYNC_COPY
    return None
