"""`peaks`: this machine's measured roofs (bandwidth, FLOP rate), measured once and cached."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from kernelwright.cli._app import JsonOpt, _settings, app, console


@app.command()
def peaks(
    refresh: Annotated[
        bool, typer.Option("--refresh", help="measure again and replace the cached figures")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Print this machine's peak memory bandwidth and FLOP rate, the roofs of every roofline
    (the profiler's and the report's); measured on first use (a few seconds) and cached per
    CPU, core count, threads and torch version."""
    from kernelwright.tools.peaks import cached_peaks, key_name, machine_peaks, peaks_dir

    where = peaks_dir(_settings())
    fresh = refresh or cached_peaks(where) is None
    if fresh and not json_out:
        console.print("measuring (STREAM triad and copy, SGEMM; a few seconds)...")
    found = machine_peaks(where, refresh=refresh)
    if json_out:
        print(found.model_dump_json())
        return
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(found.measured_at or 0))
    rows = [
        ("machine", found.machine),
        ("bandwidth roof", f"{found.bandwidth_gbps:.1f} GB/s"),
        ("  STREAM triad", _num(found.triad_gbps, "GB/s")),
        ("  STREAM copy", _num(found.copy_gbps, "GB/s")),
        ("compute roof", f"{found.gflops:.1f} GFLOP/s (fp32 SGEMM through torch)"),
        ("ridge point", f"{found.ridge:.2f} FLOP/byte"),
        ("measured", f"{when} ({'just now' if fresh else 'cached; --refresh measures again'})"),
        ("method", found.method or "-"),
        ("cache file", str(where / key_name(found.key))),
    ]
    for name, value in rows:
        console.print(f"{name:<16} {value}", markup=False, highlight=False, soft_wrap=True)


def _num(value: float | None, unit: str) -> str:
    return "-" if value is None else f"{value:.1f} {unit}"
