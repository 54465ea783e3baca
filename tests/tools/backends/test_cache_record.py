"""A trusted process never loads a cached C++ library the integrity record does not vouch
for: an altered or unrecorded entry is rebuilt."""

import shutil
from pathlib import Path

import pytest

from kernelwright.config import Settings
from kernelwright.tools.backends.cache_record import SANDBOXED_ENV
from kernelwright.tools.backends.cpp import CppBackend
from kernelwright.tools.backends.sycl_env import sycl_cache_name

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


def test_seal_tree_keeps_only_what_the_record_vouches_for(tmp_path, monkeypatch):
    from kernelwright.tools.backends.cache_record import BuildCache, record_tree, seal_tree

    monkeypatch.delenv(SANDBOXED_ENV, raising=False)
    settings = Settings(cache_dir=tmp_path / "cache", data_dir=tmp_path / "data")
    folder = tmp_path / "cache" / "sycl" / "ext_kernel_compiler" / "k"
    folder.mkdir(parents=True)
    (folder / "honest.bin").write_bytes(b"honest")
    (folder / "altered.bin").write_bytes(b"before")
    (tmp_path / "cache" / "builds").mkdir()
    (tmp_path / "cache" / "builds" / "other.so").write_bytes(b"not sealed here")
    assert record_tree(tmp_path / "cache" / "sycl", settings) == 2
    (folder / "altered.bin").write_bytes(b"after!")
    (folder / "planted.bin").write_bytes(b"never recorded")
    removed = seal_tree(tmp_path / "cache" / "sycl", settings)
    assert sorted(removed) == ["sycl/ext_kernel_compiler/k/altered.bin",
                               "sycl/ext_kernel_compiler/k/planted.bin"]
    assert sorted(p.name for p in folder.iterdir()) == ["honest.bin"]
    assert (tmp_path / "cache" / "builds" / "other.so").exists()  # outside the folder
    assert list(BuildCache.of(settings).index) == ["sycl/ext_kernel_compiler/k/honest.bin"]
    monkeypatch.setenv(SANDBOXED_ENV, "1")  # in a sandbox the record is out of reach
    (folder / "planted.bin").write_bytes(b"again")
    assert seal_tree(tmp_path / "cache" / "sycl", settings) == []
    assert (folder / "planted.bin").exists()


SYCL_BUILD = """
import json, sys
from pathlib import Path
import torch
from kernelwright.config import Settings
from kernelwright.tools.backends.sycl import SyclBackend
root, op = Path(sys.argv[1]), sys.argv[2]
backend = SyclBackend(Settings(cache_dir=root / "cache", data_dir=root / "data"))
build = backend.build('''
#include <sycl/sycl.hpp>
namespace syclexp = sycl::ext::oneapi::experimental;
extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<1>))
void vadd(const float* a, const float* b, float* out, int n) {
  size_t i = sycl::ext::oneapi::this_work_item::get_nd_item<1>().get_global_id(0);
  if (i < (size_t)n) out[i] = a[i] @OP@ b[i];
}
'''.replace("@OP@", op))
a = torch.arange(64, dtype=torch.float32)
out = torch.zeros(64)
backend.load(build).vadd(a, a, out, 64, global_size=(64,), local_size=(64,))
print(json.dumps({"cached": build.cached, "right": bool(torch.equal(out, 2 * a))}))
"""


