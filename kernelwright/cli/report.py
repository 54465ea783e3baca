"""`report`: the morning report of one run or a campaign, as self-contained HTML (+ Markdown)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kernelwright.cli._app import StoreOpt, _fail, _settings, app, console
from kernelwright.errors import KernelwrightError


@app.command()
def report(
    run_ids: Annotated[list[str], typer.Argument(help="one run id, or every run of a campaign")],
    html: Annotated[Path, typer.Option("--html", help="HTML file to write")],
    md: Annotated[Path | None, typer.Option("--md", help="Markdown summary to write")] = None,
    store: StoreOpt = None,
) -> None:
    """Write one offline HTML page (tables, charts, best kernels with diffs) over the runs;
    the rooflines use this machine's measured peaks (`kernelwright peaks`)."""
    from kernelwright.graphs.store import RunStore, store_root
    from kernelwright.report.html import write_report
    from kernelwright.tools.peaks import machine_peaks, peaks_dir

    if html.is_dir():
        _fail(IsADirectoryError(f"--html {html} is a directory: name the HTML FILE to write, "
                                "e.g. --html report.html"))  # fmt: skip
    settings = _settings()
    try:
        root = store_root(settings, store)
        for run_id in run_ids:  # an unknown id fails here, before any measuring
            RunStore(root).meta(run_id)
        write_report(root, run_ids, html, md, peaks=machine_peaks(peaks_dir(settings)))
    except KernelwrightError as exc:
        _fail(exc)
    console.print(f"wrote {html}" + (f" and {md}" if md else ""), markup=False, highlight=False)
