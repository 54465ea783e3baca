"""The report's charts as inline SVG text, drawn with matplotlib (no pyplot, no global state).

Every function takes summary models and returns one ``<svg>...</svg>`` string, ready to be put
into an HTML page as it is. Labels may come from untrusted runs (task names, candidate ids):
matplotlib escapes text in SVG output, and :func:`label` escapes ``$`` so a label is always drawn
as the literal text it is (never parsed as mathtext).
"""

from __future__ import annotations

import io
import itertools
import math
from collections.abc import Iterator
from contextlib import contextmanager

import matplotlib
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

from kernelwright.graphs.run_summary import ArchiveView, Roofs, RunSummary

_RC = {
    "svg.fonttype": "none",  # text stays text (smaller, selectable); the browser picks the font
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
_ids = itertools.count()


@contextmanager
def _figure(width: float, height: float, ncols: int = 1) -> Iterator[tuple[Figure, list]]:
    """A figure with ``ncols`` axes under the report's style; ids unique within one page."""
    with matplotlib.rc_context({**_RC, "svg.hashsalt": f"kw{next(_ids)}"}):
        fig = Figure(figsize=(width, height), layout="constrained")
        axes = fig.subplots(1, ncols, squeeze=False)[0].tolist()
        yield fig, axes


def _svg(fig: Figure) -> str:
    with matplotlib.rc_context({**_RC, "svg.hashsalt": f"kw{next(_ids)}"}):
        buf = io.StringIO()
        FigureCanvasSVG(fig).print_svg(buf, metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and DOCTYPE for inline use


def label(text: str, limit: int = 40) -> str:
    """A label short enough for a chart legend (the full text stays in the tables)."""
    text = " ".join(text.split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace("$", r"\$")  # a '$' in a task name is text, not mathtext


def speedup_over_time(runs: list[RunSummary]) -> str:
    """Best correct speedup so far against wall-clock time since the first run started, one
    step line per task (dots: every correct candidate). Without dated evaluations the x axis
    is the number of evaluations spent instead."""
    dated = all(c.finished_at is not None for r in runs for c in r.candidates)
    starts = [r.started for r in runs if r.started is not None]
    if not dated or not starts:
        return _speedup_over_evaluations(runs)
    origin = min(starts)
    span = max((c.finished_at for r in runs for c in r.candidates), default=origin) - origin
    unit, scale = ("hours", 3600.0) if span > 2 * 3600 else ("minutes", 60.0)
    if span < 120:
        unit, scale = "seconds", 1.0
    with _figure(10.0, 3.4) as (fig, (ax,)):
        drawn = 0
        for run in runs:
            steps = run.best_over_time()
            if not steps:
                continue
            xs = [(t - origin) / scale for t, _ in steps]
            ys = [s for _, s in steps]
            end = (max(c.finished_at for c in run.candidates) - origin) / scale
            (line,) = ax.step([*xs, end], [*ys, ys[-1]], where="post", label=label(run.task))
            tried = [((c.finished_at - origin) / scale, c.speedup)
                     for c in run.candidates if c.speedup is not None]  # fmt: skip
            ax.scatter(*zip(*tried, strict=True), s=10, alpha=0.35, color=line.get_color())
            drawn += 1
        ax.set_xlim(left=0)
        _finish_progress(ax, drawn, f"{unit} since the first run started")
        return _svg(fig)


def _speedup_over_evaluations(runs: list[RunSummary]) -> str:
    with _figure(10.0, 3.4) as (fig, (ax,)):
        drawn = 0
        for run in runs:
            points = [(n, s) for n, s in run.best_so_far() if s is not None]
            if not points:
                continue
            xs, ys = zip(*points, strict=True)
            (line,) = ax.step(xs, ys, where="post", label=label(run.task))
            tried = [(c.order, c.speedup) for c in run.candidates if c.speedup is not None]
            ax.scatter(*zip(*tried, strict=True), s=10, alpha=0.35, color=line.get_color())
            drawn += 1
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        _finish_progress(ax, drawn, "evaluations spent")
        return _svg(fig)


def _finish_progress(ax, drawn: int, xlabel: str) -> None:
    ax.axhline(1.0, color="0.5", lw=0.8, ls="--")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("speedup over PyTorch eager (x)")
    ax.set_title("best correct speedup so far (dots: every correct candidate)")
    if drawn:
        ax.legend(loc="best", fontsize=7, ncols=2 if drawn > 8 else 1)
    else:
        ax.text(0.5, 0.5, "no correct candidate yet", ha="center", transform=ax.transAxes)


_HEAT = LinearSegmentedColormap.from_list("kw", ["#f4f1de", "#81b29a", "#3d405b"])


def archive_heatmap(archive: ArchiveView, title: str) -> str:
    """The archive as heatmaps: first two axes as the grid, one panel per level of the third.

    A cell shows its elite's speedup (correct) or ``L<level>`` (an incorrect stepping stone);
    colour is the speedup, grey hatching marks incorrect elites, blank cells are empty.
    """
    rows, cols = archive.axes[0], archive.axes[1]
    rest = archive.axes[2:]
    panels = list(itertools.product(range(archive.levels), repeat=len(rest)))
    by_cell = {tuple(c.cell): c for c in archive.cells}
    speeds = [c.speedup for c in archive.cells if c.speedup]
    top = max(speeds) if speeds else 1.0
    n = archive.levels
    with _figure(2.2 * len(panels) + 0.6, 2.6, ncols=len(panels)) as (fig, axes):
        for ax, panel in zip(axes, panels, strict=True):
            grid = [[float("nan")] * n for _ in range(n)]
            for i, j in itertools.product(range(n), range(n)):
                elite = by_cell.get((i, j, *panel))
                if elite is None:
                    continue
                grid[i][j] = elite.speedup if elite.speedup else 0.0
                text = f"{elite.speedup:.2f}x" if elite.speedup else f"L{elite.level}"
                dark = grid[i][j] > 0.55 * top  # light text on the dark end of the colour map
                ax.text(j, i, text, ha="center", va="center", fontsize=7,
                        color="white" if dark else "black")  # fmt: skip
            ax.set_facecolor("0.95")  # empty cells: light grey
            image = ax.imshow(grid, cmap=_HEAT, vmin=0.0, vmax=top, origin="lower")
            ax.set_xticks(range(n))
            ax.set_yticks(range(n))
            ax.set_xlabel(cols)
            ax.set_ylabel(rows)
            ax.set_title(", ".join(f"{a}={v}" for a, v in zip(rest, panel, strict=True)) or "")
        fig.colorbar(image, ax=axes, shrink=0.8, label="speedup (x)")
        fig.suptitle(label(title, 80))
        return _svg(fig)


def roofline_chart(runs: list[RunSummary], roofs: Roofs) -> str:
    """Every timed kernel at (task's FLOP/byte, achieved GFLOP/s) under the known roofs.

    Roofs: ``P(I) = min(FLOP_rate, I * BW)``; a roof no run pinned down is not drawn.
    """
    with _figure(10.0, 3.8) as (fig, (ax,)):
        intensities = [r.intensity for r in runs if r.intensity]
        placed = 0
        for run in runs:
            timed = [c for c in run.candidates if c.achieved_gflops and run.intensity]
            if not timed:
                continue
            ys = [c.achieved_gflops for c in timed]
            xs = [run.intensity] * len(timed)
            ax.scatter(xs, ys, s=14, alpha=0.6, label=label(run.task))
            if run.best and run.best.achieved_gflops:
                ax.scatter([run.intensity], [run.best.achieved_gflops], s=60, marker="*",
                           color="black", zorder=3)  # fmt: skip
            placed += len(timed)
        _draw_roofs(ax, roofs, intensities)
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):  # plain numbers: no mathtext for tick labels
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("arithmetic intensity (FLOP / byte)")
        ax.set_ylabel("achieved GFLOP/s")
        ax.set_title(f"roofline: {placed} timed kernels (star: each task's best)")
        if placed:
            ax.legend(loc="lower right", fontsize=7)
        return _svg(fig)


def _draw_roofs(ax, roofs: Roofs, intensities: list[float]) -> None:
    if not intensities:
        ax.text(0.5, 0.5, "no timed kernel", ha="center", transform=ax.transAxes)
        return
    lo = min(intensities) / 8
    hi = max(intensities) * 8
    if roofs.bandwidth_gbps and roofs.gflops:
        ridge = roofs.gflops / roofs.bandwidth_gbps
        lo, hi = min(lo, ridge / 8), max(hi, ridge * 8)
    xs = [lo * (hi / lo) ** (k / 64) for k in range(65)]
    if roofs.bandwidth_gbps:
        bw = [x * roofs.bandwidth_gbps for x in xs]
        ys = [min(b, roofs.gflops) if roofs.gflops else b for b in bw]
        ax.plot(xs, ys, color="0.3", lw=1.2, label=f"{roofs.bandwidth_gbps:.1f} GB/s")
    if roofs.gflops:
        start = roofs.gflops / roofs.bandwidth_gbps if roofs.bandwidth_gbps else lo
        ax.plot([max(start, lo), hi], [roofs.gflops] * 2, color="0.3", lw=1.2)
        ax.annotate(f"{roofs.gflops:.0f} GFLOP/s", (hi, roofs.gflops), ha="right", va="bottom")
    missing = [n for n, v in (("bandwidth", roofs.bandwidth_gbps), ("compute", roofs.gflops))
               if not v]  # fmt: skip
    if missing:
        ax.text(0.01, 0.98, f"{' and '.join(missing)} roof not pinned down by these runs",
                transform=ax.transAxes, va="top", fontsize=7, color="0.4")  # fmt: skip
    ax.set_xlim(lo, hi)
    finite = [v for v in (roofs.gflops,) if v and math.isfinite(v)]
    if finite:
        ax.set_ylim(top=max(finite) * 2)
