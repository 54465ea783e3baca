"""A trusted process never loads a cached C++ library the integrity record does not vouch
for: an altered or unrecorded entry is rebuilt."""

import shutil

import pytest

from kernelwright.config import Settings
from kernelwright.tools.backends.cache_record import SANDBOXED_ENV
from kernelwright.tools.backends.cpp import CppBackend

SRC = 'extern "C" int answer() { return 42; }\n'


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_an_altered_cached_library_is_rebuilt_not_loaded(tmp_path, monkeypatch):
    monkeypatch.delenv(SANDBOXED_ENV, raising=False)
    settings = Settings(cache_dir=tmp_path / "cache", data_dir=tmp_path / "data")
    first = CppBackend(settings).build(SRC)
    assert first.ok and not first.cached
    assert CppBackend(settings).build(SRC).cached  # recorded: served from the cache
    lib = tmp_path / "cache" / "builds" / f"cpp-{first.source_hash}.so"
    good = lib.read_bytes()
    lib.write_bytes(good[:-16] + b"\0" * 16)  # altered behind the trusted side's back
    again = CppBackend(settings).build(SRC)
    assert again.ok and not again.cached and lib.read_bytes() == good


CUDA_SRC = 'extern "C" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }\n'


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.parametrize("suffix", [".ptx", ".cubin"])
def test_an_altered_cached_cuda_binary_is_rebuilt_not_loaded(tmp_path, monkeypatch, suffix):
    from kernelwright.tools.backends.cuda import CudaBackend

    monkeypatch.delenv(SANDBOXED_ENV, raising=False)
    settings = Settings(cache_dir=tmp_path / "cache", data_dir=tmp_path / "data")
    first = CudaBackend(settings).build(CUDA_SRC)
    assert first.ok and not first.cached, first.log
    assert CudaBackend(settings).build(CUDA_SRC).cached
    target = (tmp_path / "cache" / "builds" / f"cuda-{first.source_hash}").with_suffix(suffix)
    good = target.read_bytes()
    target.write_bytes(good.replace(b"twice", b"twicf"))  # a kernel swapped behind our back
    assert target.read_bytes() != good
    again = CudaBackend(settings).build(CUDA_SRC)
    assert again.ok and not again.cached and target.read_bytes() == good
