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


def _speed(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.1%}"


def _row(run: RunSummary) -> str:
    b, ev = run.best, run.evidence
    if b is None:
        speed, evidence, roof = "no correct kernel", "-", "-"
    else:
        speed = f"{_speed(b.speedup)} [{_speed(b.speedup_low)}-{_speed(b.speedup_high)}]"
        evidence = (
            f"{len(ev.variants)} variants x seeds, max abs err {ev.max_abs_error:.2g}"
            if ev and ev.max_abs_error is not None
            else f"level {b.level}/5"
        )
        roof = _pct(b.roofline_fraction)
    cells = [
        md_text(run.task), f"`{md_text(run.run_id)}`", md_text(run.status), speed, evidence,
        roof, md_text(run.implementation_space or "-"), md_text(", ".join(run.flags) or "none"),
        f"{len(run.candidates)}",
    ]  # fmt: skip
    return "| " + " | ".join(cells) + " |"


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
        "",
        "| task | run | status | best speedup [spread] | correctness | roofline | space "
        "| flags | evaluations |",
        "|---|---|---|---|---|---|---|---|---|",
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
