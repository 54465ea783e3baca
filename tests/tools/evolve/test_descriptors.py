"""Descriptor levels: one small hand-written snippet per level, per axis, per language family."""

from __future__ import annotations

import pytest

from kernelwright.spec.peaks import MachinePeaks
from kernelwright.tools.evolve.descriptors import (
    Descriptor,
    axis_level,
    describe,
    guess_language,
    measured_bound,
    roofline_ratio,
)

NAIVE = {
    "sycl": 'extern "C" void add(float* x, float* y, int n, sycl::nd_item<1> it) {\n'
    "  size_t i = it.get_global_id(0); if (i < n) y[i] = x[i] + y[i]; }",
    "cuda": "__global__ void add(float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * 256 + threadIdx.x; if (i < n) y[i] += x[i]; }",
    "cpp": 'extern "C" void add(float* x, float* y, int n) {\n'
    "  for (int i = 0; i < n; ++i) y[i] += x[i]; }",
    "opencl": "__kernel void add(__global float* x, __global float* y) {\n"
    "  int i = get_global_id(0); y[i] += x[i]; }",
}

MEMORY = {
    "sycl": [
        "auto v = sycl::vec<float, 4>{}; v.load(i, x);",
        "auto* tile = sycl::ext::oneapi::group_local_memory<float[256]>(g);\n"
        "tile[l] = x[i]; sycl::group_barrier(g);",
        "sycl::local_accessor<float, 2> a{{2, 64}, h}; // double buffer\n"
        "float acc[4][4]; float ping[2][64][64];",
    ],
    "cuda": [
        "float4 v = reinterpret_cast<const float4*>(x)[i];",
        "__shared__ float tile[32][32 + 1];\n tile[ty][tx] = x[i]; __syncthreads();",
        "__shared__ float As[2][64][64];\n __pipeline_memcpy_async(&As[s][r][c], p, 16);",
    ],
    "cpp": [
        "#pragma omp simd\nfor (int i = 0; i < n; ++i) y[i] += x[i];",
        "for (int i0 = 0; i0 < n; i0 += TILE) for (int k0 = 0; k0 < n; k0 += TILE) {}",
        "for (int i0 = 0; i0 < n; i0 += BLOCK) { __builtin_prefetch(&x[i0 + 64]); }",
    ],
    "opencl": [
        "float4 v = vload4(i, x); vstore4(v, i, y);",
        "__local float tile[64]; tile[l] = x[i]; barrier(CLK_LOCAL_MEM_FENCE);",
        "__local float t[64]; event_t e = async_work_group_copy(t, x, 64, 0);",
    ],
}

COMPUTE = {
    "sycl": [
        "y[i] = sycl::fma(a, x[i], y[i]);",
        "float s = sycl::reduce_over_group(g, v, sycl::plus<float>());",
        "using namespace sycl::ext::oneapi::experimental::matrix; joint_matrix<sub_group> m;",
    ],
    "cuda": [
        "y[i] = __expf(x[i]) * fmaf(a, b, c);",
        "float running_max = -INFINITY; float running_sum = 0.f;",
        "wmma::fragment<wmma::matrix_a, 16, 16, 16, half> a; wmma::mma_sync(c, a, b, c);",
    ],
    "cpp": [
        "y[i] = std::fma(a, x[i], y[i]);",
        "#pragma omp parallel for reduction(+:s)\nfor (int i = 0; i < n; ++i) s += x[i];",
        "for (int k0 = 0; k0 < K; k0 += BK) { acc[i][j] += a[i][k] * b[k][j]; }",
    ],
    "opencl": [
        "y[i] = mad(a, x[i], native_exp(y[i]));",
        "float s = work_group_reduce_add(v);",
        "void flash_attention_tile(void) {}",
    ],
}

PARALLELISM = {
    "sycl": [
        "sycl::group_barrier(it.get_group());",
        "auto sg = it.get_sub_group(); v = sycl::shift_group_left(sg, v, 1);",
        "[[sycl::reqd_sub_group_size(16)]] void k(sycl::nd_item<1> it) {}",
    ],
    "cuda": [
        "if (threadIdx.x == 0) s = x[0]; __syncthreads();",
        "v += __shfl_down_sync(0xffffffff, v, 16);",
        "__global__ void __launch_bounds__(256) k(float* x) { int warp = threadIdx.x / 32; }",
    ],
    "cpp": [
        "#pragma omp parallel for\nfor (int i = 0; i < n; ++i) y[i] += x[i];",
        "#pragma omp simd\nfor (int i = 0; i < n; ++i) y[i] += x[i];",
        "#pragma omp parallel for collapse(2)\nfor (int i = 0; i < n; ++i) for (int j...)",
    ],
    "opencl": [
        "barrier(CLK_LOCAL_MEM_FENCE);",
        "float s = sub_group_reduce_add(v);",
        "__attribute__((reqd_work_group_size(64, 1, 1))) __kernel void k() {}",
    ],
}

