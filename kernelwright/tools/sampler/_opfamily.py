"""Opcode families for graph and profile features: PTX (``ld.global.f32``) or SASS (``LDG.E``).

A coarse, feature-oriented grouping: what an instruction does (arithmetic kind, control, which
memory space and direction). The timing model has its own, finer timing classes; this one only
has to separate kernels, for both trace dialects.
"""

from __future__ import annotations

from functools import lru_cache

FAMILIES = ("int", "fp32", "fp64", "sfu", "tensor", "branch", "exit", "barrier", "ld_global",
            "st_global", "ld_local", "st_local", "ld_shared", "st_shared", "ld_const", "atomic",
            "shuffle", "other")  # fmt: skip
NUM_FAMILIES = len(FAMILIES)
FAMILY = {name: i for i, name in enumerate(FAMILIES)}

_SASS = {
    "LDG": "ld_global", "STG": "st_global", "LDL": "ld_local", "STL": "st_local",
    "LDS": "ld_shared", "STS": "st_shared", "LDC": "ld_const", "ULDC": "ld_const",
    "LD": "ld_global", "ST": "st_global", "LDGSTS": "ld_global",
    "ATOM": "atomic", "ATOMG": "atomic", "RED": "atomic", "ATOMS": "atomic",
    "BRA": "branch", "BRX": "branch", "JMP": "branch", "CALL": "branch", "RET": "branch",
    "SSY": "branch", "SYNC": "branch", "BSSY": "branch", "BSYNC": "branch", "EXIT": "exit",
    "BAR": "barrier", "MUFU": "sfu", "SHFL": "shuffle", "HMMA": "tensor", "IMMA": "tensor",
    "DMMA": "tensor", "NOP": "other", "DEPBAR": "other", "MEMBAR": "other",
}  # fmt: skip
_PTX_LD = {"global": "ld_global", "local": "ld_local", "shared": "ld_shared", "const": "ld_const",
           "param": "int"}  # fmt: skip
_PTX_ST = {"global": "st_global", "local": "st_local", "shared": "st_shared"}
_PTX_BRANCH = {"bra", "call", "ret", "brx"}
_PTX_SFU = {"sqrt", "rsqrt", "rcp", "sin", "cos", "ex2", "lg2", "tanh", "div", "rem"}
_FLOATS = {"f16", "f16x2", "bf16", "bf16x2", "f32", "tf32"}


@lru_cache(maxsize=4096)
def family(opcode: str) -> int:
    """Index into :data:`FAMILIES` of ``opcode`` (either dialect; unknown -> ``"int"``)."""
    head = opcode.split(".", 1)[0]
    if head[:1].isupper():
        name = _SASS.get(head.upper())
        if name is None:
            name = "fp64" if head.startswith("D") else "fp32" if head[0] in "FH" else "int"
        return FAMILY[name]
    return FAMILY[_ptx_family(head, set(opcode.split(".")[1:]))]


def _ptx_family(head: str, quals: set[str]) -> str:
    quals = {q.split("::", 1)[0] for q in quals}
    if head in ("ld", "ldu", "tex"):
        return next((v for k, v in _PTX_LD.items() if k in quals), "ld_global")
    if head == "st":
        return next((v for k, v in _PTX_ST.items() if k in quals), "st_global")
    if head in ("atom", "red"):
        return "atomic"
    if head in ("bar", "barrier"):
        return "barrier"
    if head in ("exit", "trap"):
        return "exit"
    if head in _PTX_BRANCH:
        return "branch"
    if head == "shfl":
        return "shuffle"
    if head in ("mma", "wmma", "wgmma"):
        return "tensor"
    if "f64" in quals:
        return "fp64"
    if head in _PTX_SFU or (head == "cvt" and quals & _FLOATS):
        return "sfu"
    return "fp32" if quals & _FLOATS else "int"


def is_memory(fam: int) -> bool:
    """True for loads, stores and atomics."""
    return FAMILIES[fam].startswith(("ld_", "st_")) or FAMILIES[fam] == "atomic"


# Nominal latency in cycles per family (order of magnitude, GPU-independent): used only for
# cheap critical-path estimates in profiles and graph features, never for scoring.
NOMINAL_LATENCY = {"ld_global": 300.0, "ld_local": 300.0, "atomic": 300.0, "ld_shared": 24.0,
                   "ld_const": 8.0, "sfu": 20.0, "fp64": 48.0, "barrier": 20.0, "branch": 6.0,
                   "tensor": 32.0}  # fmt: skip
LATENCY = tuple(NOMINAL_LATENCY.get(f, 4.0) for f in FAMILIES)
