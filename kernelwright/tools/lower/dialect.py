"""What differs between SYCL, CUDA and C++ in a kernel body: spellings of math and preludes.

Kernel *structure* (work-items, groups, loops) is the emitters' business (``emit/`` and
``backends/``); bodies are plain C expressions that all three compile. A dialect is data:
which backend uses which one is decided in ``backends/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# C math function -> float-overload spelling for (sycl, cuda, cpp)
_MATH = [
    "exp", "log", "sqrt", "rsqrt", "tanh", "erf", "sin", "cos", "tan", "floor", "ceil",
    "round", "trunc", "log1p", "expm1", "log2", "log10", "exp2", "atan", "asin", "acos",
    "sinh", "cosh", "asinh", "acosh", "atanh", "fabs", "pow", "fmod", "atan2", "erfc",
    "copysign", "rint", "lgamma", "cbrt",
]

_HALF = r"""
KW_FN float kw_h2f(unsigned short h) {
    unsigned int s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
    if (e == 0) {
        if (m == 0) { bits = s; }
        else { e = 113; while (!(m & 0x400u)) { m <<= 1; --e; } m &= 0x3ffu;
               bits = s | (e << 23) | (m << 13); }
    } else if (e == 31) { bits = s | 0x7f800000u | (m << 13); }
    else { bits = s | ((e + 112) << 23) | (m << 13); }
    float f; KW_MEMCPY(&f, &bits, 4); return f;
}
KW_FN unsigned short kw_f2h(float f) {
    unsigned int x; KW_MEMCPY(&x, &f, 4);
    unsigned int s = (x >> 16) & 0x8000u, e = (x >> 23) & 0xffu, m = x & 0x7fffffu;
    if (e == 255) return (unsigned short)(s | 0x7c00u | (m ? 0x200u : 0));
    int ne = (int)e - 112;
    if (ne >= 31) return (unsigned short)(s | 0x7c00u);
    if (ne <= 0) {
        if (ne < -10) return (unsigned short)s;
        m |= 0x800000u; unsigned int shift = (unsigned int)(14 - ne);
        unsigned int hm = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (hm & 1u))) ++hm;
        return (unsigned short)(s | hm);
    }
    unsigned int hm = m >> 13, rem = m & 0x1fffu;
    unsigned int out = s | ((unsigned int)ne << 10) | hm;
    if (rem > 0x1000u || (rem == 0x1000u && (hm & 1u))) ++out;
    return (unsigned short)out;
}
KW_FN float kw_b2f(unsigned short b) {
    unsigned int bits = ((unsigned int)b) << 16; float f; KW_MEMCPY(&f, &bits, 4); return f;
}
KW_FN unsigned short kw_f2b(float f) {
    unsigned int x; KW_MEMCPY(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (unsigned short)(x >> 16);
}
"""

_COMMON = r"""
template <typename T> KW_FN T kw_max(T a, T b) { return a > b ? a : b; }
template <typename T> KW_FN T kw_min(T a, T b) { return a < b ? a : b; }
// NaN-propagating max/min as two selects on values: a || of two tests became a select of
// masks after inlining (beside kw_expf's own NaN tests), which g++ cannot vectorise
template <typename T> KW_FN T kw_maxn(T a, T b) { T m = a > b ? a : b; return a != a ? a : m; }
template <typename T> KW_FN T kw_minn(T a, T b) { T m = a < b ? a : b; return a != a ? a : m; }
// max/min against a bound that is never NaN (a literal): one compare and one select, which
// g++ makes one max/min instruction; a NaN in `a` is returned (every comparison with NaN is
// false), as torch's clamp, relu and hardtanh return it
template <typename T> KW_FN T kw_maxc(T a, T c) { return a < c ? c : a; }
template <typename T> KW_FN T kw_minc(T a, T c) { return a > c ? c : a; }
// torch.fmax/fmin: NaN only where both are NaN; equal values give `a` (fmax(-0.0, 0.0) is -0.0)
template <typename T> KW_FN T kw_fmax(T a, T b) {
    T m = a < b ? b : a; m = a != a ? b : m; return b != b ? a : m; }
template <typename T> KW_FN T kw_fmin(T a, T b) {
    T m = a > b ? b : a; m = a != a ? b : m; return b != b ? a : m; }
template <typename T> KW_FN T kw_sign(T a) { return (T)((a > (T)0) - (a < (T)0)); }
template <typename T> KW_FN T kw_floordiv(T a, T b) {
    T q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }
template <typename T> KW_FN T kw_imod(T a, T b) {
    T r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
"""


# C++ only: float exp/tanh/erf written as straight-line arithmetic and selects, so g++
# vectorises the loops that call them (glibc's vector libm is used only under
# -ffinite-math-only, which would break inf/nan semantics). exp: Cody-Waite reduction
# x = n ln2 + r, a degree-6 polynomial for e^r (Cephes' expf coefficients, ~1 ulp), 2^n built
# from two exponent fields so n in [-150, 128] never overflows the field; inf/nan kept.
# tanh: a odd polynomial below |x| < 0.625 (Cephes), 1 - 2 / (e^{2|x|} + 1) above (abs error
# < 1e-7). log: Cephes' logf (mantissa in [sqrt(1/2), sqrt(2)), degree-9 polynomial); log1p
# from it with the rounding of 1 + x corrected. expm1: its Taylor series below |x| < 0.35,
# exp(x) - 1 above. erf: Cephes' odd polynomial below |x| < 1,
# Abramowitz & Stegun 7.1.26 above (abs error < 1.5e-7 where erf > 0.84).
_CPP_MATH = r"""
static inline float kw_pow2i(int n) {
    return __builtin_bit_cast(float, (unsigned int)(n + 127) << 23);
}
static inline float kw_expf(float x) {
    /* Each clamp is one compare and select that keeps a NaN (g++: one vmaxps / vminps), and
       a NaN then flows through the arithmetic; n is rounded with the 1.5 * 2^23 trick, whose
       bits hold it as an integer (no float -> int conversion, undefined for NaN). Past the
       clamps the result overflows to inf (n = 128) or rounds to 0 (n = -150) by itself. The
       last select is for g++ only: without it the loops of log1p(exp(x)) (softplus, mish)
       were left scalar, 14x slower. */
    float xc = x < -104.0f ? -104.0f : x;
    xc = xc > 89.0f ? 89.0f : xc;
    float t = xc * 1.44269504088896341f + 12582912.0f;
    float n = t - 12582912.0f;
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int ni = __builtin_bit_cast(int, t) - 0x4B400000;
    int h = ni >> 1;
    float y = p * kw_pow2i(h) * kw_pow2i(ni - h);
    return x != x ? x : y;
}
static inline float kw_expm1f(float x) {
    /* below |x| < 0.35 (ln 2 / 2) the Taylor series to x^8 (relative error < 1e-9 there),
       which keeps the digits exp(x) - 1 cancels away; above it exp(x) - 1 */
    float a = x < 0.0f ? -x : x;
    float p = 2.48015873e-5f;
    p = p * x + 1.98412698e-4f;
    p = p * x + 1.38888889e-3f;
    p = p * x + 8.33333333e-3f;
    p = p * x + 4.16666667e-2f;
    p = p * x + 1.66666667e-1f;
    p = p * x + 0.5f;
    float small = p * x * x + x;
    small = x == 0.0f ? x : small;  /* -0.0 stays -0.0 */
    return a < 0.35f ? small : kw_expf(x) - 1.0f;
}
static inline float kw_tanhf(float x) {
    float a = x < 0.0f ? -x : x;
    float z = x * x;
    float small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z
                   + 1.33314422036e-1f) * z - 3.33332819422e-1f) * z * x + x;
    /* exp(-2|x|) is in (0, 1]: no overflow, so no clamp before kw_expf */
    float e = kw_expf(-2.0f * a);
    float big = (1.0f - e) / (1.0f + e);
    big = x < 0.0f ? -big : big;
    return a < 0.625f ? small : (x != x ? x : big);
}
static inline float kw_logf(float x) {
    float xs = x < 1.17549435e-38f ? x * 8388608.0f : x;  /* denormals: scale by 2^23 */
    int bits = __builtin_bit_cast(int, xs);
    int e = ((bits >> 23) & 0xff) - 126 - (x < 1.17549435e-38f ? 23 : 0);
    float m = __builtin_bit_cast(float, (bits & 0x007fffff) | 0x3f000000);  /* [0.5, 1) */
    int lo = m < 0.707106781186547524f;
    e -= lo;
    float f = lo ? m + m - 1.0f : m - 1.0f;
    float z = f * f;
    float y = ((((((((7.0376836292e-2f * f - 1.1514610310e-1f) * f + 1.1676998740e-1f) * f
                   - 1.2420140846e-1f) * f + 1.4249322787e-1f) * f - 1.6668057665e-1f) * f
                 + 2.0000714765e-1f) * f - 2.4999993993e-1f) * f + 3.3333331174e-1f) * f * z;
    float fe = (float)e;
    y += -2.12194440e-4f * fe;
    y += -0.5f * z;
    float r = f + y + 0.693359375f * fe;
    r = x == 0.0f ? -KW_INF : r;
    r = x < 0.0f ? KW_NAN : r;
    return (x != x || x == KW_INF) ? x : r;
}
static inline float kw_log1pf(float x) {
    float u = 1.0f + x;
    float d = u - 1.0f;
    /* log(u) - ((u - 1) - x) / u corrects the rounding of 1 + x */
    float r = kw_logf(u) - (d - x) / u;
    r = d == 0.0f ? x : r;
    r = u == 0.0f ? -KW_INF : r;
    return (x != x || x == KW_INF) ? x : r;
}
static inline float kw_erff(float x) {
    float a = x < 0.0f ? -x : x;
    float t = 1.0f / (1.0f + 0.3275911f * a);
    float y = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t
               + 0.254829592f) * t;
    float r = 1.0f - y * kw_expf(-a * a);
    r = x < 0.0f ? -r : r;
    float z = x * x;
    float s = x * ((((((7.853861353153693e-5f * z - 8.010193625184903e-4f) * z
                      + 5.188327685732524e-3f) * z - 2.685381193529856e-2f) * z
                    + 1.128358514861418e-1f) * z - 3.761262582423300e-1f) * z
                  + 1.128379165726710f);
    return a < 1.0f ? s : (x != x ? x : r);
}
"""
# OpenMP SIMD reductions with torch's NaN-propagating max/min (emit.py's row loops use them)
_CPP_REDUCE = r"""
#pragma omp declare reduction(kw_maxr : float : omp_out = kw_maxn(omp_out, omp_in)) \
    initializer(omp_priv = -KW_INF)
