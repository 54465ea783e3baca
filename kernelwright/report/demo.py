"""``make demo``: every example candidate through the harness, then one optimisation run."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from kernelwright.config import Settings
from kernelwright.graphs.runner import start_run
from kernelwright.report.console import eval_table, print_report
from kernelwright.report.progress import RunProgress

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEMO_TASK = "l2_add_layernorm"


def evaluate_examples(console: Console, settings: Settings) -> list[dict]:
    """Evaluate every ``examples/candidates/<task>_*.py`` against its task (warm workers)."""
    from kernelwright.spec import Candidate, Task
    from kernelwright.tools.evaluate import WorkerPool, evaluate

    rows = []
    with WorkerPool(settings) as pool, console.status("evaluating example candidates") as status:
        for cand_path in sorted((EXAMPLES / "candidates").glob("*.py")):
            task_name = _task_of(cand_path)
            if task_name is None:
                continue
            status.update(f"evaluating {cand_path.name}")
            task = Task.from_path(EXAMPLES / "tasks" / f"{task_name}.py")
            result = evaluate(task, Candidate.from_file(cand_path), settings=settings, pool=pool)
            rows.append(result.summary() | {"name": cand_path.stem})
    return rows


def _task_of(candidate: Path) -> str | None:
    tasks = sorted((p.stem for p in (EXAMPLES / "tasks").glob("*.py")), key=len, reverse=True)
    return next((t for t in tasks if candidate.stem.startswith(t + "_")), None)


def run_demo(console: Console, settings: Settings) -> None:
    rows = evaluate_examples(console, settings)
    console.print(eval_table(rows))
    wrong = [r["name"] for r in rows if not r["correct"]]
    console.print(
        f"{len(rows) - len(wrong)}/{len(rows)} example candidates correct"
        + (f"; wrong: {', '.join(wrong)}" if wrong else "")
    )
    console.rule(f"optimising {DEMO_TASK} (budget {settings.budget} evaluations)")
    with RunProgress(console, settings.budget) as progress:
        report = start_run(
            EXAMPLES / "tasks" / f"{DEMO_TASK}.py", settings, observer=progress.observe
        )
    print_report(console, report)
