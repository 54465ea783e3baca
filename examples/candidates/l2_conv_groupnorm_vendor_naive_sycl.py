# ruff: noqa: E501  (written out by lower_task(task, 'sycl').candidate; long index expressions)
"""Lowered by kernelwright (kernelwright.tools.lower).

lowered l2_conv_groupnorm_vendor for sycl: 3 signature(s)
implementation spaces allowed by the contract: custom_kernel, vendor_library
g0 conv [8, 32, 32, 32]: implementation space vendor_library (oneDNN through torch) + fused epilogue kernel: the contract allows it and 75.5 MFLOP is past the 0.5 MFLOP where the library wins
  signature train|8,16,32,32: 2 kernel(s)
    k0_0: vendor_conv over 0 units x wg 1 -> n0
    k0_1: rows over 64 units x wg 256 -> n2, n4, n10
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
void k0_1(const float* __restrict__ b5, const float* __restrict__ p_norm_weight, const float* __restrict__ p_norm_bias, float* __restrict__ b8) {
    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();
    const int u = it.get_group(0);
    const int l = it.get_local_id(0);
    const int o0 = ((u) / 8);
    const int o1 = ((u) % 8);
    float a1 = 0.0f;
    for (int r2 = l; r2 < 4096; r2 += 256) {
        const int r2_0 = r2;
        const float t3 = b5[32*((((r2_0) / 32)) % 32) + ((r2_0) % 32) + 1024*((r2_0) / 1024) + 32768*o0 + 4096*o1];
        a1 += ((float)t3);
    }
    const float t4 = sycl::reduce_over_group(it.get_group(), a1, sycl::plus<float>());
    const float t5 = ((float)t4);
    float a6 = 0.0f;
    for (int r7 = l; r7 < 4096; r7 += 256) {
        const int r7_0 = r7;
        const float t8 = b5[32*((((r7_0) / 32)) % 32) + ((r7_0) % 32) + 1024*((r7_0) / 1024) + 32768*o0 + 4096*o1];
        const float t9 = (t5 / 4096.0f);
        const float t10 = ((float)t8 - t9);
        const float t11 = t10 * t10;
        a6 += ((float)t11);
    }
    const float t12 = sycl::reduce_over_group(it.get_group(), a6, sycl::plus<float>());
    const float t13 = ((float)t12);
    for (int r14 = l; r14 < 4096; r14 += 256) {
        const int r14_0 = r14;
        const float t15 = b5[32*((((r14_0) / 32)) % 32) + ((r14_0) % 32) + 1024*((r14_0) / 1024) + 32768*o0 + 4096*o1];
        const float t16 = (t5 / 4096.0f);
        const float t17 = sycl::rsqrt(t13 / 4096.0f + 1e-05f);
        const float t18 = p_norm_weight[((r14_0) / 1024) + 4*o1];
        const float t19 = p_norm_bias[((r14_0) / 1024) + 4*o1];
        const float t20 = (((float)t15) - t16) * t17 * ((float)t18) + ((float)t19);
        const float t21 = (t20 > (float)0 ? t20 : (float)0);
        b8[32*((((r14_0) / 32)) % 32) + ((r14_0) % 32) + 1024*((r14_0) / 1024) + 32768*o0 + 4096*o1] = (float)(t21);
    }
}

extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void k1_1(const float* __restrict__ b5, const float* __restrict__ p_norm_weight, const float* __restrict__ p_norm_bias, float* __restrict__ b8) {
    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();
    const int u = it.get_group(0);
    const int l = it.get_local_id(0);
    const int o0 = ((u) / 8);
    const int o1 = ((u) % 8);
    float a1 = 0.0f;
    for (int r2 = l; r2 < 4096; r2 += 256) {
        const int r2_0 = r2;
        const float t3 = b5[32*((((r2_0) / 32)) % 32) + ((r2_0) % 32) + 1024*((r2_0) / 1024) + 32768*o0 + 4096*o1];
        a1 += ((float)t3);
    }
    const float t4 = sycl::reduce_over_group(it.get_group(), a1, sycl::plus<float>());
    const float t5 = ((float)t4);
    float a6 = 0.0f;
    for (int r7 = l; r7 < 4096; r7 += 256) {
        const int r7_0 = r7;
        const float t8 = b5[32*((((r7_0) / 32)) % 32) + ((r7_0) % 32) + 1024*((r7_0) / 1024) + 32768*o0 + 4096*o1];
        const float t9 = (t5 / 4096.0f);
        const float t10 = ((float)t8 - t9);
        const float t11 = t10 * t10;
        a6 += ((float)t11);
    }
    const float t12 = sycl::reduce_over_group(it.get_group(), a6, sycl::plus<float>());
    const float t13 = ((float)t12);
    for (int r14 = l; r14 < 4096; r14 += 256) {
        const int r14_0 = r14;
        const float t15 = b5[32*((((r14_0) / 32)) % 32) + ((r14_0) % 32) + 1024*((r14_0) / 1024) + 32768*o0 + 4096*o1];
        const float t16 = (t5 / 4096.0f);
        const float t17 = sycl::rsqrt(t13 / 4096.0f + 1e-05f);
        const float t18 = p_norm_weight[((r14_0) / 1024) + 4*o1];
        const float t19 = p_norm_bias[((r14_0) / 1024) + 4*o1];
        const float t20 = (((float)t15) - t16) * t17 * ((float)t18) + ((float)t19);
        const float t21 = (t20 > (float)0 ? t20 : (float)0);
        b8[32*((((r14_0) / 32)) % 32) + ((r14_0) % 32) + 1024*((r14_0) / 1024) + 32768*o0 + 4096*o1] = (float)(t21);
    }
}

extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void k2_1(const float* __restrict__ b5, const float* __restrict__ p_norm_weight, const float* __restrict__ p_norm_bias, float* __restrict__ b8) {
    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();
    const int u = it.get_group(0);
    const int l = it.get_local_id(0);
    const int o1 = u;
    float a1 = 0.0f;
    for (int r2 = l; r2 < 4096; r2 += 256) {
        const int r2_0 = r2;
        const float t3 = b5[32*((((r2_0) / 32)) % 32) + ((r2_0) % 32) + 1024*((r2_0) / 1024) + 4096*o1];
        a1 += ((float)t3);
    }
    const float t4 = sycl::reduce_over_group(it.get_group(), a1, sycl::plus<float>());
    const float t5 = ((float)t4);
    float a6 = 0.0f;
    for (int r7 = l; r7 < 4096; r7 += 256) {
        const int r7_0 = r7;
        const float t8 = b5[32*((((r7_0) / 32)) % 32) + ((r7_0) % 32) + 1024*((r7_0) / 1024) + 4096*o1];
        const float t9 = (t5 / 4096.0f);
        const float t10 = ((float)t8 - t9);
        const float t11 = t10 * t10;
        a6 += ((float)t11);
    }
    const float t12 = sycl::reduce_over_group(it.get_group(), a6, sycl::plus<float>());
    const float t13 = ((float)t12);
    for (int r14 = l; r14 < 4096; r14 += 256) {
        const int r14_0 = r14;
        const float t15 = b5[32*((((r14_0) / 32)) % 32) + ((r14_0) % 32) + 1024*((r14_0) / 1024) + 4096*o1];
        const float t16 = (t5 / 4096.0f);
        const float t17 = sycl::rsqrt(t13 / 4096.0f + 1e-05f);
        const float t18 = p_norm_weight[((r14_0) / 1024) + 4*o1];
        const float t19 = p_norm_bias[((r14_0) / 1024) + 4*o1];
        const float t20 = (((float)t15) - t16) * t17 * ((float)t18) + ((float)t19);
        const float t21 = (t20 > (float)0 ? t20 : (float)0);
        b8[32*((((r14_0) / 32)) % 32) + ((r14_0) % 32) + 1024*((r14_0) / 1024) + 4096*o1] = (float)(t21);
    }
}

// [EVOLVE_END]
"""

