# ruff: noqa: E501  (written out by lower_task(task, 'sycl').candidate; long index expressions)
"""Lowered by kernelwright (kernelwright.tools.lower).

lowered l2_linear_layernorm_vendor for sycl: 3 signature(s)
implementation spaces allowed by the contract: custom_kernel, vendor_library
g0 gemm 384x512x512: implementation space vendor_library (host BLAS, zero copy) + fused epilogue kernel: the contract allows it and 201.3 MFLOP is past the 0.5 MFLOP where BLAS wins
  signature train|4,96,512: 2 kernel(s)
    k0_0: vendor_gemm over 0 units x wg 1 -> n2
    k0_1: rows over 384 units x wg 256 -> n5, n7, n9
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
void k0_1(const float* __restrict__ p_fc_bias, const float* __restrict__ b5, const float* __restrict__ p_norm_weight, const float* __restrict__ p_norm_bias, float* __restrict__ b8) {
    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();
    const int u = it.get_group(0);
    const int l = it.get_local_id(0);
    const int o0 = ((u) / 96);
    const int o1 = ((u) % 96);
    float a1 = 0.0f;
    for (int r2 = l; r2 < 512; r2 += 256) {
        const int r2_0 = r2;
        const float t3 = p_fc_bias[r2_0];
        const float t4 = b5[49152*o0 + 512*o1 + r2_0];
        const float t5 = (t3 + t4);
        a1 += ((float)t5);
    }
    const float t6 = sycl::reduce_over_group(it.get_group(), a1, sycl::plus<float>());
    const float t7 = ((float)t6);
    float a8 = 0.0f;
    for (int r9 = l; r9 < 512; r9 += 256) {
        const int r9_0 = r9;
        const float t10 = p_fc_bias[r9_0];
        const float t11 = b5[49152*o0 + 512*o1 + r9_0];
        const float t12 = (t10 + t11);
        const float t13 = (t7 / 512.0f);
        const float t14 = ((float)t12 - t13);
        const float t15 = t14 * t14;
        a8 += ((float)t15);
    }
    const float t16 = sycl::reduce_over_group(it.get_group(), a8, sycl::plus<float>());
    const float t17 = ((float)t16);
    for (int r18 = l; r18 < 512; r18 += 256) {
        const int r18_0 = r18;
        const float t19 = p_fc_bias[r18_0];
        const float t20 = b5[49152*o0 + 512*o1 + r18_0];
        const float t21 = (t19 + t20);
        const float t22 = (t7 / 512.0f);
        const float t23 = sycl::rsqrt(t17 / 512.0f + 1e-05f);
        const float t24 = p_norm_weight[r18_0];
        const float t25 = p_norm_bias[r18_0];
        const float t26 = (((float)t21) - t22) * t23 * ((float)t24) + ((float)t25);
        b8[49152*o0 + 512*o1 + r18_0] = (float)(t26);
    }
}

extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void k1_1(const float* __restrict__ p_fc_bias, const float* __restrict__ b5, const float* __restrict__ p_norm_weight, const float* __restrict__ p_norm_bias, float* __restrict__ b8) {
    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();
    const int u = it.get_group(0);
    const int l = it.get_local_id(0);
    const int o0 = ((u) / 96);
    const int o1 = ((u) % 96);
    float a1 = 0.0f;
    for (int r2 = l; r2 < 512; r2 += 256) {
        const int r2_0 = r2;
        const float t3 = p_fc_bias[r2_0];
        const float t4 = b5[49152*o0 + 512*o1 + r2_0];
        const float t5 = (t3 + t4);
        a1 += ((float)t5);
    }
    const float t6 = sycl::reduce_over_group(it.get_group(), a1, sycl::plus<float>());
    const float t7 = ((float)t6);
    float a8 = 0.0f;
    for (int r9 = l; r9 < 512; r9 += 256) {
        const int r9_0 = r9;
        const float t10 = p_fc_bias[r9_0];
        const float t11 = b5[49152*o0 + 512*o1 + r9_0];
        const float t12 = (t10 + t11);
        const float t13 = (t7 / 512.0f);
        const float t14 = ((float)t12 - t13);
        const float t15 = t14 * t14;
        a8 += ((float)t15);
    }
    const float t16 = sycl::reduce_over_group(it.get_group(), a8, sycl::plus<float>());
    const float t17 = ((float)t16);
    for (int r18 = l; r18 < 512; r18 += 256) {
        const int r18_0 = r18;
        const float t19 = p_fc_bias[r18_0];
        const float t20 = b5[49152*o0 + 512*o1 + r18_0];
        const float t21 = (t19 + t20);
        const float t22 = (t7 / 512.0f);
        const float t23 = sycl::rsqrt(t17 / 512.0f + 1e-05f);
        const float t24 = p_norm_weight[r18_0];
        const float t25 = p_norm_bias[r18_0];
        const float t26 = (((float)t21) - t22) * t23 * ((float)t24) + ((float)t25);
        b8[49152*o0 + 512*o1 + r18_0] = (float)(t26);
    }
}

extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void k2_1(const float* __restrict__ p_fc_bias, const float* __restrict__ b5, const float* __restrict__ p_norm_weight, const float* __restrict__ p_norm_bias, float* __restrict__ b8) {
    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();
    const int u = it.get_group(0);
    const int l = it.get_local_id(0);
    const int o1 = u;
    float a1 = 0.0f;
    for (int r2 = l; r2 < 512; r2 += 256) {
        const int r2_0 = r2;
        const float t3 = p_fc_bias[r2_0];
        const float t4 = b5[512*o1 + r2_0];
        const float t5 = (t3 + t4);
        a1 += ((float)t5);
    }
    const float t6 = sycl::reduce_over_group(it.get_group(), a1, sycl::plus<float>());
    const float t7 = ((float)t6);
    float a8 = 0.0f;
    for (int r9 = l; r9 < 512; r9 += 256) {
        const int r9_0 = r9;
        const float t10 = p_fc_bias[r9_0];
        const float t11 = b5[512*o1 + r9_0];
        const float t12 = (t10 + t11);
        const float t13 = (t7 / 512.0f);
        const float t14 = ((float)t12 - t13);
        const float t15 = t14 * t14;
        a8 += ((float)t15);
    }
    const float t16 = sycl::reduce_over_group(it.get_group(), a8, sycl::plus<float>());
    const float t17 = ((float)t16);
    for (int r18 = l; r18 < 512; r18 += 256) {
        const int r18_0 = r18;
        const float t19 = p_fc_bias[r18_0];
        const float t20 = b5[512*o1 + r18_0];
        const float t21 = (t19 + t20);
        const float t22 = (t7 / 512.0f);
        const float t23 = sycl::rsqrt(t17 / 512.0f + 1e-05f);
        const float t24 = p_norm_weight[r18_0];
        const float t25 = p_norm_bias[r18_0];
        const float t26 = (((float)t21) - t22) * t23 * ((float)t24) + ((float)t25);
        b8[512*o1 + r18_0] = (float)(t26);
    }
}

// [EVOLVE_END]
"""

