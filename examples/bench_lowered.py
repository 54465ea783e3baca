"""Speedup over PyTorch eager of the naive candidates and the lowered programs, per task.

Usage:
    OMP_WAIT_POLICY=PASSIVE .venv/bin/python examples/bench_lowered.py [--harness] [task ...]

The lowered programs (``kernelwright.tools.lower``, SYCL and C++) run at their default
schedules: what the first round of every offline run evaluates before any search.

Both modes go through the sandboxed harness (there is one evaluation path). By default with
quick settings (one seed, ``kernelwright.testing.harness_check``: medians of a 0.2 s timing
loop); ``--harness`` with the default settings and the harness's speedup interval. Prints one
line per (task, implementation): correctness and speedup (reference time / candidate time).
"""

from __future__ import annotations

import argparse
import os
import sys

if os.environ.get("OMP_WAIT_POLICY", "").upper() != "PASSIVE":  # must be set before torch loads
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    os.execv(sys.executable, [sys.executable, *sys.argv])

from kernelwright.spec import Task  # noqa: E402
from kernelwright.testing import harness_check as qc  # noqa: E402
from kernelwright.tools.lower import lower_task  # noqa: E402


def sources(task: str) -> dict[str, str]:
    """Implementation name -> candidate source: the naive one and the lowered programs."""
    out = {"naive": (qc.EXAMPLES / "candidates" / f"{task}_naive_sycl.py").read_text()}
    reference = Task.from_path(qc.task_path(task))
    for backend in ("sycl", "cpp"):
        out[f"lowered.{backend}"] = lower_task(reference, backend).candidate.source
    return out


def quick(task: str, source: str, harness) -> str:
    medians = harness.time_pair(task, source)
    if medians is None:
        return "WRONG (the harness rejected it)"
    ref, new = medians
    return f"ref {ref:7.3f} ms  cand {new:7.3f} ms  speedup {ref / new:5.2f}x"


def harness(task: str, source: str, pool) -> str:
    from kernelwright.spec import Candidate, guess_backend
    from kernelwright.tools.evaluate import evaluate

    cand = Candidate(source=source, backend=guess_backend(source))
    r = evaluate(qc.task_path(task), cand, pool=pool)
    if not r.correct:
        return f"level {r.level} {str(r.error)[:80]}"
    low, high = r.timing.speedup_low, r.timing.speedup_high
    return f"speedup {r.speedup:5.2f}x  [{low:.2f}, {high:.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="*", default=qc.TASKS)
    parser.add_argument("--harness", action="store_true")
    args = parser.parse_args()
    from kernelwright.config import Settings

    settings = Settings() if args.harness else qc.quick_settings()
    with qc.HarnessCheck(settings) as check:
        for task in args.tasks:
            for name, source in sources(task).items():
                line = (harness(task, source, check.pool) if args.harness
                        else quick(task, source, check))
                print(f"{task:26s} {name:24s} {line}", flush=True)


if __name__ == "__main__":
    main()