PLANS = {'train|1,16,32,32': {'consts': [],
                      'inputs': ['x0'],
                      'outputs': [('b8', [1, 32, 32, 32], 'float32')],
                      'single': True,
                      'state': [('p_conv_weight', 'conv.weight'),
                                ('p_conv_bias', 'conv.bias'),
                                ('p_norm_weight', 'norm.weight'),
                                ('p_norm_bias', 'norm.bias')],
                      'steps': [{'bias': ['p_conv_bias', [32], [1], 0],
                                 'dilation': [1, 1],
                                 'groups': 1,
                                 'name': 'k2_0',
                                 'out': ['b5', [1, 32, 32, 32]],
                                 'output_padding': [],
                                 'padding': [1, 1],
                                 'stride': [1, 1],
                                 'transposed': False,
                                 'vendor': 'conv',
                                 'w': ['p_conv_weight', [32, 16, 3, 3], [144, 9, 3, 1], 0],
                                 'x': ['x0', [1, 16, 32, 32], [0, 1024, 32, 1], 0]},
                                {'args': ['b5', 'p_norm_weight', 'p_norm_bias', 'b8'],
                                 'global': 2048,
                                 'kernel': 'k2_1',
                                 'local': 256}],
                      'temps': {'b5': ([1, 32, 32, 32], 'float32')}},
 'train|5,16,32,32': {'consts': [],
                      'inputs': ['x0'],
                      'outputs': [('b8', [5, 32, 32, 32], 'float32')],
                      'single': True,
                      'state': [('p_conv_weight', 'conv.weight'),
                                ('p_conv_bias', 'conv.bias'),
                                ('p_norm_weight', 'norm.weight'),
                                ('p_norm_bias', 'norm.bias')],
                      'steps': [{'bias': ['p_conv_bias', [32], [1], 0],
                                 'dilation': [1, 1],
                                 'groups': 1,
                                 'name': 'k1_0',
                                 'out': ['b5', [5, 32, 32, 32]],
                                 'output_padding': [],
                                 'padding': [1, 1],
                                 'stride': [1, 1],
                                 'transposed': False,
                                 'vendor': 'conv',
                                 'w': ['p_conv_weight', [32, 16, 3, 3], [144, 9, 3, 1], 0],
                                 'x': ['x0', [5, 16, 32, 32], [16384, 1024, 32, 1], 0]},
                                {'args': ['b5', 'p_norm_weight', 'p_norm_bias', 'b8'],
                                 'global': 10240,
                                 'kernel': 'k1_1',
                                 'local': 256}],
                      'temps': {'b5': ([5, 32, 32, 32], 'float32')}},
 'train|8,16,32,32': {'consts': [],
                      'inputs': ['x0'],
                      'outputs': [('b8', [8, 32, 32, 32], 'float32')],
                      'single': True,
                      'state': [('p_conv_weight', 'conv.weight'),
                                ('p_conv_bias', 'conv.bias'),
                                ('p_norm_weight', 'norm.weight'),
                                ('p_norm_bias', 'norm.bias')],
                      'steps': [{'bias': ['p_conv_bias', [32], [1], 0],
                                 'dilation': [1, 1],
                                 'groups': 1,
                                 'name': 'k0_0',
                                 'out': ['b5', [8, 32, 32, 32]],
                                 'output_padding': [],
                                 'padding': [1, 1],
                                 'stride': [1, 1],
                                 'transposed': False,
                                 'vendor': 'conv',
                                 'w': ['p_conv_weight', [32, 16, 3, 3], [144, 9, 3, 1], 0],
                                 'x': ['x0', [8, 16, 32, 32], [16384, 1024, 32, 1], 0]},
                                {'args': ['b5', 'p_norm_weight', 'p_norm_bias', 'b8'],
                                 'global': 16384,
                                 'kernel': 'k0_1',
                                 'local': 256}],
                      'temps': {'b5': ([8, 32, 32, 32], 'float32')}}}

STATE = {'conv.bias': [[32], 'float32', True],
 'conv.weight': [[32, 16, 3, 3], 'float32', True],
 'norm.bias': [[32], 'float32', True],
 'norm.weight': [[32], 'float32', True]}

CONSTS = {}


class ModelNew(LoweredModule):
    backend = BACKEND
    launch = LAUNCH
    source = SOURCE
    plans = PLANS
    state = STATE
    consts = CONSTS
