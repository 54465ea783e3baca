"""Drive a chat thread: create it from a request, advance it to its next pause, answer reviews.

One thread = one run (thread id = run id) in the same store and checkpoint database as
``kernelwright optimize``, so ``runs`` and ``show`` list it too; its ``meta.json`` says
``"kind": "chat"``. ``advance`` streams the graph until it ends, pauses for a review
(``interrupt``), or the caller asks to quit (then it returns after the current step, whose
checkpoint is kept: ``durability="sync"``).
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.types import Command

from kernelwright.agents.request_parser import RunRequest
from kernelwright.config import Settings
from kernelwright.errors import ChatError
from kernelwright.graphs.chat import offered_kernel
from kernelwright.graphs.chat_task import revision_source, task_spaces
from kernelwright.graphs.drive import drive, has_checkpoint, initial_state, run_settings, snapshot
from kernelwright.graphs.state import current_profiles
from kernelwright.graphs.store import RunStore, new_run_id, open_checkpointer
from kernelwright.graphs.teams import offline_team
from kernelwright.spec import Task
from kernelwright.spec.figures import medians_text
from kernelwright.spec.plan import best_profile

Emit = Callable[[str, dict[str, Any]], None]  # (node name, state update)


@dataclass
class Pause:
    """Where ``advance`` stopped: ``review`` (payload set), ``done``, or ``paused`` (quit)."""

    kind: str
    payload: dict[str, Any] = field(default_factory=dict)


class ChatSession:
    """One conversation's run.

    Example:
        >>> session = ChatSession.create(request, settings, root)  # doctest: +SKIP
        >>> pause = session.advance(None, emit=print)  # doctest: +SKIP
        >>> pause = session.advance({"approve": True}, emit=print)  # doctest: +SKIP
    """

    def __init__(
        self,
        run_id: str,
        settings: Settings,
        root: str | Path,
        context_factory=offline_team,
    ) -> None:
        self.runs = RunStore(root)
        meta = self.runs.meta(run_id)
        if meta.get("kind") != "chat":
            raise ChatError(
                f"run {run_id} is not a chat thread (it was started by `kernelwright "
                f"{meta.get('kind', 'optimize')}`): continue it with "
                f"`kernelwright resume {run_id}`"
            )
        self.run_id = run_id
        self.meta = meta
        # The endpoint and time limit the thread began with (the budget lives in its state).
        self.settings = run_settings(settings, meta, ("backend", "time_limit_s"))
        self.context_factory = context_factory
        self.stop_event = threading.Event()

    def __repr__(self) -> str:
        return f"ChatSession({self.run_id!r}, store={self.runs.label!r})"

    # -- creation -------------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        request: RunRequest,
        settings: Settings,
        root: str | Path,
        context_factory=offline_team,
        usage_json: str | None = None,
    ) -> ChatSession:
        """A new thread for ``request`` (its task file written as revision 0 in the store).

        ``usage_json``: the LLM usage ledger of parsing the request, counted in the run's budget.
        """
        base_source, name, spaces = _base_task(request)
        runs = RunStore(root)
        run_id = new_run_id(f"chat-{name}")
        text = revision_source(base_source, request, spaces, [])
        path = runs.save_task_revision(run_id, 0, name, text)
        Task.from_path(path)  # the constraints block must keep the module loadable
        backend = request.backend or settings.backend
        budget = request.budget or settings.budget
        runs.create_run(
            run_id,
            {
                "kind": "chat",
                "task": name,
                "task_path": str(path),
                "backend": backend,
                "budget": budget,
                "time_limit_s": request.time_limit_s or settings.time_limit_s,
                "status": "created",
                "request": request.model_dump(mode="json"),
                "base_source": base_source,
                "task_spaces": [s.value for s in spaces],
                "llm": settings.llm.model_dump(mode="json") if settings.llm.enabled else None,
            },
        )
        if usage_json is not None:
            runs.save_usage(run_id, usage_json)
        return cls(run_id, settings, root, context_factory=context_factory)

    def _initial_state(self) -> dict[str, Any]:
        meta = self.meta
        return initial_state(self.run_id, meta, request=meta["request"],
                             base_source=meta["base_source"], task_spaces=meta["task_spaces"],
                             revision=0)  # fmt: skip

    # -- driving ----------------------------------------------------------------------------------
    def advance(
        self,
        answer: dict[str, Any] | None,
        emit: Emit | None = None,
        quit_requested: Callable[[], bool] = lambda: False,
    ) -> Pause:
        """Run until the next review, the end, or ``quit_requested()``; ``answer`` resumes a
        pending review (``{"approve": bool, "reason": str}``)."""
        saver = open_checkpointer(self.runs.root)
        settings = self.settings
        with self.context_factory(settings, self.runs, self.run_id) as ctx:
            ctx.stop_requested = self.stop_event.is_set
            ctx.quote_reasons = settings.llm.enabled  # LLM agents read the quoted reasons
            if answer is not None:
                start: Any = Command(resume=answer)
            else:
                start = None if has_checkpoint(saver, self.run_id) else self._initial_state()
            drive("chat", ctx, saver, self.run_id, start, observer=emit,
                  quit_requested=quit_requested)  # fmt: skip
        return self.where()

    def where(self) -> Pause:
        """The thread's position now, read from its last checkpoint."""
        snapshot = self._snapshot()
        if snapshot is None:
            return Pause("paused")
        if snapshot.interrupts:
            return Pause("review", dict(snapshot.interrupts[0].value))
        if not snapshot.next and not snapshot.tasks:
            return Pause("done", {"approved": snapshot.values.get("approved"),
                                  "verdict": snapshot.values.get("verdict"),
                                  "verdict_text": snapshot.values.get("verdict_text")})
        return Pause("paused")

    def _snapshot(self):
        return snapshot("chat", open_checkpointer(self.runs.root), self.run_id)

    # -- what the slash commands show -----------------------------------------------------------
    def values(self) -> dict[str, Any]:
        snapshot = self._snapshot()
        return dict(snapshot.values) if snapshot is not None else {}

    def status(self, running: bool = False) -> str:
        """Plain lines: position, evaluations, best, last decision (``running``: a worker runs)."""
        values = self.values()
        profiles = values.get("profiles") or []
        best = best_profile([*current_profiles(values), *(values.get("confirmed") or [])])
        decisions = values.get("decisions") or []
        lines = [
            f"thread {self.run_id}: {'working' if running else self.where().kind}",
            f"evaluations {len(profiles)}/{values.get('budget', self.meta['budget'])}, "
            f"correct {sum(p.correct for p in profiles)}",
            f"best {best.speedup:.2f}x ({best.candidate_id}; "
            f"{medians_text(best.reference_ms, best.candidate_ms) or 'no medians kept'})"
            if best else "best: none correct",
        ]
        if decisions:
            lines.append(f"last decision: {decisions[-1].action.value}: {decisions[-1].reason}")
        return "\n".join(lines)

    def best(self) -> tuple[dict[str, Any], str] | None:
        """(summary, source) of the kernel the user would be offered now."""
        best = offered_kernel(self.values())
        if best is None:
            return None
        source = self.runs.load_candidate(self.run_id, best.candidate_id).source
        return best.model_dump(mode="json"), source

    def kernels(self) -> list[tuple[Any, bool]]:
        """Every correct kernel of the thread, fastest first, with whether it was rejected
        (a rejected kernel can still be approved with ``/pick``)."""
        values = self.values()
        rejected = set(values.get("rejected") or [])
        correct = [p for p in values.get("profiles") or [] if p.correct]
        correct.sort(key=lambda p: -(p.speedup or 0.0))
        return [(p, p.candidate_id in rejected) for p in correct]

    def find_kernel(self, prefix: str) -> Any | None:
        """The correct kernel whose id starts with ``prefix`` (None: none, or more than one)."""
        found = [p for p, _ in self.kernels() if p.candidate_id.startswith(prefix.strip())]
        return found[0] if len(found) == 1 and prefix.strip() else None

    def source(self, candidate_id: str) -> str:
        return self.runs.load_candidate(self.run_id, candidate_id).source

    def diff(self) -> str | None:
        """Unified diff of the offered kernel against its parent (else the previous best)."""
        values = self.values()
        best = offered_kernel(values)
        if best is None:
            return None
        child = self.runs.load_candidate(self.run_id, best.candidate_id)
        parent_id = child.parent or _previous_best(values, best.candidate_id)
        if parent_id is None:
            return None
        try:
            parent = self.runs.load_candidate(self.run_id, parent_id)
        except FileNotFoundError:
            return None
        lines = difflib.unified_diff(
            parent.source.splitlines(keepends=True),
            child.source.splitlines(keepends=True),
            fromfile=f"{parent_id}.py",
            tofile=f"{best.candidate_id}.py",
        )
        return "".join(lines)


def _previous_best(values: dict[str, Any], candidate_id: str) -> str | None:
    profiles = values.get("profiles") or []
    before = []
    for p in profiles:
        if p.candidate_id == candidate_id:
            break
        before.append(p)
    best = best_profile(before)
    return best.candidate_id if best else None


def _base_task(request: RunRequest) -> tuple[str, str, list]:
    """(the user's module source, a task name, the spaces the module itself allows)."""
    if request.task_source:
        name = request.task_name or "chat_task"
        return request.task_source, name, _spaces_of_source(request.task_source, name)
    if not request.task_path:
        raise ChatError(
            "no task in the request: name a task file (e.g. examples/tasks/l1_gelu.py) or paste "
            "a PyTorch module between ``` fences (class Model, get_inputs, get_init_inputs)"
        )
    path = Path(request.task_path).expanduser()
    task = Task.from_path(path)
    return task.path.read_text(), task.name, task_spaces(task.path)


def _spaces_of_source(source: str, name: str) -> list:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.py"
        path.write_text(source)
        return task_spaces(Task.from_path(path).path)