PLANS = {'train|1,96,512': {'consts': [],
                    'inputs': ['x0'],
                    'outputs': [('b8', [1, 96, 512], 'float32')],
                    'single': True,
                    'state': [('p_fc_weight', 'fc.weight'),
                              ('p_fc_bias', 'fc.bias'),
                              ('p_norm_weight', 'norm.weight'),
                              ('p_norm_bias', 'norm.bias')],
                    'steps': [{'a': ['x0', [96, 512], [512, 1], 0],
                               'b': ['p_fc_weight', [512, 512], [1, 512], 0],
                               'name': 'k2_0',
                               'out': ['b5', [96, 512]],
                               'vendor': 'matmul'},
                              {'args': ['p_fc_bias', 'b5', 'p_norm_weight', 'p_norm_bias', 'b8'],
                               'global': 24576,
                               'kernel': 'k2_1',
                               'local': 256}],
                    'temps': {'b5': ([96, 512], 'float32')}},
 'train|3,96,512': {'consts': [],
                    'inputs': ['x0'],
                    'outputs': [('b8', [3, 96, 512], 'float32')],
                    'single': True,
                    'state': [('p_fc_weight', 'fc.weight'),
                              ('p_fc_bias', 'fc.bias'),
                              ('p_norm_weight', 'norm.weight'),
                              ('p_norm_bias', 'norm.bias')],
                    'steps': [{'a': ['x0', [288, 512], [512, 1], 0],
                               'b': ['p_fc_weight', [512, 512], [1, 512], 0],
                               'name': 'k1_0',
                               'out': ['b5', [288, 512]],
                               'vendor': 'matmul'},
                              {'args': ['p_fc_bias', 'b5', 'p_norm_weight', 'p_norm_bias', 'b8'],
                               'global': 73728,
                               'kernel': 'k1_1',
                               'local': 256}],
                    'temps': {'b5': ([288, 512], 'float32')}},
 'train|4,96,512': {'consts': [],
                    'inputs': ['x0'],
                    'outputs': [('b8', [4, 96, 512], 'float32')],
                    'single': True,
                    'state': [('p_fc_weight', 'fc.weight'),
                              ('p_fc_bias', 'fc.bias'),
                              ('p_norm_weight', 'norm.weight'),
                              ('p_norm_bias', 'norm.bias')],
                    'steps': [{'a': ['x0', [384, 512], [512, 1], 0],
                               'b': ['p_fc_weight', [512, 512], [1, 512], 0],
                               'name': 'k0_0',
                               'out': ['b5', [384, 512]],
                               'vendor': 'matmul'},
                              {'args': ['p_fc_bias', 'b5', 'p_norm_weight', 'p_norm_bias', 'b8'],
                               'global': 98304,
                               'kernel': 'k0_1',
                               'local': 256}],
                    'temps': {'b5': ([384, 512], 'float32')}}}

STATE = {'fc.bias': [[512], 'float32', True],
 'fc.weight': [[512, 512], 'float32', True],
 'norm.bias': [[512], 'float32', True],
 'norm.weight': [[512], 'float32', True]}

CONSTS = {}


class ModelNew(LoweredModule):
    backend = BACKEND
    launch = LAUNCH
    source = SOURCE
    plans = PLANS
    state = STATE
    consts = CONSTS
