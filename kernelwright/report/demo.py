"""How ``make demo`` shows the example candidates' verdicts."""

from __future__ import annotations

from rich.console import Console

from kernelwright.report.console import eval_table


def print_examples(console: Console, rows: list[dict]) -> None:
    """The verdict table and a one-line count of correct candidates."""
    console.print(eval_table(rows))
    wrong = [r["name"] for r in rows if not r["correct"]]
    console.print(
        f"{len(rows) - len(wrong)}/{len(rows)} example candidates correct"
        + (f"; wrong: {', '.join(wrong)}" if wrong else "")
    )
