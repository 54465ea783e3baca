"""The morning report: one self-contained HTML file over one run or a whole campaign.

The page has no scripts and loads nothing: styles are inline, charts are inline SVG drawn by
matplotlib (:mod:`kernelwright.report.plots`), and a Content-Security-Policy forbids every
external or script resource, so it opens offline and a hostile string in a run cannot run code.
Every text that comes from a run (task names, candidate sources, errors, LLM output) is escaped
by Jinja2's autoescaping; only the SVG produced here is inserted as markup.

Example:
    >>> write_report(store_root, ["run-1", "run-2"], Path("report.html"))  # doctest: +SKIP
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from kernelwright.graphs.run_summary import ReportData, build_report_data
from kernelwright.report import plots
from kernelwright.report.markdown import VERDICT_WORDS, ms_text, render_markdown
from kernelwright.spec.peaks import MachinePeaks

TEMPLATES = Path(__file__).parent / "templates"


def write_report(
    store_root: Path,
    run_ids: list[str],
    html_path: Path,
    md_path: Path | None = None,
    peaks: MachinePeaks | None = None,
) -> None:
    """Write the HTML report of ``run_ids`` (and a Markdown summary when ``md_path`` is given),
    with rooflines under this machine's measured ``peaks`` (``kernelwright.tools.peaks``).

    Raises ``RunStoreError`` (naming the fix) when a run id is not in ``store_root``.
    """
    data = build_report_data(store_root, run_ids, peaks)
    html_path = Path(html_path)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    html_path.write_text(render_html(data), encoding="utf-8")
    if md_path is not None:
        md_path = Path(md_path)
        md_path.parent.mkdir(parents=True, exist_ok=True)
        md_path.write_text(render_markdown(data), encoding="utf-8")


def render_html(data: ReportData) -> str:
    """The whole page as one string."""
    env = _environment()
    runs = data.runs
    title = runs[0].task if len(runs) == 1 else f"campaign of {len(runs)} tasks"
    charts = {
        "progress": Markup(plots.speedup_over_time(runs)),
        "roofline": Markup(plots.roofline_chart(runs, data.roofs)),
    }
    archives = [
        Markup(plots.archive_heatmap(r.archive, f"{r.task}: elites per cell"))
        if r.archive and r.archive.cells
        else None
        for r in runs
    ]
    return env.get_template("report.html.j2").render(
        data=data,
        title=title,
        charts=charts,
        archive_charts=archives,
        usage=data.usage_totals,
        evaluations=sum(len(r.candidates) for r in runs),
        outcomes=_outcomes(runs),
        over_roof=above_roofs(data),
    )


def above_roofs(data: ReportData) -> list[str]:
    """What ran faster than the measured roofs allow (a kernel or PyTorch eager, by task): a
    sign that the peaks were measured on a busy machine."""
    bw, rate = data.roofs.bandwidth_gbps, data.roofs.gflops
    if not (bw and rate):
        return []
    out = []
    for run in data.runs:
        if not run.intensity or not run.flops:
            continue
        roof = min(run.intensity * bw, rate) * 1.05
        eager = [run.flops / (c.reference_ms * 1e-3) / 1e9 for c in run.candidates
                 if c.reference_ms]  # fmt: skip
        if any(c.achieved_gflops and c.achieved_gflops > roof for c in run.candidates):
            out.append(f"a kernel of {run.task}")
        if eager and max(eager) > roof:
            out.append(f"PyTorch eager on {run.task}")
    return out


def _outcomes(runs) -> list[tuple[str, int]]:
    """How many runs ended with each verdict, in a fixed order, zeros left out."""
    counts = [(v, sum(1 for r in runs if r.outcome == v)) for v in VERDICT_WORDS]
    return [(v, n) for v, n in counts if n]


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html", "j2"], default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        speed=speed_text, pct=percent_text, sci=sci_text, when=time_text, num=number_text,
        diffclass=diff_class, ms=ms_text, speedclass=speed_class,
        verdictwords=VERDICT_WORDS.get, verdictclass=verdict_class,
    )  # fmt: skip
    return env


def speed_text(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.2f}x"


def speed_class(record) -> str:
    """CSS class of a candidate's speedup: green only when faster than eager beyond its spread,
    amber when faster but the spread reaches 1.0x, red when not faster (0.98x is red)."""
    s = getattr(record, "speedup", None)
    if s is None or not math.isfinite(s):
        return ""
    if s <= 1.0:
        return "bad"
    low = getattr(record, "speedup_low", None)
    return "ok" if low is None or low > 1.0 else "warn"


def verdict_class(verdict: str) -> str:
    return "ok" if verdict == "faster" else "bad"


def percent_text(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def sci_text(value: float | None) -> str:
    return "–" if value is None else f"{value:.2g}"


def number_text(value: float | None, unit: str = "") -> str:
    return "not known" if value is None else f"{value:.1f} {unit}".strip()


def time_text(stamp: float | None) -> str:
    if stamp is None:
        return "–"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(stamp))


def diff_class(line: str) -> str:
    """CSS class of one unified-diff line."""
    if line.startswith(("+++", "---")):
        return "hunk"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "")
