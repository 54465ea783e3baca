"""Build reuse by content hash: a kernel source a candidate built is compiled again by the
trusted builder right after its evaluation (in the background), so the next candidate with
the same source is not rebuilt, in the same pool and in a new one (the next run); an entry
altered behind the record's back is removed and rebuilt, never loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
from kw_eval_helpers import FAST, candidate, task

from kernelwright.config import Settings
from kernelwright.spec import Candidate
from kernelwright.tools.evaluate import WorkerPool
from kernelwright.tools.evaluate.build_cache import BuildCache

pytestmark = pytest.mark.slow


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(**FAST, data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")


def twin(note: str) -> Candidate:
    """The honest C++ GELU with another Python comment: a new candidate, the same kernel."""
    source = candidate("candidates/gelu_cpp").source
    return Candidate(source=f"# {note}\n{source}", backend="cpp")


def test_the_same_source_is_built_once_within_and_across_runs(settings):
    gelu = task("gelu")
    with WorkerPool(settings) as pool:
        first = pool.evaluate(gelu, twin("first"))
        assert first.correct, first.error
        assert pool.private_builds == 1  # a cold cache: the candidate compiled it
        reports = pool.wait_for_builder(120)
        assert reports and reports[0].get("built") == 1, reports
        second = pool.evaluate(gelu, twin("second"))
        assert second.correct, second.error
        assert pool.private_builds == 1  # served from the shared cache, not rebuilt
    assert BuildCache.of(settings).index  # the builder's entry is in the integrity record
    with WorkerPool(settings) as pool:  # the next run, a new pool over the same cache
        third = pool.evaluate(gelu, twin("third"))
        assert third.correct, third.error
        assert pool.private_builds == 0


def test_an_altered_entry_is_removed_and_rebuilt_not_loaded(settings):
    gelu = task("gelu")
    with WorkerPool(settings) as pool:
        assert pool.evaluate(gelu, twin("first")).correct
        pool.wait_for_builder(120)
    cache = BuildCache.of(settings)
    built = [rel for rel in cache.index if rel.endswith(".so")]
    assert built, cache.index
    entry = Path(settings.cache_dir) / built[0]
    entry.write_bytes(b"\x7fELF altered behind the trusted side's back")
    with WorkerPool(settings) as pool:
        again = pool.evaluate(gelu, twin("after"))
        assert again.correct, again.error
        assert again.observations["build_cache"]["tampered_removed"] == [built[0]]
        assert pool.private_builds == 1  # compiled again from its source
        pool.wait_for_builder(120)
    assert BuildCache.of(settings).check(built[0])  # the trusted builder's copy, recorded
