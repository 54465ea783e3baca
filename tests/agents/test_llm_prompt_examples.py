"""The code the prompts show the model must itself build and run (guards against prompt drift)."""

from __future__ import annotations

import pytest

from kernelwright.prompts import code_blocks, render

LAUNCH = {
    "sycl": {"global_size": (1024,), "local_size": (64,)},
    "cuda": {"grid": (16, 1, 1), "block": (64, 1, 1), "shared_mem": 0},
    "cpp": {},
}


@pytest.mark.parametrize(
    "backend",
    [
        pytest.param("sycl", marks=pytest.mark.requires_sycl),
        pytest.param("cuda", marks=pytest.mark.requires_nvcc),
        "cpp",
    ],
)
def test_example_kernel_in_the_prompt_builds_and_runs(backend):
    import importlib

    import torch

    text = render(f"_lang_{backend}.j2")
    [example] = [b.text for b in code_blocks(text) if b.language in ("cpp", "cuda")]
    assert f"{backend}.load_inline(SRC)" in text and "scale(x, y, 2.0" in text
    module = importlib.import_module(f"kernelwright.tools.backends.{backend}")
    kern = module.load_inline(example)
    x = torch.randn(1000)
    y = torch.empty_like(x)
    kern.scale(x, y, 2.0, 1000, **LAUNCH[backend])  # called as the prompt says
    assert torch.allclose(y, 2 * x)

LOCAL = "static syclexp::work_group_static<float[256]> tile;"
REDUCE = "sycl::reduce_over_group(it.get_sub_group(), v, sycl::plus<float>())"

ROWSUM = r"""
#include <sycl/sycl.hpp>
namespace syclexp = sycl::ext::oneapi::experimental;
extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void rowsum(const float* x, float* y, int cols) {
    auto it = sycl::ext::oneapi::this_work_item::get_nd_item<1>();
    LOCAL
    auto sg = it.get_sub_group();
    size_t row = it.get_group(0), l = it.get_local_id(0);
    float v = 0.0f;
    for (size_t j = l; j < (size_t)cols; j += it.get_local_range(0)) v += x[row * cols + j];
    v = REDUCE;
    if (sg.get_local_id()[0] == 0) tile[sg.get_group_id()[0]] = v;
    sycl::group_barrier(it.get_group());
    if (l == 0) {
        float s = 0.0f;
        for (size_t g = 0; g < sg.get_group_range()[0]; ++g) s += tile[g];
        y[row] = s;
    }
}
"""


@pytest.mark.requires_sycl
def test_sycl_local_memory_and_reduction_advice_builds_and_runs():
    import torch

    from kernelwright.tools.backends import sycl

    text = render("_lang_sycl.j2")
    assert LOCAL in text and REDUCE in text
    kern = sycl.load_inline(ROWSUM.replace("LOCAL", LOCAL).replace("REDUCE", REDUCE))
    x = torch.randn(8, 300)
    y = torch.empty(8)
    kern.rowsum(x, y, 300, global_size=(8 * 64,), local_size=(64,))
    assert torch.allclose(y, x.sum(1), atol=1e-4)
