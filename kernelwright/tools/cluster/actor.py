"""The Ray actor behind one device: a warm :class:`WorkerPool` on the node that holds it.

Everything trusted stays as it is on one machine: the actor's pool forks a fresh sandboxed
runner per candidate and kills it at its own deadlines. The actor only moves the task, the
candidate and the verdict between the run and the node; the shared-cache builds its
candidates ask for run as Ray tasks on any node with a free CPU (:mod:`builds`).
"""

from __future__ import annotations

import os
import socket
from typing import Any

DEVICE_PREFIX = "kw_device_"  # a node's devices are Ray resources named kw_device_<name>


class EvalWorker:
    """One device's evaluations, one at a time (a Ray actor's calls are sequential)."""

    def __init__(self, device: str, settings_json: str) -> None:
        from kernelwright.config import Settings
        from kernelwright.tools.cluster.builds import promote_on_cluster
        from kernelwright.tools.evaluate import WorkerPool

        self.device = device
        # shared-cache builds go to Ray tasks on any node with a free CPU
        self.pool = WorkerPool(Settings.model_validate_json(settings_json),
                               promoter=promote_on_cluster)
        self.done = 0

    def where(self) -> dict[str, Any]:
        """This actor's process, host and device (for kills in tests and for logs)."""
        return {"pid": os.getpid(), "host": socket.gethostname(), "device": self.device,
                "done": self.done}

    def evaluate(self, task: TaskFile, candidate, settings_json: str | None,
                 observers: list[str]):
        from kernelwright.config import Settings

        settings = Settings.model_validate_json(settings_json) if settings_json else None
        result = self.pool.evaluate(task.load(), candidate, settings=settings,
                                    observers=observers)
        self.done += 1
        return result

    def contract(self, task: TaskFile):
        return self.pool.contract(task.load())

    def release(self) -> list[dict[str, Any]]:
        """Stop the pool's sessions and promote its builds (see ``WorkerPool.close``); the
        trusted builder's reports (where each build ran, what it placed)."""
        reports = self.pool.wait_for_builder()
        self.pool.close()
        return reports


class TaskFile:
    """A task as it travels to a node: its path, name, hash and text. The node loads the
    file at the same path when it holds the same text (a shared file system), else a copy
    written under its temporary directory."""

    def __init__(self, path: str, name: str, source_hash: str, text: str) -> None:
        self.path, self.name, self.source_hash, self.text = path, name, source_hash, text

    @classmethod
    def of(cls, task) -> TaskFile:
        from pathlib import Path

        return cls(str(task.path), task.name, task.source_hash, Path(task.path).read_text())

    def load(self):
        import tempfile
        from pathlib import Path

        from kernelwright.spec import Task

        path = Path(self.path)
        if path.is_file():
            task = Task.from_path(path)
            if task.source_hash == self.source_hash:
                return task
        copy = Path(tempfile.gettempdir(), "kw-tasks", self.source_hash[:16], path.name)
        if not copy.exists():
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text(self.text)
        return Task.from_path(copy)
