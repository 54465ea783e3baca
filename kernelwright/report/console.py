"""Rich renderings for the CLI: verdicts, tables, run reports. Nothing here computes results."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kernelwright.spec.result import verdict_for
from kernelwright.spec.text import terminal_safe


def speedup_text(speedup: float | None, low: float | None, high: float | None) -> str:
    if speedup is None:
        return "-"
    if low is None or high is None:
        return f"{speedup:.2f}x"
    return f"{speedup:.2f}x [{low:.2f}-{high:.2f}]"


def verdict_text(summary: dict[str, Any]) -> str:
    if summary["correct"]:
        return "[green]correct[/green]"
    return f"[red]{summary['level_name']}[/red]"


def print_eval(console: Console, summary: dict[str, Any]) -> None:
    """One candidate's verdict, per-variant max error, speedup with spread and flags.

    Task names, candidate ids and error text may come from untrusted files or candidate
    output: they are printed as plain ``Text``, never parsed as markup."""
    head = Text()
    head.append(terminal_safe(summary["task"]), style="bold")
    head.append(terminal_safe(f" candidate {summary['candidate']} on {summary['backend']} "
                              f"({summary.get('device') or 'unknown device'})"))
    console.print(head)
    verdict = Text("verdict: ")
    verdict.append_text(Text.from_markup(verdict_text(summary)))
    verdict.append(f" (level {summary['level']}/5)")
    console.print(verdict)
    table = Table("variant", "max abs error")
    for variant, err in summary["max_error"].items():
        table.add_row(Text(str(variant)), "-" if err is None else f"{err:.3g}")
    console.print(table)
    console.print(Text("speedup over PyTorch eager: " + speedup_text(
        summary["speedup"], summary["speedup_low"], summary["speedup_high"])))
    if summary.get("reference_ms") is not None:
        from kernelwright.spec.figures import compile_sentence, medians_text

        console.print(Text("medians: " + medians_text(summary["reference_ms"],
                                                      summary["candidate_ms"])))
        comp = compile_sentence(summary.get("compile_ms"), summary["candidate_ms"],
                                summary.get("compile_recompiles"))
        if comp:
            console.print(Text(comp))
        if summary.get("verdict") == "keep_pytorch":
            console.print(Text(f"keep PyTorch ({summary['speedup']:.2f}x): this kernel is not "
                               "faster than PyTorch eager", style="bold red"))
    if summary["flags"]:
        console.print(Text(f"flags: {', '.join(summary['flags'])}", style="yellow"))
    if summary["error"]:
        console.print(Text("error: ", style="red") + Text(terminal_safe(summary["error"])[:4000]))


def eval_table(rows: list[dict[str, Any]]) -> Table:
    """One row per (task, candidate) evaluation."""
    table = Table(
        "task",
        "candidate",
        "verdict",
        "max error",
        "speedup [IQR]",
        "flags",
        title="Example candidates on the embedded default (SYCL CPU device)",
    )
    for s in rows:
        errors = [e for e in s["max_error"].values() if e is not None]
        table.add_row(
            s["task"],
            s.get("name", s["candidate"]),
            verdict_text(s),
            f"{max(errors):.2g}" if errors else "-",
            speedup_text(s["speedup"], s["speedup_low"], s["speedup_high"]),
            ", ".join(s["flags"]) or "",
        )
    return table


def status_table(statuses: list[Any]) -> Table:
    table = Table(
        "backend",
        "compiles",
        "runs",
        "device",
        "version",
        "detail / fix",
        title="kernelwright doctor",
    )
    for s in statuses:
        yes = lambda b: "[green]yes[/green]" if b else "[red]no[/red]"  # noqa: E731
        note = s.detail + (f"\n[yellow]fix:[/yellow] {s.fix}" if s.fix else "")
        table.add_row(
            s.name, yes(s.can_compile), yes(s.can_run), s.device or "-", s.version or "-", note
        )
    return table


RUN_COLUMNS = ("run id", "task", "backend", "status", "best", "verdict", "evaluations",
               "started", "time")  # fmt: skip


def runs_rows(metas: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """One row of plain strings per run (the header first); a blank verdict = not known."""
    import time

    from kernelwright.spec.result import verdict_for

    def when(t):
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(t)) if t else "-"

    rows = [RUN_COLUMNS]
    for m in metas:
        best = m.get("best_speedup")
        verdict = m.get("verdict")
        if verdict is None and m.get("status") == "done" and m.get("kind") not in ("campaign",):
            verdict = verdict_for(best is not None, best).value
        took = (m.get("updated") or 0) - (m.get("started") or 0)
        rows.append((
            str(m["run_id"]), str(m.get("task", "?")), str(m.get("backend") or "-"),
            str(m.get("status", "?")), f"{best:.2f}x" if best else "-", str(verdict or ""),
            str(m.get("evaluations", 0)), when(m.get("started")),
            _duration(took) if m.get("started") and m.get("updated") else "-",
        ))  # fmt: skip
    return rows


def runs_text(metas: list[dict[str, Any]]) -> str:
    """The runs as aligned plain text: never truncated or wrapped, whatever the terminal's
    width (a run id is copied from here into `show` and `report`)."""
    return aligned(runs_rows(metas))


def aligned(rows: list[tuple[str, ...]]) -> str:
    """Rows of strings as left-aligned columns of plain text, as wide as they need."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]  # fmt: skip
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def print_verdict(console: Console, r: Any) -> None:
    """The verdict line (red when the user should keep PyTorch), the medians in ms, and
    torch.compile beside them when it was timed."""
    from kernelwright.spec.figures import compile_sentence, verdict_sentence

    verdict = getattr(r, "verdict", None) or verdict_for(r.correct, r.best_speedup).value
    line = verdict_sentence(verdict, r.best_speedup, ref_ms=getattr(r, "reference_ms", None),
                            cand_ms=getattr(r, "candidate_ms", None), low=r.speedup_low,
                            high=r.speedup_high)
    style = "bold green" if verdict == "faster" else "bold red"
    console.print(Text(line, style=style), soft_wrap=True)
    if getattr(r, "remeasured", False):
        console.print("figures: the top candidates re-measured, interleaved with the reference, "
                      "against one reference median")
    comp = compile_sentence(getattr(r, "compile_ms", None), getattr(r, "candidate_ms", None),
                            getattr(r, "compile_recompiles", None))
    if comp:
        console.print(comp)