@pytest.mark.requires_sycl
def test_one_cache_serves_each_target_isa_in_turn(tmp_path):
    """SYCL's cache does not key its binaries on the OpenCL CPU compiler's target ISA: a
    kernel built for AVX-512 (skx) and loaded under core-avx2 fails to build (the runtime's
    UR_RESULT_ERROR_INVALID_BINARY). Each setting has a cache directory of its own, so the
    same cache serves both in turn."""
    import json
    import os
    import subprocess
    import sys

    from kernelwright.tools.backends.sycl_env import TARGET_ARCH

    flags = Path("/proc/cpuinfo").read_text()
    if "avx2" not in flags:
        pytest.skip("needs a CPU with AVX2 to build for two ISAs")
    wide = "skx" if "avx512f" in flags else "corei7"  # the failure above needs AVX-512
    base = {k: v for k, v in os.environ.items()
            if k not in (SANDBOXED_ENV, "SYCL_CACHE_DIR", TARGET_ARCH)}
    runs = []
    for arch in (wide, "core-avx2", wide):
        out = subprocess.run([sys.executable, "-c", SYCL_BUILD, str(tmp_path), "+"],
                             env=base | {TARGET_ARCH: arch}, capture_output=True, text=True,
                             timeout=300, check=False)
        assert out.returncode == 0, out.stderr[-2000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert all(r["right"] for r in runs), runs
    assert sorted(p.name for p in (tmp_path / "cache").glob("sycl-isa-*")) == [
        "sycl-isa-core-avx2", f"sycl-isa-{wide}"]


def _sycl_build(root, op: str = "+") -> dict:
    """Run ``SYCL_BUILD`` in a trusted process (no sandbox marker) with its cache under
    ``root``: ``{"cached", "right"}``."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in (SANDBOXED_ENV, "SYCL_CACHE_DIR")}
    out = subprocess.run([sys.executable, "-c", SYCL_BUILD, str(root), op], env=env,
                         capture_output=True, text=True, timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.requires_sycl
def test_the_sycl_runtime_reads_no_cache_entry_the_record_does_not_vouch_for(tmp_path):
    """The runtime reads its own kernel cache with no check of ours: a trusted process clears
    swapped and planted entries there before the runtime may read them."""
    build = _sycl_build

    def binaries(root):
        return sorted((tmp_path / root / "cache" / sycl_cache_name()).rglob("*.bin"),
                      key=lambda p: p.name)

    assert build(tmp_path / "honest") == {"cached": False, "right": True}
    assert build(tmp_path / "evil", "-") == {"cached": False, "right": False}
    honest = binaries("honest")
    assert [p.name for p in honest] == [p.name for p in binaries("evil")]
    for mine, theirs in zip(honest, binaries("evil"), strict=True):
        mine.write_bytes(theirs.read_bytes())  # a - b swapped in behind the trusted side's back
    for kept in (tmp_path / "honest" / "cache" / "builds").glob("sycl-*.clbin"):
        kept.unlink()  # kernelwright's own copy of the binary: the runtime's cache is read now
    planted = honest[0].with_name("planted.bin")
    planted.write_bytes(b"evil")
    assert build(tmp_path / "honest")["right"]  # rebuilt, not read
    assert not planted.exists()
    assert build(tmp_path / "honest") == {"cached": True, "right": True}  # recorded again


@pytest.mark.requires_sycl
def test_a_kept_sycl_binary_is_loaded_only_while_its_record_vouches_for_it(tmp_path):
    """A build's device binary is kept beside the C++ builds and served on the next build of
    the source, unless it changed behind the record's back: then it is removed and rebuilt."""
    build = _sycl_build

    def kept(root):
        return sorted((tmp_path / root / "cache" / "builds").glob("sycl-*.clbin"))

    assert build(tmp_path / "honest") == {"cached": False, "right": True}
    assert build(tmp_path / "evil", "-")["right"] is False
    [mine], [theirs] = kept("honest"), kept("evil")
    assert mine.read_bytes().startswith(b"KWCLBIN1")
    assert build(tmp_path / "honest") == {"cached": True, "right": True}  # served from it
    mine.write_bytes(theirs.read_bytes())  # a - b binary under the honest source's name
    assert build(tmp_path / "honest")["right"]
    assert mine.read_bytes() != theirs.read_bytes()  # removed, and kept again when rebuilt
    assert build(tmp_path / "honest") == {"cached": True, "right": True}


def _record_many(settings, names):
    from kernelwright.tools.backends.cache_record import record_file

    for name in names:
        path = settings.cache_dir / "builds" / name
        path.write_bytes(name.encode())
        record_file(path, settings)


def test_processes_recording_at_once_lose_no_entry(tmp_path, monkeypatch):
    """A campaign's workers share one record: each records its builds on top of the others'."""
    import multiprocessing

    from kernelwright.tools.backends.cache_record import BuildCache

    monkeypatch.delenv(SANDBOXED_ENV, raising=False)
    settings = Settings(cache_dir=tmp_path / "cache", data_dir=tmp_path / "data")
    (tmp_path / "cache" / "builds").mkdir(parents=True)
    ctx = multiprocessing.get_context("fork")
    names = [[f"w{w}-{i}.so" for i in range(25)] for w in range(4)]
    procs = [ctx.Process(target=_record_many, args=(settings, part)) for part in names]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    index = BuildCache.of(settings).index
    assert sorted(index) == sorted(f"builds/{n}" for part in names for n in part)


def test_workers_preparing_the_shim_at_once_build_it_once(tmp_path, monkeypatch):
    """Two pools preparing one cache: the second waits for the first and finds its library,
    instead of removing it mid-build (the campaign failure this guards against)."""
    import threading
    import time

    from kernelwright.tools.backends.sycl import shim_file
    from kernelwright.tools.evaluate import builder

    monkeypatch.delenv(SANDBOXED_ENV, raising=False)
    settings = Settings(cache_dir=tmp_path / "cache", data_dir=tmp_path / "data")
    target = shim_file(settings)
    builds = []

    def slow_promote(requests, settings, bwrap, timeout_s):
        builds.append(requests)
        time.sleep(0.3)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"shim")
        return {"built": 1}

    monkeypatch.setattr(builder, "promote", slow_promote)
    errors = []

    def prepare():
        try:
            builder.prepare(settings, None, 10.0)
        except Exception as exc:  # the assertion below names it
            errors.append(exc)

    threads = [threading.Thread(target=prepare) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == [] and len(builds) == 1 and target.read_bytes() == b"shim"
