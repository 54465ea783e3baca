"""``kernelwright show RUN --configs [--csv]``: every evaluated configuration of a run.

One row per candidate in evaluation order: its schedule parameters (one column per parameter
name), the verdict, the speedup with its spread, and the medians in ms (PyTorch eager, the
kernel, torch.compile when measured). The table is plain text that is never truncated or
wrapped (a long row runs past the terminal's edge); ``--csv`` writes the same rows as CSV.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import IO, Any

from kernelwright.graphs.run_summary import CandidateRecord, build_report_data
from kernelwright.spec.peaks import MachinePeaks

FIXED = ["order", "candidate", "origin", "stage"]
FIGURES = ["verdict", "speedup", "speedup_low", "speedup_high", "reference_ms", "candidate_ms",
           "compile_ms", "roofline_fraction"]  # fmt: skip


def config_rows(
    store_root: Path, run_id: str, peaks: MachinePeaks | None = None
) -> tuple[list[str], list[dict[str, Any]]]:
    """The column names and one row per evaluated candidate of ``run_id``; roofline
    fractions against the measured ``peaks`` when given (as in the report).

    Raises ``RunStoreError`` (naming the fix) for an unknown run."""
    (run,) = build_report_data(store_root, [run_id], peaks).runs
    names = sorted({k for c in run.candidates for k in c.params})
    rows = [_row(c, names) for c in run.candidates]
    return [*FIXED, *names, *FIGURES], rows


def config_verdict(c: CandidateRecord) -> str:
    """``faster`` / ``not faster`` than PyTorch eager for a correct candidate, else the
    verification level it failed at (``value_mismatch``, ``compile_error``, ...)."""
    if not c.correct:
        return c.level_name
    return "faster" if c.speedup is not None and c.speedup > 1.0 else "not faster"


def _row(c: CandidateRecord, names: list[str]) -> dict[str, Any]:
    row: dict[str, Any] = {"order": c.order, "candidate": c.candidate_id,
                           "origin": c.origin or "", "stage": c.stage}  # fmt: skip
    row |= {n: _param(c.params[n]) if n in c.params else "" for n in names}
    row |= {"verdict": config_verdict(c), "speedup": c.speedup, "speedup_low": c.speedup_low,
            "speedup_high": c.speedup_high, "reference_ms": c.reference_ms,
            "candidate_ms": c.candidate_ms, "compile_ms": c.compile_ms,
            "roofline_fraction": c.roofline_fraction}  # fmt: skip
    return row


def _param(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def write_csv(out: IO[str], columns: list[str], rows: list[dict[str, Any]]) -> None:
    """The rows as CSV with a header; numbers at full precision, missing values empty."""
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if v is None else v for k, v in row.items()})


def text_table(columns: list[str], rows: list[dict[str, Any]]) -> str:
    """The rows as an aligned plain-text table, every cell in full."""
    cells = [[_cell(k, row[k]) for k in columns] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(columns)]
    numeric = {"order", *FIGURES} - {"verdict"}

    def line(values: list[str]) -> str:
        parts = [v.rjust(w) if k in numeric else v.ljust(w)
                 for k, v, w in zip(columns, values, widths, strict=True)]  # fmt: skip
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(columns), rule, *(line(r) for r in cells)])


def _cell(key: str, value: Any) -> str:
    if value is None or value == "":
        return "-"
    if key.startswith("speedup"):
        return f"{value:.2f}x"
    if key.endswith("_ms"):
        return f"{value:.4g}"
    if key == "roofline_fraction":
        return f"{value:.1%}"
    return str(value)