#pragma omp declare reduction(kw_minr : float : omp_out = kw_minn(omp_out, omp_in)) \
    initializer(omp_priv = KW_INF)
#pragma omp declare reduction(kw_maxr : double : omp_out = kw_maxn(omp_out, omp_in)) \
    initializer(omp_priv = -(double)KW_INF)
#pragma omp declare reduction(kw_minr : double : omp_out = kw_minn(omp_out, omp_in)) \
    initializer(omp_priv = (double)KW_INF)
"""
_CPP_FAST = {"exp": "kw_expf", "tanh": "kw_tanhf", "erf": "kw_erff", "log": "kw_logf",
             "log1p": "kw_log1pf", "expm1": "kw_expm1f"}


@dataclass(frozen=True, eq=False)
class Dialect:
    """Spellings of one backend's kernel language (data only: each backend in
    ``backends/`` picks its dialect)."""

    name: str
    math_prefix: str
    float_suffix: bool  # CUDA: expf; others overload on float
    prelude_head: str
    memcpy: str
    fn_qualifier: str = "static inline"  # how prelude functions are declared
    consts: str = ("#define KW_INF (__builtin_inff())\n"
                   "#define KW_NAN (__builtin_nanf(\"\"))\n")
    fast: dict[str, str] = field(default_factory=dict)  # float math -> prelude function
    rsqrt_recip: bool = False  # spell rsqrt as 1 / sqrt (no rsqrt in the math library)
    prelude_tail: str = ""  # backend-only prelude (C++: vectorisable math, simd reductions)

    def fn(self, name: str, ctype: str = "float") -> str:
        if ctype == "float" and name in self.fast:
            return self.fast[name]
        if name == "rsqrt" and self.rsqrt_recip:
            one = "1.0f" if ctype == "float" else "1.0"
            return f"{one} / {self.math_prefix}sqrt"
        if self.float_suffix and ctype == "float" and name != "rsqrt":
            return f"{name}f"
        if self.float_suffix and name == "rsqrt":
            return "rsqrtf" if ctype == "float" else "rsqrt"
        return f"{self.math_prefix}{name}"

    def call(self, name: str, ctype: str, *args: str) -> str:
        f = self.fn(name, ctype)
        if f.startswith("1.0"):
            return f"({f}({', '.join(args)}))"
        return f"{f}({', '.join(args)})"

    def max_nan(self, a: str, b: str) -> str:
        return f"kw_maxn({a}, {b})"

    def min_nan(self, a: str, b: str) -> str:
        return f"kw_minn({a}, {b})"

    def prelude(self) -> str:
        return (self.prelude_head + f"#define KW_FN {self.fn_qualifier}\n" + self.consts
                + f"#define KW_MEMCPY(d, s, n) {self.memcpy}(d, s, n)\n" + _COMMON + _HALF
                + self.prelude_tail)


SYCL = Dialect("sycl", "sycl::", False,
               "#include <sycl/sycl.hpp>\nnamespace syclexp = sycl::ext::oneapi::experimental;\n",
               "__builtin_memcpy")
CUDA = Dialect("cuda", "", True, "", "memcpy", fn_qualifier="static __device__ inline",
               consts=("#define KW_INF __int_as_float(0x7f800000)\n"
                       "#define KW_NAN __int_as_float(0x7fffffff)\n"))
CPP = Dialect("cpp", "std::", False,
              "#include <cmath>\n#include <cstring>\n#include <cstdint>\n", "std::memcpy",
              fast=_CPP_FAST, rsqrt_recip=True, prelude_tail=_CPP_MATH + _CPP_REDUCE)
