"""The report's charts as inline SVG text, drawn with matplotlib (no pyplot, no global state).

Every function takes summary models and returns one ``<svg>...</svg>`` string, ready to be put
into an HTML page as it is. Labels may come from untrusted runs (task names, candidate ids):
matplotlib escapes text in SVG output, and :func:`label` escapes ``$`` so a label is always drawn
as the literal text it is (never parsed as mathtext).
"""

from __future__ import annotations

import io
import itertools
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


WIN, LOSS = "#1a7f37", "#b42318"  # faster than eager / not faster (the page's colours too)


def speedup_over_time(runs: list[RunSummary]) -> str:
    """Best correct speedup so far against wall-clock time since the first run started, one
    step line per task; every correct candidate is a dot with its spread as an error bar,
    green when faster than eager and red when not. Without dated evaluations the x axis is
    the number of evaluations spent instead."""
    dated = all(c.finished_at is not None for r in runs for c in r.candidates)
    starts = [r.started for r in runs if r.started is not None]
    if not dated or not starts:
        return _progress(runs, lambda c: float(c.order), None, "evaluations spent")
    origin = min(starts)
    span = max((c.finished_at for r in runs for c in r.candidates), default=origin) - origin
    unit, scale = ("hours", 3600.0) if span > 2 * 3600 else ("minutes", 60.0)
    if span < 120:
        unit, scale = "seconds", 1.0
    return _progress(runs, lambda c: (c.finished_at - origin) / scale,
                     lambda r: [((t - origin) / scale, s) for t, s in r.best_over_time()],
                     f"{unit} since the first run started")  # fmt: skip


def _progress(runs: list[RunSummary], x_of, steps_of, xlabel: str) -> str:
    with _figure(6.4, 3.6) as (fig, (ax,)):
        drawn = 0
        for run in runs:
            tried = [c for c in run.candidates if c.correct and c.speedup is not None]
            if not tried:
                continue
            if steps_of is None:
                steps = [(float(n), s) for n, s in run.best_so_far() if s is not None]
            else:
                steps = steps_of(run)
            end = max(x_of(c) for c in run.candidates)
            xs, ys = [x for x, _ in steps], [s for _, s in steps]
            (line,) = ax.step([*xs, end], [*ys, ys[-1]], where="post", label=label(run.task))
            for c in tried:
                low, high = c.speedup_low or c.speedup, c.speedup_high or c.speedup
                colour = WIN if c.speedup > 1.0 else LOSS
                spread = [[max(c.speedup - low, 0.0)], [max(high - c.speedup, 0.0)]]
                ax.errorbar([x_of(c)], [c.speedup], yerr=spread, fmt="o", ms=3.5, color=colour,
                            elinewidth=0.9, capsize=2)  # fmt: skip
            compiled = [c.reference_ms / c.compile_ms for c in tried
                        if c.reference_ms and c.compile_ms]  # fmt: skip
            if compiled:
                ax.axhline(sorted(compiled)[len(compiled) // 2], color=line.get_color(), lw=0.9,
                           ls=":", label=label(f"torch.compile: {run.task}"))  # fmt: skip
            drawn += 1
        ax.axhspan(0, 1.0, color=LOSS, alpha=0.06, lw=0)
        ax.axhline(1.0, color="0.4", lw=0.8, ls="--")
        ax.text(0.995, 1.0, "PyTorch eager (1.0x)", transform=ax.get_yaxis_transform(),
                ha="right", va="bottom", fontsize=7, color="0.35")  # fmt: skip
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
        if steps_of is None:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(xlabel)
        ax.set_ylabel("speedup over PyTorch eager (x)")
        ax.set_title("best correct speedup so far; dots: each correct candidate\n"
                     "with its spread (green: faster than eager, red: not)")  # fmt: skip
        if drawn:
            ax.legend(loc="upper left", fontsize=7, ncols=2 if drawn > 8 else 1)
        else:
            ax.text(0.5, 0.5, "no correct candidate yet", ha="center", transform=ax.transAxes)
        return _svg(fig)


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
    """Every timed kernel at (task's FLOP/byte, achieved GFLOP/s) under the measured roofs.

    Roofs: ``P(I) = min(FLOP_rate, I * BW)`` from this machine's measured peaks; without them
    the chart says so and draws none.
    """
    with _figure(6.4, 3.6) as (fig, (ax,)):
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
            eager = [run.flops / (c.reference_ms * 1e-3) / 1e9 for c in timed if c.reference_ms]
            if eager:  # PyTorch eager on the same roofs: the bar a kernel has to clear
                ax.scatter([run.intensity], [sorted(eager)[len(eager) // 2]], s=40, marker="x",
                           color="0.25", zorder=3, label=label(f"PyTorch eager: {run.task}"))
            placed += len(timed)
        ax.set_xscale("log")
        ax.set_yscale("log")
        achieved = [c.achieved_gflops for r in runs for c in r.candidates if c.achieved_gflops]
        achieved += [r.flops / (c.reference_ms * 1e-3) / 1e9 for r in runs if r.flops
                     for c in r.candidates if c.reference_ms]  # fmt: skip
        _draw_roofs(ax, roofs, intensities, achieved)
        for axis in (ax.xaxis, ax.yaxis):  # plain numbers: no mathtext for tick labels
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("arithmetic intensity (FLOP / byte)")
        ax.set_ylabel("achieved GFLOP/s")
        ax.set_title(f"roofline under this machine's measured peaks\n{placed} timed kernels "
                     "(star: each task's best; x: PyTorch eager)")  # fmt: skip
        if placed:
            ax.legend(loc="lower right", fontsize=7)
        return _svg(fig)


def _draw_roofs(ax, roofs: Roofs, intensities: list[float], achieved: list[float]) -> None:
    if not intensities:
        ax.text(0.5, 0.5, "no timed kernel", ha="center", transform=ax.transAxes)
        return
    lo, hi = min(intensities) / 8, max(intensities) * 8
    bw, rate = roofs.bandwidth_gbps, roofs.gflops
    if not (bw and rate):
        ax.text(0.01, 0.98, "no measured peaks: run `kernelwright peaks`",
                transform=ax.transAxes, va="top", fontsize=7, color="0.4")  # fmt: skip
        ax.set_xlim(lo, hi)
        return
    ridge = rate / bw
    lo, hi = min(lo, ridge / 8), max(hi, ridge * 8)
    xs = [lo * (hi / lo) ** (k / 64) for k in range(65)]
    ax.plot(xs, [min(x * bw, rate) for x in xs], color="0.3", lw=1.2)
    ax.set_xlim(lo, hi)
    ax.set_ylim(min([lo * bw, *achieved]) / 2, rate * 8)
    ax.text(0.01, 0.99, f"measured roofs: memory {bw:.1f} GB/s (STREAM),\n"
            f"compute {rate:.1f} GFLOP/s (SGEMM); ridge {ridge:.2g} FLOP/byte",
            transform=ax.transAxes, va="top", fontsize=7, color="0.3")  # fmt: skip
