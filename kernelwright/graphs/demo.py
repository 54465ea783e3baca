"""``make demo``'s work: every example candidate through the harness (warm workers), and the
task the demo then optimises. Rendering is :mod:`kernelwright.report.demo`'s job.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kernelwright.config import Settings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEMO_TASK = EXAMPLES / "tasks" / "l2_add_layernorm.py"


def example_pairs() -> list[tuple[Path, Path]]:
    """``(task file, candidate file)`` for every ``examples/candidates/<task>_*.py``."""
    tasks = sorted((p.stem for p in (EXAMPLES / "tasks").glob("*.py")), key=len, reverse=True)
    pairs = []
    for cand in sorted((EXAMPLES / "candidates").glob("*.py")):
        task = next((t for t in tasks if cand.stem.startswith(t + "_")), None)
        if task is not None:
            pairs.append((EXAMPLES / "tasks" / f"{task}.py", cand))
    return pairs


def evaluate_examples(
    settings: Settings, on_start: Callable[[str], None] | None = None
) -> list[dict]:
    """The summary row of every example candidate (``name`` = its file stem); ``on_start`` is
    called with each candidate's file name before it is evaluated."""
    from kernelwright.spec import Candidate, Task
    from kernelwright.tools.evaluate import WorkerPool, evaluate

    rows = []
    with WorkerPool(settings) as pool:
        for task_path, cand_path in example_pairs():
            if on_start is not None:
                on_start(cand_path.name)
            task = Task.from_path(task_path)
            result = evaluate(task, Candidate.from_file(cand_path), settings=settings, pool=pool)
            rows.append(result.summary() | {"name": cand_path.stem})
    return rows
