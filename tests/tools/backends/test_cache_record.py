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
