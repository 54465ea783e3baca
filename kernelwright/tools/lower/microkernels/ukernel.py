"""The register-tiled micro-kernel: ``C[MR x NR] (+)= A_panel[kc x MR]^T B_panel[kc x NR]``.

Packed panels make every load of the k loop contiguous: per step one vector load per
``NR / width`` columns of B, one broadcast per row of A, ``MR * NR / width`` fused
multiply-adds into accumulators that stay in registers. The text is written once per
(ISA, element type, MR, NR) and guarded, so several kernels of one program share it; an
intrinsic ISA the build target lacks falls back to the generic vector-type kernel.
"""

from __future__ import annotations

from kernelwright.tools.lower.microkernels.isa import GENERIC, Isa

# shared by every packed GEMM of a source: includes, generic vectors, grow-only scratch
COMMON = r"""
#ifndef KW_PACKED_COMMON
#define KW_PACKED_COMMON
#include <cstdlib>
#include <omp.h>
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif
typedef float kw_vf __attribute__((vector_size(16)));
typedef double kw_vd __attribute__((vector_size(16)));
static inline kw_vf kw_vload_f(const float* p) { kw_vf v; __builtin_memcpy(&v, p, 16); return v; }
static inline kw_vd kw_vload_d(const double* p) { kw_vd v; __builtin_memcpy(&v, p, 16); return v; }
static inline void kw_vstore_f(float* p, kw_vf v) { __builtin_memcpy(p, &v, 16); }
static inline void kw_vstore_d(double* p, kw_vd v) { __builtin_memcpy(p, &v, 16); }
/* n contiguous elements (a packed run): whole vectors, then one masked vector */
static inline void kw_copy_f(float* __restrict__ d, const float* __restrict__ s, int n) {
#if defined(__AVX512F__)
    for (; n >= 16; n -= 16, d += 16, s += 16) _mm512_storeu_ps(d, _mm512_loadu_ps(s));
    if (n > 0) {
        const __mmask16 m = (__mmask16)((1u << n) - 1u);
        _mm512_mask_storeu_ps(d, m, _mm512_maskz_loadu_ps(m, s));
    }
#elif defined(__AVX2__)
    for (; n >= 8; n -= 8, d += 8, s += 8) _mm256_storeu_ps(d, _mm256_loadu_ps(s));
    if (n > 0) {
        const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(n),
                                             _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        _mm256_maskstore_ps(d, m, _mm256_maskload_ps(s, m));
    }
#else
    for (int i = 0; i < n; ++i) d[i] = s[i];
#endif
}
static inline void kw_copy_d(double* __restrict__ d, const double* __restrict__ s, int n) {
#if defined(__AVX512F__)
    for (; n >= 8; n -= 8, d += 8, s += 8) _mm512_storeu_pd(d, _mm512_loadu_pd(s));
    if (n > 0) {
        const __mmask8 m = (__mmask8)((1u << n) - 1u);
        _mm512_mask_storeu_pd(d, m, _mm512_maskz_loadu_pd(m, s));
    }
#elif defined(__AVX2__)
    for (; n >= 4; n -= 4, d += 4, s += 4) _mm256_storeu_pd(d, _mm256_loadu_pd(s));
    if (n > 0) {
        const __m256i m = _mm256_cmpgt_epi64(_mm256_set1_epi64x(n),
                                             _mm256_setr_epi64x(0, 1, 2, 3));
        _mm256_maskstore_pd(d, m, _mm256_maskload_pd(s, m));
    }
#else
    for (int i = 0; i < n; ++i) d[i] = s[i];
#endif
}
/* one grow-only, 64-byte aligned buffer per slot and calling thread (packed panels) */
static inline void* kw_scratch(int slot, size_t bytes) {
    static thread_local void* buf[4];
    static thread_local size_t cap[4];
    if (cap[slot] < bytes) {
        std::free(buf[slot]);
        buf[slot] = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
        if (!buf[slot]) __builtin_trap();
        cap[slot] = bytes;
    }
    return buf[slot];
}
#endif
"""


def ukernel_name(isa: Isa, ctype: str, mr: int, nr: int) -> str:
    return f"kw_uk_{isa.name}_{ctype[0]}{mr}x{nr}"


def _body(isa: Isa, ctype: str, mr: int, nr: int) -> list[str]:
    w = isa.width(ctype)
    nv = nr // w
    vt = isa.vtype[ctype]
    out = []
    for r in range(mr):
        for v in range(nv):
            init = isa.load(ctype, f"c + {r} * ldc + {v * w}")
            out.append(f"    {vt} c{r}_{v} = acc ? {init} : {isa.zero(ctype)};")
    out.append("#pragma GCC unroll 4")
    out.append("    for (int p = 0; p < kc; ++p) {")
    for v in range(nv):
        out.append(f"        const {vt} b{v} = {isa.load(ctype, f'b + {v * w}')};")
    for r in range(mr):
        out.append(f"        const {vt} a{r} = {isa.bcast(ctype, f'a[{r}]')};")
        for v in range(nv):
            out.append(f"        c{r}_{v} = {isa.fma(ctype, f'a{r}', f'b{v}', f'c{r}_{v}')};")
    out.append(f"        a += {mr};")
    out.append(f"        b += {nr};")
    out.append("    }")
    for r in range(mr):
        for v in range(nv):
            out.append("    " + isa.store(ctype, f"c + {r} * ldc + {v * w}", f"c{r}_{v}") + ";")
    return out


def _function(isa: Isa, ctype: str, mr: int, nr: int, name: str) -> list[str]:
    head = (f"static inline void {name}(int kc, const {ctype}* __restrict__ a, "
            f"const {ctype}* __restrict__ b, {ctype}* __restrict__ c, int ldc, int acc) {{")
    return [head, *_body(isa, ctype, mr, nr), "}"]


def ukernel_source(isa: Isa, ctype: str, mr: int, nr: int) -> str:
    """C++ of ``static inline void NAME(kc, a, b, c, ldc, acc)``: the ``mr x nr`` tile at
    ``c`` (row stride ``ldc``) is overwritten (``acc == 0``) or accumulated into."""
    if nr % isa.width(ctype) or nr % GENERIC.width(ctype):
        raise ValueError(f"micro-kernel NR={nr} must be a multiple of the {isa.name} vector "
                         f"width ({isa.width(ctype)} x {ctype}); choose NR from "
                         f"{[isa.width(ctype) * i for i in (1, 2, 3, 4)]}")
    name = ukernel_name(isa, ctype, mr, nr)
    guard = f"KW_UK_{isa.name}_{ctype[0]}{mr}x{nr}".upper()
    lines = [f"#ifndef {guard}", f"#define {guard}"]
    if isa is GENERIC:
        lines += _function(isa, ctype, mr, nr, name)
    else:
        lines += [f"#if {isa.guard}", *_function(isa, ctype, mr, nr, name), "#else",
                  f"/* the build target lacks {isa.name}: same tile on generic vectors */",
                  *_function(GENERIC, ctype, mr, nr, name), "#endif"]
    lines.append("#endif")
    return "\n".join(lines) + "\n"