LANGS = ["sycl", "cuda", "cpp", "opencl"]


@pytest.mark.parametrize("lang", LANGS)
def test_naive_kernels_are_level_zero_everywhere(lang):
    assert describe(NAIVE[lang], lang) == Descriptor(0, 0, 0)


@pytest.mark.parametrize(
    ("axis", "table"), [("memory", MEMORY), ("compute", COMPUTE), ("parallelism", PARALLELISM)]
)
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("level", [1, 2, 3])
def test_each_snippet_reaches_its_level(axis, table, lang, level):
    snippet = table[lang][level - 1]
    assert axis_level(snippet, lang, axis) == level, snippet


def test_weak_hints_alone_do_not_raise_a_level():
    assert axis_level("__syncthreads();", "cuda", "memory") == 0  # barrier weight 0.5
    assert axis_level("float* __restrict__ x;", "cuda", "memory") == 0
    padded = "float t[32][32 + 1];\n__syncthreads();"  # two weak level-2 hints add up
    assert axis_level(padded, "cuda", "memory") == 2


def test_comments_do_not_count():
    assert describe("// TODO: use __shared__ and __shfl_down_sync\n", "cuda") == (0, 0, 0)
    assert describe("/* sycl::local_accessor */ int x;", "sycl").memory == 0


def test_candidate_module_with_embedded_sycl_is_detected_automatically():
    module = (
        "from kernelwright.tools.backends import sycl\n"
        'SRC = r"""\n#include <sycl/sycl.hpp>\n'
        "namespace syclexp = sycl::ext::oneapi::experimental;\n"
        'extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))\n'
        "void red(float* x, float* y) { auto it = sycl::ext::oneapi::this_work_item::"
        "get_nd_item<1>();\n auto sg = it.get_sub_group();\n"
        ' float s = sycl::reduce_over_group(sg, x[0], sycl::plus<>()); }\n"""\n'
    )
    assert guess_language(module) == "sycl"
    assert describe(module) == Descriptor(memory=0, compute=2, parallelism=2)


def test_guess_language():
    assert guess_language(NAIVE["cuda"]) == "cuda"
    assert guess_language(NAIVE["opencl"]) == "opencl"
    assert guess_language(NAIVE["cpp"]) == "cpp"


def test_unknown_language_names_the_choices():
    with pytest.raises(ValueError, match="sycl, opencl, cuda, cpp"):
        describe("x", "fortran")


PEAKS = MachinePeaks(bandwidth_gbps=100.0, gflops=1000.0)  # ridge at 10 FLOP/byte


@pytest.mark.parametrize(
    ("gbps", "gflops", "level"),
    [(90.0, 20.0, 0), (80.0, 500.0, 1), (20.0, 400.0, 2), (5.0, 900.0, 3)],
)
def test_measured_bound_buckets_roofline_position(gbps, gflops, level):
    assert measured_bound({"gbps": gbps, "gflops": gflops}, PEAKS) == level


def test_measured_bound_edge_cases():
    assert roofline_ratio({"gbps": 50.0, "gflops": 500.0}, PEAKS) == pytest.approx(1.0)
    assert measured_bound({"gbps": 0.0, "gflops": 0.0}, PEAKS) is None
    assert measured_bound({"gbps": 0.0, "gflops": 1.0}, PEAKS) == 3
    with pytest.raises(ValueError, match="gflops"):
        measured_bound({"gbps": 1.0}, PEAKS)
    assert PEAKS.ridge == 10.0


def test_shared_fragments_online_rescale_tree_loop_register_tile():
    online = "if (v > m) { s = s * sycl::exp(m - v) + 1.0f; m = v; }"
    assert axis_level(online, "sycl", "compute") == 2
    two_pass = "y[j] = sycl::exp(x[j] - m) * inv;"
    assert axis_level(two_pass, "sycl", "compute") == 0
    tree = "for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (t < s) b[t] += b[t + s]; }"
    assert axis_level(tree, "cuda", "compute") == 2
    regs = "float acc[RM][RN];\nfor (int k0 = 0; k0 < K; k0 += TK) {}"
    assert describe(regs, "sycl")[:2] == (3, 0)  # tile loop alone is only half the evidence
    gemm = regs + "\nacc[r][s] = sycl::fma(av[r], bv[s], acc[r][s]);"
    assert describe(gemm, "sycl")[:2] == (3, 3)
