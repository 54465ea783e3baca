"""Where runs live: a SQLite checkpointer for the graph state and a run store for artifacts.

Layout under ``settings.data_dir`` (or ``--store PATH``)::

    checkpoints.sqlite          LangGraph SqliteSaver, thread id = run id
    runs/<run_id>/meta.json     task, backend, budget, status, timestamps
    runs/<run_id>/contract.txt  the contract derived from the reference
    runs/<run_id>/plan.json     the planner's plan
    runs/<run_id>/candidates/<candidate id>.py|.json   sources by content hash
    runs/<run_id>/results/<candidate id>.json          EvalResult + Profile (idempotency cache)
    runs/<run_id>/evaluations.log                      one line per evaluation actually run
    runs/<run_id>/archive.json                         MAP-Elites archive (hierarchical runs)
    runs/<run_id>/tune/<source>.journal|.pending.json  the inner tuner's study and open trials
    runs/<run_id>/usage.json                           LLM usage ledger (LLM runs)
    runs/<run_id>/prompts.json                         meta-prompt archive (LLM runs)
    runs/<run_id>/best/candidate.py                    the best candidate module
    runs/<run_id>/task/r<revision>/<name>.py           a chat run's task file, per revision
    runs/<campaign_id>/summary.json, report.html|.md   a campaign's summary and morning report

Only this module knows these names: everything else asks :class:`RunStore` for an artefact.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwright.errors import RunStoreError
from kernelwright.spec.candidate import Candidate

if TYPE_CHECKING:  # langgraph is imported when a checkpointer is opened (`runs` needs none)
    from langgraph.checkpoint.sqlite import SqliteSaver

    from kernelwright.config import Settings


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


CHECKPOINTS = "checkpoints.sqlite"
META = "meta.json"
CONTRACT = "contract.txt"
PLAN = "plan.json"
CANDIDATES = "candidates"
RESULTS = "results"
EVALUATIONS = "evaluations.log"
ARCHIVE = "archive.json"
TUNE = "tune"
USAGE = "usage.json"
PROMPTS = "prompts.json"
TRANSCRIPT = "llm/transcript.jsonl"
BEST_KERNEL = "best/candidate.py"
TASK_REVISION = "task/r{revision}/{name}.py"
SUMMARY = "summary.json"
REPORT_HTML = "report.html"
REPORT_MD = "report.md"


def new_run_id(task_name: str) -> str:
    return f"{task_name}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"


class RunStore:
    """Artifacts of every run under one root; small JSON and sources, written atomically.

    Example:
        >>> store = RunStore(tmp_path)  # doctest: +SKIP
        >>> store.save_candidate("run-1", candidate)  # doctest: +SKIP
    """

    def __new__(cls, root: str | Path, *args: Any, **kwargs: Any) -> RunStore:
        if cls is RunStore and _is_url(root):  # --store postgresql://...: tables on a server
            from kernelwright.graphs.store_pg import PgRunStore

            return PgRunStore(str(root), *args, **kwargs)
        return super().__new__(cls)

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.label = str(self.root)  # how reports and messages name the store
        if self.root.exists() and not self.root.is_dir():
            raise RunStoreError(
                f"the run store {self.root} is a file, but a store is a directory: pass "
                "--store with a directory (it is created if missing)"
            )
        self.runs_dir = self.root / "runs"
        self.runs_dir.mkdir(parents=True, exist_ok=True)

    def __repr__(self) -> str:
        return f"RunStore({str(self.root)!r})"

    # -- runs -----------------------------------------------------------------------------
    def run_dir(self, run_id: str) -> Path:
        return self.runs_dir / run_id

    def create_run(self, run_id: str, meta: dict[str, Any]) -> None:
        now = time.time()
        self.write_meta(run_id, {**meta, "run_id": run_id, "started": now, "updated": now})

    def write_meta(self, run_id: str, meta: dict[str, Any]) -> None:
        _atomic_write(self.run_dir(run_id) / META, json.dumps(meta, indent=1))

    def update_meta(self, run_id: str, **changes: Any) -> dict[str, Any]:
        meta = {**self._stored_meta(run_id), **changes, "updated": time.time()}
        self.write_meta(run_id, meta)
        return meta

    def meta(self, run_id: str) -> dict[str, Any]:
        """The run's metadata; a run marked ``running`` whose process is gone (killed, the
        machine rebooted) reads as ``interrupted``, with the command that continues it."""
        meta = self._stored_meta(run_id)
        if meta.get("status") == "running" and _process_gone(meta):
            meta["status"] = "interrupted"
            meta["status_note"] = (
                f"process {meta['pid']} is gone: `kernelwright resume {run_id}` continues it"
            )
        return meta

    def _stored_meta(self, run_id: str) -> dict[str, Any]:
        path = self.run_dir(run_id) / META
        if not path.exists():
            known = ", ".join(self.run_ids()[-5:]) or "none yet"
            raise RunStoreError(
                f"no run {run_id!r} in {self.root}: list runs with `kernelwright runs` "
                f"(latest: {known}) or pass --store with the directory that holds it"
            )
        return json.loads(path.read_text())

    def run_ids(self) -> list[str]:
        runs = [p for p in self.runs_dir.iterdir() if (p / META).exists()]
        return [p.name for p in sorted(runs, key=lambda p: p.stat().st_mtime)]

    # -- candidates and results -----------------------------------------------------------
    def save_candidate(self, run_id: str, candidate: Candidate) -> Path:
        base = self.run_dir(run_id) / CANDIDATES / candidate.id
        if not base.with_suffix(".py").exists():
            _atomic_write(base.with_suffix(".json"), candidate.model_dump_json(exclude={"source"}))
            _atomic_write(base.with_suffix(".py"), candidate.source)
        return base.with_suffix(".py")

    def load_candidate(self, run_id: str, candidate_id: str) -> Candidate:
        base = self.run_dir(run_id) / CANDIDATES / candidate_id
        meta = json.loads(base.with_suffix(".json").read_text())
        meta.pop("id", None)
        return Candidate(source=base.with_suffix(".py").read_text(), **meta)

    def save_result(self, run_id: str, candidate_id: str, record: dict[str, Any]) -> None:
        path = self.run_dir(run_id) / RESULTS / f"{candidate_id}.json"
        _atomic_write(path, json.dumps(record))

    def load_result(self, run_id: str, candidate_id: str) -> dict[str, Any] | None:
        path = self.run_dir(run_id) / RESULTS / f"{candidate_id}.json"
        return json.loads(path.read_text()) if path.exists() else None

    def save_reference(self, run_id: str, record: dict[str, Any]) -> None:
        """The reference-as-a-candidate's result and profile (spec/reference.py): kept apart
        from ``results/`` and the evaluation log, which count the kernels of the budget."""
        _atomic_write(self.run_dir(run_id) / "reference.json", json.dumps(record))

    def load_reference(self, run_id: str) -> dict[str, Any] | None:
        path = self.run_dir(run_id) / "reference.json"
        return json.loads(path.read_text()) if path.exists() else None

    def log_evaluation(self, run_id: str, candidate_id: str) -> None:
        with open(self.run_dir(run_id) / EVALUATIONS, "a") as fh:
            fh.write(f"{time.time():.3f} {os.getpid()} {candidate_id}\n")
            fh.flush()
            os.fsync(fh.fileno())

    def evaluations(self, run_id: str) -> list[str]:
        path = self.run_dir(run_id) / EVALUATIONS
        return (
            [line.split()[-1] for line in path.read_text().splitlines()] if path.exists() else []
        )

    # -- the plan, the best kernel ---------------------------------------------------------
    def save_plan(self, run_id: str, plan_json: str, contract_text: str | None = None) -> None:
        """The plan the planner made and the contract it saw (for ``show`` and people)."""
        _atomic_write(self.run_dir(run_id) / PLAN, plan_json)
        if contract_text is not None:
            _atomic_write(self.run_dir(run_id) / CONTRACT, contract_text)

    def best_path(self, run_id: str) -> Path:
        """Where the best candidate's module is written."""
        return self.run_dir(run_id) / BEST_KERNEL

    def save_best(self, run_id: str, source: str) -> Path:
        """Write the best candidate's module; returns its path."""
        _atomic_write(self.best_path(run_id), source)
        return self.best_path(run_id)

    def save_task_revision(self, run_id: str, revision: int, name: str, text: str) -> Path:
        """Revision ``revision`` of a chat run's task file; returns its path."""
        path = self.run_dir(run_id) / TASK_REVISION.format(revision=revision, name=name)
        _atomic_write(path, text)
        return path

    def save_summary(self, run_id: str, summary_json: str) -> None:
        """A campaign's summary."""
        _atomic_write(self.run_dir(run_id) / SUMMARY, summary_json)

    def report_paths(self, run_id: str) -> tuple[Path, Path]:
        """Where a campaign's morning report goes: (HTML, Markdown)."""
        return self.run_dir(run_id) / REPORT_HTML, self.run_dir(run_id) / REPORT_MD

    # -- search state and LLM state (files owned by their objects' own load/save) ----------
    def archive_path(self, run_id: str) -> Path:
        """The MAP-Elites archive (``MapElitesArchive.save``/``load``)."""
        return self.run_dir(run_id) / ARCHIVE

    def tune_journal_path(self, run_id: str, source: str) -> Path:
        """The inner tuner's Optuna journal for ``source``."""
        return self.run_dir(run_id) / TUNE / f"{source}.journal"

    def tune_study_name(self, run_id: str, source: str) -> str:
        """The inner tuner's study name for ``source`` (a journal file holds one run's)."""
        return source

    def tune_storage(self, run_id: str, source: str) -> str | Path:
        """Where the inner tuner keeps its study: a journal file, or a database URL."""
        return self.tune_journal_path(run_id, source)

    def load_pending_trials(self, run_id: str, source: str) -> dict[str, str]:
        """Tuner trial number -> candidate id of trials asked but not yet told."""
        path = self.run_dir(run_id) / TUNE / f"{source}.pending.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def save_pending_trials(self, run_id: str, source: str, pending: dict[str, str]) -> None:
        _atomic_write(
            self.run_dir(run_id) / TUNE / f"{source}.pending.json", json.dumps(pending)
        )

    def transcript_path(self, run_id: str) -> Path:
        """The LLM transcript: one JSON line per request and reply (``agents.journal``)."""
        return self.run_dir(run_id) / TRANSCRIPT

    def prompts_path(self, run_id: str) -> Path:
        """The meta-prompt archive (``PromptArchive.save``/``load``)."""
        return self.run_dir(run_id) / PROMPTS

    def load_usage(self, run_id: str) -> str | None:
        """The LLM usage ledger as JSON, or ``None`` for a run without LLM calls yet."""
        path = self.run_dir(run_id) / USAGE
        return path.read_text() if path.exists() else None

    def save_usage(self, run_id: str, ledger_json: str) -> None:
        _atomic_write(self.run_dir(run_id) / USAGE, ledger_json)


