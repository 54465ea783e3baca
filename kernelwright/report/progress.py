"""A live progress display for a run: evaluations done / budget, best speedup, current step."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class RunProgress:
    """Observer for ``graphs.runner``: updates a rich progress bar from node updates."""

    def __init__(self, console: Console, budget: int | None) -> None:
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("best {task.fields[best]}"),
            TextColumn("{task.fields[step]}"),
            TimeElapsedColumn(),
            console=console,
        )
        self.task_id = self.progress.add_task("evaluations", total=budget, best="-", step="")
        self.done = 0
        self.best: float | None = None

    def __enter__(self) -> RunProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def observe(self, node: str, update: dict[str, Any]) -> None:
        step = node
        for profile in update.get("profiles") or []:
            self.done += 1
            if (
                profile.correct
                and profile.speedup
                and (self.best is None or profile.speedup > self.best)
            ):
                self.best = profile.speedup
            verdict = f"{profile.speedup:.2f}x" if profile.correct else f"level {profile.level}"
            step = f"evaluated {profile.origin or profile.candidate_id}: {verdict}"
        for decision in update.get("decisions") or []:
            step = f"critic: {decision.action.value} ({decision.reason})"
        if "plan" in update and update["plan"] is not None:
            step = f"plan: {update['plan'].strategy}"
        if node == "confirm":
            step = f"re-measured the top {len(update.get('confirmed') or [])} candidates"
        best = f"{self.best:.2f}x" if self.best else "-"
        self.progress.update(self.task_id, completed=self.done, best=best, step=step[:90])
