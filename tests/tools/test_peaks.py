"""Measured peaks: measured once per machine and runtime key, cached, re-measured on demand."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app
from kernelwright.spec.peaks import MachinePeaks
from kernelwright.tools.peaks import (
    cached_peaks,
    key_name,
    machine_peaks,
    measure_peaks,
    peaks_key,
)

KEY = {"cpu": "Test CPU 9000", "cores": "8", "threads": "8", "torch": "2.9.0", "method": "2"}


class FakeMeasure:
    """Counts calls; each measurement returns a new bandwidth so a re-measure is visible."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, key):
        self.calls += 1
        return MachinePeaks(machine="fake", bandwidth_gbps=10.0 * self.calls, gflops=100.0,
                            key=key, measured_at=1.0)  # fmt: skip


def test_measured_once_then_read_from_the_cache(tmp_path):
    measure = FakeMeasure()
    first = machine_peaks(tmp_path, measure=measure, key=KEY)
    again = machine_peaks(tmp_path, measure=measure, key=KEY)
    assert measure.calls == 1 and again == first and first.bandwidth_gbps == 10.0
    assert (tmp_path / key_name(KEY)).exists() and cached_peaks(tmp_path, KEY) == first


def test_refresh_measures_again_and_replaces_the_entry(tmp_path):
    measure = FakeMeasure()
    machine_peaks(tmp_path, measure=measure, key=KEY)
    fresh = machine_peaks(tmp_path, refresh=True, measure=measure, key=KEY)
    assert measure.calls == 2 and fresh.bandwidth_gbps == 20.0
    assert machine_peaks(tmp_path, measure=measure, key=KEY).bandwidth_gbps == 20.0
    assert measure.calls == 2


def test_another_machine_or_runtime_is_measured_separately(tmp_path):
    measure = FakeMeasure()
    machine_peaks(tmp_path, measure=measure, key=KEY)
    for change in ({"torch": "2.10.0"}, {"cores": "16"}, {"cpu": "Other CPU"}, {"threads": "1"}):
        other = {**KEY, **change}
        assert key_name(other) != key_name(KEY)
        assert cached_peaks(tmp_path, other) is None
        peaks = machine_peaks(tmp_path, measure=measure, key=other)
        assert peaks.key == other
    assert measure.calls == 5
    assert machine_peaks(tmp_path, measure=measure, key=KEY).bandwidth_gbps == 10.0


def test_a_corrupt_or_foreign_entry_is_measured_again(tmp_path):
    measure = FakeMeasure()
    (tmp_path / key_name(KEY)).write_text("{not json")
    assert machine_peaks(tmp_path, measure=measure, key=KEY).bandwidth_gbps == 10.0
    # an entry whose recorded key differs (copied from elsewhere) is not trusted
    foreign = MachinePeaks(bandwidth_gbps=1.0, gflops=1.0, key={**KEY, "cpu": "elsewhere"})
    (tmp_path / key_name(KEY)).write_text(foreign.model_dump_json())
    assert cached_peaks(tmp_path, KEY) is None
    assert machine_peaks(tmp_path, measure=measure, key=KEY).bandwidth_gbps == 20.0


def test_key_names_this_machine_and_runtime():
    import os

    import torch

    key = peaks_key()
    assert key["torch"] == torch.__version__ and key["cores"] == str(os.cpu_count())
    assert key["threads"] == str(torch.get_num_threads()) and key["cpu"]


@pytest.mark.slow
def test_real_measurement_is_plausible():
    # the real measurement (a few seconds): positive, finite, and the roof is the faster one
    peaks = measure_peaks({**KEY})
    assert 0.1 < peaks.triad_gbps < 10_000 and 0.1 < peaks.copy_gbps < 10_000
    assert peaks.bandwidth_gbps == max(peaks.triad_gbps, peaks.copy_gbps)
    assert 0.1 < peaks.gflops == peaks.sgemm_gflops < 1e6 and peaks.method


def test_cli_prints_the_cached_peaks(tmp_path):
    data = tmp_path / "data"
    where = data / "kernelwright" / "peaks"
    fake = {"machine": "cached box", "bandwidth_gbps": 12.5, "gflops": 345.0, "method": "fake"}
    machine_peaks(where, measure=lambda key: MachinePeaks(**fake, key=key))
    env = {"XDG_DATA_HOME": str(data), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    result = CliRunner().invoke(app, ["peaks", "--json"], env=env)
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["bandwidth_gbps"] == 12.5 and shown["gflops"] == 345.0
    text = CliRunner().invoke(app, ["peaks"], env=env).stdout
    assert "12.5 GB/s" in text and "345.0 GFLOP/s" in text and "cached" in text
    assert key_name(peaks_key()) in text
