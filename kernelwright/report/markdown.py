"""The report's Markdown summary: headline numbers, one table row per task, LLM usage.

Text from runs is untrusted: it is escaped so it cannot open links, images, HTML or break the
table (:func:`md_text`), and code goes in a fence longer than any backtick run it contains.
"""

from __future__ import annotations

import re
import time

from kernelwright.graphs.run_summary import ReportData, RunSummary

_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~&])")


def md_text(text: object, limit: int = 200) -> str:
    """``text`` as inert Markdown on one line: every markup character backslash-escaped."""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return _SPECIAL.sub(r"\\\1", flat)


def md_code(source: str, language: str = "") -> str:
    """A fenced code block that ``source`` cannot close early."""
    longest = max((len(m) for m in re.findall(r"`+", source)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{source.rstrip()}\n{fence}"


VERDICT_WORDS = {
    "faster": "faster: use the kernel",
    "keep_pytorch": "keep PyTorch",
    "no_correct_kernel": "no correct kernel",
}


def ms_text(value: float | None) -> str:
    """A median in milliseconds, three significant figures (``–`` when not measured)."""
    if value is None:
        return "–"
    return f"{value:.0f} ms" if value >= 100 else f"{value:.3g} ms"


def _speed(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.1%}"


def _ms(v: float | None) -> str:
    return "-" if v is None else ms_text(v)


def verdict_line(run: RunSummary) -> str:
    """The run's verdict in words, with the figures behind it: ``keep PyTorch (0.38x: eager
    1.20 ms, kernel 3.16 ms)``."""
    words, b = VERDICT_WORDS[run.outcome], run.best
    if b is None:
        return words
    times = [f"{name} {ms_text(v)}" for name, v in
             (("eager", b.reference_ms), ("kernel", b.candidate_ms),
              ("torch.compile", b.compile_ms)) if v is not None]  # fmt: skip
    line = f"{words} ({_speed(b.speedup)}" + (f": {', '.join(times)})" if times else ")")
    ref = run.reference
    if run.answer == "reference" and ref is not None:
        line += f"; answer: the reference itself (framework, {_ms(ref.candidate_ms)})"
    return line


def _row(run: RunSummary) -> str:
    b, ev = run.best, run.evidence
    times = ["-"] * 3
    if b is None:
        speed, evidence, roof = "-", "-", "-"
    else:
        times = [_ms(b.reference_ms), _ms(b.candidate_ms), _ms(b.compile_ms)]
        speed = f"{_speed(b.speedup)} [{_speed(b.speedup_low)}-{_speed(b.speedup_high)}]"
        evidence = (
            f"{len(ev.variants)} variants x seeds, max abs err {ev.max_abs_error:.2g}"
            if ev and ev.max_abs_error is not None
            else f"level {b.level}/5"
        )
        roof = _pct(b.roofline_fraction)
    cells = [
        md_text(run.task), f"`{md_text(run.run_id)}`", md_text(run.status),
        f"**{VERDICT_WORDS[run.outcome]}**", speed, *times, evidence, roof,
        md_text(run.implementation_space or "-"), md_text(", ".join(run.flags) or "none"),
        f"{len(run.candidates)}",
    ]  # fmt: skip
    return "| " + " | ".join(cells) + " |"


def _roofs(data: ReportData) -> str:
    r = data.roofs
    if not (r.bandwidth_gbps and r.gflops):
        return "roofline: no measured peaks (run `kernelwright peaks`)"
    return (
        f"roofs measured on {md_text(r.machine or 'this machine')}: memory "
        f"{r.bandwidth_gbps:.1f} GB/s (STREAM), compute {r.gflops:.1f} GFLOP/s (SGEMM)"
    )


def render_markdown(data: ReportData) -> str:
    """The summary as Markdown text."""
    lines = [
        "# kernelwright report",
        "",
        f"Generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(data.generated))}; "
        f"{len(data.runs)} task(s).",
        "",
        f"- fast_0 (correct): {_pct(data.fast_0)}",
        f"- fast_1 (correct and faster than PyTorch eager): {_pct(data.fast_p(1.0))}",
        f"- geometric mean speedup over correct tasks: {_speed(data.geomean_speedup)}",
        f"- evaluations: {sum(len(r.candidates) for r in data.runs)}",
        f"- {_roofs(data)}",
        "",
        *(f"- {md_text(r.task)}: **{verdict_line(r)}**" for r in data.runs),
        "",
        "| task | run | status | verdict | best speedup [spread] | PyTorch eager | kernel "
        "| torch.compile | correctness | roofline | space | flags | evaluations |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *(_row(r) for r in data.runs),
        "",
        "## LLM tokens and cost per agent",
        "",
    ]
    usage = data.usage_totals
    if not usage:
        lines.append("No LLM was used (offline policies).")
    else:
        lines += ["| agent | calls | input tokens | output tokens | cost (USD) |"]
        lines += ["|" + "---|" * 5]
        for u in usage:
            cost = "unknown price" if u.cost_usd is None else f"{u.cost_usd:.4f}"
            lines.append(
                f"| {md_text(u.agent)} | {u.calls} | {u.input_tokens} | {u.output_tokens} "
                f"| {cost} |"
            )
    for run in data.runs:
        if run.best_source is not None:
            lines += ["", f"## Best kernel of {md_text(run.task)}", ""]
            lines.append(f"Candidate `{md_text(run.best_source.candidate_id)}`.")
            if run.best_source.diff:
                lines += [
                    f"Diff against its {run.best_source.against}:", "",
                    md_code("\n".join(run.best_source.diff), "diff"),
                ]  # fmt: skip
    return "\n".join(lines) + "\n"