def store_root(settings: Settings, store: str | Path | None) -> Path | str:
    """The run store's directory: ``--store`` when given, else the data dir; a
    ``postgresql://`` URL stays a string (see :mod:`store_pg`)."""
    if _is_url(store):
        return str(store)
    return Path(store) if store else settings.data_dir


def _is_url(store: object) -> bool:
    return isinstance(store, str) and store.startswith(("postgresql://", "postgres://"))


def run_state(run_id: str, settings: Settings, store: str | Path | None = None) -> dict[str, Any]:
    """The latest checkpointed state of a run (without running anything)."""
    runs = RunStore(store_root(settings, store))
    runs.meta(run_id)  # a clear error for unknown ids
    saver = open_checkpointer(runs.root)
    tup = saver.get_tuple({"configurable": {"thread_id": run_id}})
    return dict(tup.checkpoint["channel_values"]) if tup else {}


def open_checkpointer(root: str | Path) -> SqliteSaver:
    """A SQLite checkpointer in WAL mode under ``root`` (one file for every run); LangGraph's
    PostgresSaver when ``root`` is a ``postgresql://`` URL."""
    if _is_url(root):
        from kernelwright.graphs.store_pg import open_pg_checkpointer

        return open_pg_checkpointer(str(root))
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = Path(root) / CHECKPOINTS
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    return SqliteSaver(conn, serde=JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES))


# The pydantic models and enums the graph state holds; allow-listed for the msgpack serializer.
STATE_TYPES = [
    ("kernelwright.spec.plan", name)
    for name in ("Plan", "Profile", "Roofline", "Decision", "Action")
] + [
    ("kernelwright.spec.opclass", "OperatorClass"),
    ("kernelwright.spec.opclass", "ImplementationSpace"),
    ("kernelwright.spec.contract", "ImplementationSpace"),  # where checkpoints before 0.1 name it
]


def owner_fields() -> dict[str, Any]:
    """What ``meta`` needs to tell a live run from a killed one: this process and host."""
    return {"pid": os.getpid(), "host": socket.gethostname()}


def _process_gone(meta: dict[str, Any]) -> bool:
    """True when the run's recorded process is known dead (same host, no such pid)."""
    pid, host = meta.get("pid"), meta.get("host")
    if not isinstance(pid, int) or host != socket.gethostname():
        return False  # unknown owner, or another machine: cannot tell, so do not guess
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] == "Z"
