"""The SIMD instruction sets the GEMM micro-kernel is written for, and which one this CPU has.

Each ISA is a table of spellings (vector type, load, store, fused multiply-add, broadcast) per
element type, so one generator writes every micro-kernel. ``generic`` uses GCC vector types of
16 bytes (SSE, NEON and anything else g++ targets); the intrinsic ISAs are guarded by the
compiler's own macro and fall back to ``generic`` when the build target lacks them.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelwright.tools.cpuinfo import cpu_fields


@dataclass(frozen=True)
class Isa:
    """Spellings of one instruction set's vectors for ``float`` (``f``) and ``double`` (``d``)."""

    name: str
    guard: str  # preprocessor condition under which the intrinsics compile
    bytes: int  # vector width in bytes
    registers: int  # architectural vector registers
    vtype: dict[str, str]
    prefix: dict[str, str]  # intrinsic prefix and suffix, e.g. ("_mm256_", "_ps")

    def width(self, ctype: str) -> int:
        return self.bytes // (4 if ctype == "float" else 8)

    def _op(self, ctype: str, op: str) -> str:
        pre, suf = self.prefix[ctype].split("|")
        return f"{pre}{op}{suf}"

    def load(self, ctype: str, ptr: str) -> str:
        if self.name == "generic":
            return f"kw_vload_{ctype[0]}({ptr})"
        return f"{self._op(ctype, 'loadu')}({ptr})"

    def store(self, ctype: str, ptr: str, v: str) -> str:
        if self.name == "generic":
            return f"kw_vstore_{ctype[0]}({ptr}, {v})"
        return f"{self._op(ctype, 'storeu')}({ptr}, {v})"

    def fma(self, ctype: str, a: str, b: str, c: str) -> str:
        if self.name == "generic":
            return f"({c} + {a} * {b})"
        return f"{self._op(ctype, 'fmadd')}({a}, {b}, {c})"

    def bcast(self, ctype: str, x: str) -> str:
        if self.name == "generic":
            return f"(({self.vtype[ctype]}){{}} + ({x}))"
        return f"{self._op(ctype, 'set1')}({x})"

    def zero(self, ctype: str) -> str:
        if self.name == "generic":
            return f"(({self.vtype[ctype]}){{}})"
        return f"{self._op(ctype, 'setzero')}()"


AVX512 = Isa("avx512", "defined(__AVX512F__)", 64, 32,
             {"float": "__m512", "double": "__m512d"},
             {"float": "_mm512_|_ps", "double": "_mm512_|_pd"})
AVX2 = Isa("avx2", "defined(__AVX2__) && defined(__FMA__)", 32, 16,
           {"float": "__m256", "double": "__m256d"},
           {"float": "_mm256_|_ps", "double": "_mm256_|_pd"})
GENERIC = Isa("generic", "1", 16, 16, {"float": "kw_vf", "double": "kw_vd"},
              {"float": "|", "double": "|"})
ISAS = {i.name: i for i in (AVX512, AVX2, GENERIC)}


def detect_isa(flags: str | None = None) -> Isa:
    """The widest ISA in ``flags`` (``/proc/cpuinfo``'s flags of this CPU when ``None``)."""
    have = set((cpu_fields().get("flags", "") if flags is None else flags).split())
    if "avx512f" in have:
        return AVX512
    if {"avx2", "fma"} <= have:
        return AVX2
    return GENERIC


def isa_named(name: str | None) -> Isa:
    """``ISAS[name]``; ``None`` or ``"auto"`` -> :func:`detect_isa`."""
    if name in (None, "auto"):
        return detect_isa()
    if name not in ISAS:
        raise ValueError(f"unknown ISA {name!r}; choose from {sorted(ISAS)} or 'auto'")
    return ISAS[name]
