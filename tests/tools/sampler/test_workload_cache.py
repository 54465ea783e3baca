"""Long workloads: '3mm' and 'mm3' are one workload; traces are made once and cached."""

from __future__ import annotations

import pytest

from kernelwright.tools.gpusim.workloads import (
    SAMPLING_SUITE,
    get_workload,
    traced_workload,
    workload_meta,
)
from kernelwright.tools.gpusim.workloads.suite import SUITE_SAMPLING


def test_3mm_alias(tmp_settings):
    def kind(name: str) -> type:
        return type(get_workload(name, settings=tmp_settings))

    assert kind("3mm") is kind("mm3") and kind(" 3MM ") is kind("mm3")
    with pytest.raises(ValueError, match="3mm"):
        get_workload("4mm")


def test_suite_is_long():
    names = {e.name for e in SAMPLING_SUITE}
    assert {"phi2", "qwen15", "pythia", "cfd", "srad", "lud", "gaussian", "bfs", "3mm"} <= names


@pytest.mark.requires_nvcc
def test_traced_once_and_cached(tmp_settings):
    a = traced_workload("3mm", {"size": 16}, SUITE_SAMPLING, settings=tmp_settings)
    stamp = (a / "kernelslist.g").stat().st_mtime_ns
    b = traced_workload("mm3", {"size": 16}, SUITE_SAMPLING, settings=tmp_settings)
    assert a == b and (b / "kernelslist.g").stat().st_mtime_ns == stamp
    meta = workload_meta(a)
    assert meta["launches"] == 3 and meta["params"] == {"size": 16}
    other = traced_workload("3mm", {"size": 32}, SUITE_SAMPLING, settings=tmp_settings)
    assert other != a
    assert sorted(p.name for p in a.glob("kernel-*")) == [
        "kernel-1.traceg.xz", "kernel-2.traceg.xz", "kernel-3.traceg.xz"]