def print_report(console: Console, report: Any) -> None:
    r = report
    console.rule(f"run {r.run_id}")
    reason = getattr(r, "reason", None)
    if not r.correct:
        console.print(
            Text("no correct kernel: ", style="red")
            + Text(reason or (f"none was found after {r.evaluations} evaluations")),
            soft_wrap=True,
        )
        return
    print_verdict(console, r)
    console.print(
        f"correctness: verified on every shape variant x seeds, candidate {r.best_candidate}"
    )
    if r.roofline_fraction is not None:
        console.print(f"roofline: {r.roofline_fraction:.1%} of this machine's bound")
    if getattr(r, "answer", None) == "reference":
        ref_ms = getattr(r, "reference_candidate_ms", None)
        console.print(Text("answer: the reference itself (framework space"
                           + (f", {ref_ms:.3f} ms as a candidate" if ref_ms else "")
                           + "): keep PyTorch", style="red"), soft_wrap=True)
    what = ("best candidate module" if getattr(r, "verdict", "faster") == "faster" else
            "fastest correct kernel (not recommended: not faster than eager)")
    console.print(f"evaluations: {r.evaluations}; {what}: {r.kernel_path}",
                  markup=False, soft_wrap=True)  # a path is copied: never wrapped
    if reason:
        console.print(Text(f"stopped: {reason}"), soft_wrap=True)
