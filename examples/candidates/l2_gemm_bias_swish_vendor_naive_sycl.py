# ruff: noqa: E501  (written out by lower_task(task, 'sycl').candidate; long index expressions)
"""Lowered by kernelwright (kernelwright.tools.lower).

lowered l2_gemm_bias_swish_vendor for sycl: 3 signature(s)
implementation spaces allowed by the contract: custom_kernel, vendor_library
g0 gemm 384x1024x768: implementation space vendor_library (host BLAS, zero copy) + fused epilogue kernel: the contract allows it and 604.0 MFLOP is past the 0.5 MFLOP where BLAS wins
  signature train|384,768: 2 kernel(s)
    k0_0: vendor_gemm over 0 units x wg 1 -> n1
    k0_0e0: pointwise over 393216 units x wg 128 -> n4
"""

from kernelwright.tools.lower.runtime import LoweredModule

BACKEND = 'sycl'
LAUNCH = 'chain'

SOURCE = r"""
#include <sycl/sycl.hpp>
namespace syclexp = sycl::ext::oneapi::experimental;
#define KW_FN static inline
#define KW_INF (__builtin_inff())
#define KW_NAN (__builtin_nanf(""))
#define KW_MEMCPY(d, s, n) __builtin_memcpy(d, s, n)

template <typename T> KW_FN T kw_max(T a, T b) { return a > b ? a : b; }
template <typename T> KW_FN T kw_min(T a, T b) { return a < b ? a : b; }
template <typename T> KW_FN T kw_maxn(T a, T b) { return (a != a || a > b) ? a : b; }
template <typename T> KW_FN T kw_minn(T a, T b) { return (a != a || a < b) ? a : b; }
template <typename T> KW_FN T kw_sign(T a) { return (T)((a > (T)0) - (a < (T)0)); }
template <typename T> KW_FN T kw_floordiv(T a, T b) {
    T q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }
template <typename T> KW_FN T kw_imod(T a, T b) {
    T r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }

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

// [EVOLVE_START] kernels: keep names and argument lists (the plans launch them)
extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void k0_0e0(const float* __restrict__ b3, const float* __restrict__ p_bias, float* __restrict__ b4) {
    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();
    const int u = it.get_global_id(0);
    if (u >= 393216) return;
    const int i0 = ((u) / 1024);
    const int i1 = ((u) % 1024);
    const float t1 = b3[1024*i0 + i1];
    const float t2 = p_bias[i1];
    const float t3 = (t1 + t2);
    const float t4 = ((float)1 / ((float)1 + sycl::exp(-t3)));
    const float t5 = (t3 * t4);
    b4[1024*i0 + i1] = (float)(t5);
}

extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void k1_0e0(const float* __restrict__ b3, const float* __restrict__ p_bias, float* __restrict__ b4) {
    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();
    const int u = it.get_global_id(0);
    if (u >= 197632) return;
    const int i0 = ((u) / 1024);
    const int i1 = ((u) % 1024);
    const float t1 = b3[1024*i0 + i1];
    const float t2 = p_bias[i1];
    const float t3 = (t1 + t2);
    const float t4 = ((float)1 / ((float)1 + sycl::exp(-t3)));
    const float t5 = (t3 * t4);
    b4[1024*i0 + i1] = (float)(t5);
}

extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void k2_0e0(const float* __restrict__ b3, const float* __restrict__ p_bias, float* __restrict__ b4) {
    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();
    const int u = it.get_global_id(0);
    if (u >= 97280) return;
    const int i0 = ((u) / 1024);
    const int i1 = ((u) % 1024);
    const float t1 = b3[1024*i0 + i1];
    const float t2 = p_bias[i1];
    const float t3 = (t1 + t2);
    const float t4 = ((float)1 / ((float)1 + sycl::exp(-t3)));
    const float t5 = (t3 * t4);
    b4[1024*i0 + i1] = (float)(t5);
}

// [EVOLVE_END]
"""

PLANS = {'train|193,768': {'consts': [],
                   'inputs': ['x0'],
                   'outputs': [('b4', [193, 1024], 'float32')],
                   'single': True,
                   'state': [('p_weight', 'weight'), ('p_bias', 'bias')],
                   'steps': [{'a': ['x0', [193, 768], [768, 1], 0],
                              'b': ['p_weight', [768, 1024], [1, 768], 0],
                              'name': 'k1_0',
                              'out': ['b3', [193, 1024]],
                              'vendor': 'matmul'},
                             {'args': ['b3', 'p_bias', 'b4'],
                              'global': 197632,
                              'kernel': 'k1_0e0',
                              'local': 128}],
                   'temps': {'b3': ([193, 1024], 'float32')}},
 'train|384,768': {'consts': [],
                   'inputs': ['x0'],
                   'outputs': [('b4', [384, 1024], 'float32')],
                   'single': True,
                   'state': [('p_weight', 'weight'), ('p_bias', 'bias')],
                   'steps': [{'a': ['x0', [384, 768], [768, 1], 0],
                              'b': ['p_weight', [768, 1024], [1, 768], 0],
                              'name': 'k0_0',
                              'out': ['b3', [384, 1024]],
                              'vendor': 'matmul'},
                             {'args': ['b3', 'p_bias', 'b4'],
                              'global': 393216,
                              'kernel': 'k0_0e0',
                              'local': 128}],
                   'temps': {'b3': ([384, 1024], 'float32')}},
 'train|95,768': {'consts': [],
                  'inputs': ['x0'],
                  'outputs': [('b4', [95, 1024], 'float32')],
                  'single': True,
                  'state': [('p_weight', 'weight'), ('p_bias', 'bias')],
                  'steps': [{'a': ['x0', [95, 768], [768, 1], 0],
                             'b': ['p_weight', [768, 1024], [1, 768], 0],
                             'name': 'k2_0',
                             'out': ['b3', [95, 1024]],
                             'vendor': 'matmul'},
                            {'args': ['b3', 'p_bias', 'b4'],
                             'global': 97280,
                             'kernel': 'k2_0e0',
                             'local': 128}],
                  'temps': {'b3': ([95, 1024], 'float32')}}}

STATE = {'bias': [[1024], 'float32', True], 'weight': [[1024, 768], 'float32', True]}

CONSTS = {}


class ModelNew(LoweredModule):
    backend = BACKEND
    launch = LAUNCH
    source = SOURCE
    plans = PLANS
    state = STATE
    consts = CONSTS
