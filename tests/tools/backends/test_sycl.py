"""The SYCL backend on the Intel OpenCL CPU device: the contract for SYCL-RTC and OpenCL C,
plus launch ranges, zero copy and the shared-USM fallback."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kernelwright.errors import LaunchError
from kernelwright.testing.backend_contract import BackendContract, contract_cache_root
from kernelwright.tools.backends.sycl import SyclBackend

pytestmark = pytest.mark.requires_sycl

VADD = """
#include <sycl/sycl.hpp>
namespace syclexp = sycl::ext::oneapi::experimental;
extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void vadd(const float* a, const float* b, float* out, int n) {
  size_t i = sycl::ext::oneapi::this_work_item::get_nd_item<1>().get_global_id(0);
  if (i < (size_t)n) out[i] = a[i] + b[i];
}
"""

FILL2D = """
#include <sycl/sycl.hpp>
namespace syclexp = sycl::ext::oneapi::experimental;
extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<2>))
void fill2d(int* out, int cols, long offset) {
  auto it = sycl::ext::oneapi::this_work_item::get_nd_item<2>();
  size_t r = it.get_global_id(0), c = it.get_global_id(1);
  out[r * cols + c] = (int)(r * 1000 + c + offset);
}
"""

OPENCL_VADD = """
__kernel void vadd(__global const float* a, __global const float* b, __global float* out,
                   int n) {
  int i = get_global_id(0);
  if (i < n) out[i] = a[i] + b[i];
}
"""


def _groups(n: int, local: int = 64) -> tuple[int]:
    return ((n + local - 1) // local * local,)


class TestSyclBackend(BackendContract):
    backend_name = "sycl"
    vector_add_source = VADD

    def launch_vector_add(self, module, a, b, out, n, *, wait=True):
        module.vadd(a, b, out, n, global_size=_groups(n), local_size=(64,), wait=wait)

    def test_compile_error_names_file_line_and_column(self, backend, broken):
        result = backend.build(broken)
        assert result.language == "sycl"
        assert f"error: use of undeclared identifier '{self.undeclared_name}'" in result.log

    def test_two_dimensional_launch_and_int64_scalar(self, backend):
        fill = backend.load_inline(FILL2D).fill2d
        out = torch.zeros(4, 8, dtype=torch.int32)
        fill(out, 8, np.int64(5), global_size=(4, 8), local_size=(2, 4))
        expected = torch.arange(4)[:, None] * 1000 + torch.arange(8)[None, :] + 5
        assert torch.equal(out, expected.to(torch.int32))

    def test_runtime_picks_the_local_size_when_omitted(self, module):
        a, b, out = self.make_inputs(1024)
        module.vadd(a, b, out, 1024, global_size=(1024,))
        assert torch.equal(out, a + b)

    def test_numpy_arrays_pass_without_copies(self, module):
        a = np.arange(256, dtype=np.float32)
        out = np.zeros(256, dtype=np.float32)
        module.vadd(a, a, out, 256, global_size=(256,), local_size=(64,))
        assert np.array_equal(out, 2 * a)

    def test_profiled_kernel_time_is_recorded(self, module):
        a, b, out = self.make_inputs(N := 4096)
        module.vadd(a, b, out, N, global_size=(N,), local_size=(64,))
        assert isinstance(module.vadd.last_ns, int) and module.vadd.last_ns > 0

    def test_wrong_argument_count_is_a_launch_error(self, module):
        a, b, out = self.make_inputs(64)
        with pytest.raises(LaunchError, match="vadd takes 4 arguments, got 3"):
            module.vadd(a, b, out, global_size=(64,))

    def test_bad_ranges_are_launch_errors(self, module):
        a, b, out = self.make_inputs(64)
        with pytest.raises(LaunchError, match="global_size"):
            module.vadd(a, b, out, 64)
        with pytest.raises(LaunchError, match="differ"):
            module.vadd(a, b, out, 64, global_size=(64,), local_size=(8, 8))
        with pytest.raises(LaunchError, match="launching vadd failed"):
            module.vadd(a, b, out, 64, global_size=(65536,), local_size=(65536,))

    def test_status_reports_device_and_runtime(self, backend):
        status = backend.status()
        assert status.usable and status.fix is None
        assert "sycl-rt" in (status.version or "") and "zero-copy" in status.detail


class TestOpenCLOnSyclBackend(BackendContract):
    backend_name = "sycl"
    language = "opencl"
    vector_add_source = OPENCL_VADD
    nonce_template = "__constant int kw_contract_nonce_{hex} = 0;"

    def launch_vector_add(self, module, a, b, out, n, *, wait=True):
        module.vadd(a, b, out, n, global_size=_groups(n), local_size=(64,), wait=wait)

    def test_language_is_detected_from_the_source(self, backend):
        assert backend.build(OPENCL_VADD).language == "opencl"


def test_shared_usm_fallback_copies_back(tmp_path_factory):
    from kernelwright.config import Settings

    root = contract_cache_root(tmp_path_factory)  # reuses the contract's shim build
    backend = SyclBackend(Settings(cache_dir=root / "cache"), zero_copy=False)
    module = backend.load_inline(VADD)
    a, b = torch.randn(1000), torch.randn(1000)
    out = torch.full((1000,), float("nan"))
    module.vadd(a, b, out, 1000, global_size=_groups(1000), local_size=(64,))
    assert torch.equal(out, a + b)
    assert "copied" in backend.status().detail


def test_module_level_load_inline_uses_the_process_backend():
    from kernelwright.tools.backends import active_registry, sycl

    module = sycl.load_inline(VADD)
    assert module.build.backend == "sycl"
    assert sycl.load_inline(VADD) is module  # the in-process cache hands back the same module
    sycl.synchronize()
    assert active_registry().get("sycl").build(VADD).cached
    assert "sycl" in active_registry().used()
