"""The CUDA backend: nvcc builds, ptxas statistics, entry names; launches only with a device
or the PTX emulator."""

from __future__ import annotations

import pytest

from kernelwright.errors import BackendUnavailableError
from kernelwright.testing.backend_contract import BackendContract
from kernelwright.tools.backends.cuda import CudaBackend
from kernelwright.tools.ptxas import entry_names, parse_ptxas, source_name

VADD = """
extern "C" __global__ void vadd(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
"""

MIXED = """
extern "C" __global__ void __launch_bounds__(256) tiled(const float* a, float* c) {
  __shared__ float tile[256];
  tile[threadIdx.x] = a[blockIdx.x * 256 + threadIdx.x];
  __syncthreads();
  c[blockIdx.x * 256 + threadIdx.x] = tile[255 - threadIdx.x];
}
__global__ void mangled(float* x, int n) { x[threadIdx.x] *= n; }
"""

SPILLS = """\
ptxas info    : 0 bytes gmem, 64 bytes cmem[3]
ptxas info    : Compiling entry function 'spilly' for 'sm_90'
ptxas info    : Function properties for spilly
    448 bytes stack frame, 1084 bytes spill stores, 1168 bytes spill loads
ptxas info    : Used 24 registers, used 1 barriers, 2048 bytes smem, 360 bytes cmem[0], \
8 bytes cmem[2]
ptxas info    : Compile time = 40.829 ms
ptxas info    : Function properties for _Z6helperf
    16 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Compiling entry function '_Z5plainPfi' for 'sm_90'
ptxas info    : Function properties for _Z5plainPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
"""


class TestCudaBackend(BackendContract):
    backend_name = "cuda"
    vector_add_source = VADD
    pytestmark = pytest.mark.requires_nvcc

    def launch_vector_add(self, module, a, b, out, n, *, wait=True):
        module.vadd(a, b, out, n, grid=((n + 127) // 128,), block=(128,))

    def make_inputs(self, n):
        a, b, out = super().make_inputs(n)
        import torch

        if torch.cuda.is_available():
            return a.cuda(), b.cuda(), out.cuda()
        return a, b, out

    def test_stats_use_source_names(self, backend):
        result = backend.build(self.fresh(MIXED))
        assert result.ok, result.log
        assert set(result.kernels) == {"tiled", "mangled"}
        tiled = result.stats["tiled"]
        assert tiled.shared_bytes == 1024 and tiled.barriers == 1
        assert tiled.registers and tiled.registers > 0
        assert result.stats["mangled"].spill_stores == 0

    def test_cached_build_keeps_the_stats(self, backend):
        source = self.fresh(MIXED)
        first, again = backend.build(source), backend.build(source)
        assert again.cached and again.stats == first.stats

    def test_arch_comes_from_settings(self, tmp_settings):
        backend = CudaBackend(tmp_settings.model_copy(update={"cuda_arch": "sm_80"}))
        cmd = backend.commands("k.cu", [])["cubin"]("k.cubin")
        assert "-arch=sm_80" in cmd and "-Xptxas" in cmd


def test_parse_hand_written_spills():
    stats = parse_ptxas(SPILLS)
    assert set(stats) == {"spilly", "_Z5plainPfi"}  # the device function is not an entry
    spilly = stats["spilly"]
    assert (spilly.registers, spilly.spill_stores, spilly.spill_loads) == (24, 1084, 1168)
    assert (spilly.stack_bytes, spilly.shared_bytes, spilly.barriers) == (448, 2048, 1)
    assert spilly.const_bytes == 368
    assert stats["_Z5plainPfi"].registers == 10 and stats["_Z5plainPfi"].const_bytes is None


@pytest.mark.parametrize(
    ("entry", "name"),
    [("vadd", "vadd"), ("_Z5plainPfi", "plain"), ("_Z4tmplILi3EEvPf", "tmpl"),
     ("_ZN2ns3fooEv", "foo"), ("_ZN2ns3fooILi3EEEvPf", "foo")],
)
def test_source_name(entry, name):
    assert source_name(entry) == name


def test_colliding_names_keep_the_mangled_entry():
    names = entry_names(["_Z1kPf", "_Z1kPd", "_Z1gv"])
    assert names == {"_Z1kPf": "_Z1kPf", "_Z1kPd": "_Z1kPd", "_Z1gv": "g"}


def test_no_device_and_no_emulator_is_a_clear_error(tmp_settings, monkeypatch):
    from kernelwright.tools.backends import _cuda_run

    def missing():
        raise BackendUnavailableError("no CUDA device on this machine and the PTX emulator ...")

    monkeypatch.setattr(_cuda_run, "cuda_device", lambda: None)
    monkeypatch.setattr(_cuda_run, "emulator", missing)
    monkeypatch.setattr("kernelwright.tools.backends.cuda.cuda_device", lambda: None)
    monkeypatch.setattr("kernelwright.tools.backends.cuda.emulator_available", lambda: False)
    backend = CudaBackend(tmp_settings)
    status = backend.status()
    assert status.can_compile is (status.version is not None)
    assert not status.can_run and "no device" in status.detail and status.fix


@pytest.mark.requires_nvcc
@pytest.mark.slow
def test_load_without_device_or_emulator_raises_with_the_fix(tmp_settings, monkeypatch):
    monkeypatch.setattr("kernelwright.tools.backends.cuda.cuda_device", lambda: None)
    monkeypatch.setitem(__import__("sys").modules, "kernelwright.tools.gpusim.launch", None)
    monkeypatch.delattr("kernelwright.tools.gpusim.launch", raising=False)
    backend = CudaBackend(tmp_settings)
    with pytest.raises(BackendUnavailableError, match="no CUDA device"):
        backend.load_inline(VADD)


def test_the_emulator_setting_keeps_kernels_off_a_present_gpu(tmp_settings, monkeypatch):
    monkeypatch.setattr("kernelwright.tools.backends.cuda.cuda_device", lambda: "NVIDIA H200")
    on_gpu = CudaBackend(tmp_settings)
    assert not on_gpu.emulated and on_gpu.status().device == "NVIDIA H200"
    emulated = CudaBackend(tmp_settings.model_copy(update={"cuda_emulator": True}))
    assert emulated.emulated
    assert emulated.status().device == "PTX emulator (CPU)"


@pytest.mark.requires_nvcc
def test_the_emulator_setting_runs_cpu_tensors_beside_a_gpu(tmp_settings, monkeypatch):
    import torch

    monkeypatch.setattr("kernelwright.tools.backends.cuda.cuda_device", lambda: "NVIDIA H200")
    backend = CudaBackend(tmp_settings.model_copy(update={"cuda_emulator": True}))
    module = backend.load_inline(VADD)
    a, b, out = torch.randn(300), torch.randn(300), torch.zeros(300)
    module.vadd(a, b, out, 300, grid=(3,), block=(128,))  # CuPy would refuse CPU tensors
    torch.testing.assert_close(out, a + b)
