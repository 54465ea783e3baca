"""The run store on PostgreSQL: ``--store postgresql://user@host:port/db``.

What SQLite and the run directory hold on one machine lives in tables on one server, so that
several processes (two optimize runs, a campaign, workers' orchestrators on other machines)
share it without losing or doubling anything:

    kw_schema        the schema version (``SCHEMA_VERSION``; older stores are migrated)
    kw_runs          run id -> metadata (JSON), updated atomically key by key
    kw_candidates    sources and their metadata, by content hash (first writer wins)
    kw_results       EvalResult + Profile records (the idempotency cache)
    kw_evaluations   one row per evaluation actually run (with process and host)
    kw_usage         the LLM usage ledger
    kw_files         every other artefact of a run (plan, contract, archive, transcript,
                     pending tuner trials, best kernel, reports) by its path in the run

The graph's checkpoints go to LangGraph's PostgresSaver and the inner tuner's studies to
Optuna's RDB storage on the same server (``tools.tune.tuner.rdb_storage``). The store and the
checkpointer borrow connections from psycopg's pool, which checks each one before lending it
and replaces a dead one, so a server restart or a dropped connection costs the next statement
a reconnect, not the run (Optuna's engine does the same with ``pool_pre_ping``). Artefacts that
their own objects write as files (the MAP-Elites archive, the transcript, ...) are written
under a local mirror directory and copied into ``kw_files`` whenever the run's metadata,
results or usage change; a run opened on another machine gets them back from the table.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from kernelwright.errors import RunStoreError
from kernelwright.graphs.store import RunStore
from kernelwright.spec.candidate import Candidate

SCHEMA_VERSION = 2
_LOCK_KEY = 0x6B77_5354  # "kwST": one advisory lock serialises schema creation and migration

# Migration i (0-based) brings a store from version i to version i + 1.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE IF NOT EXISTS kw_schema (version integer NOT NULL);
    CREATE TABLE IF NOT EXISTS kw_runs (
        run_id text PRIMARY KEY, meta jsonb NOT NULL, started double precision NOT NULL);
    CREATE TABLE IF NOT EXISTS kw_candidates (
        run_id text NOT NULL, candidate_id text NOT NULL, meta jsonb NOT NULL,
        source text NOT NULL, PRIMARY KEY (run_id, candidate_id));
    CREATE TABLE IF NOT EXISTS kw_results (
        run_id text NOT NULL, candidate_id text NOT NULL, record jsonb NOT NULL,
        PRIMARY KEY (run_id, candidate_id));
    CREATE TABLE IF NOT EXISTS kw_evaluations (
        id bigserial PRIMARY KEY, run_id text NOT NULL, candidate_id text NOT NULL,
        at double precision NOT NULL, pid integer NOT NULL);
    """,
    """
    ALTER TABLE kw_evaluations ADD COLUMN IF NOT EXISTS host text NOT NULL DEFAULT '';
    CREATE INDEX IF NOT EXISTS kw_evaluations_run ON kw_evaluations (run_id, id);
    CREATE TABLE IF NOT EXISTS kw_usage (run_id text PRIMARY KEY, ledger text NOT NULL);
    CREATE TABLE IF NOT EXISTS kw_files (
        run_id text NOT NULL, path text NOT NULL, content bytea NOT NULL,
        mtime double precision NOT NULL, PRIMARY KEY (run_id, path));
    """,
]


def is_pg_url(store: object) -> bool:
    """Whether ``--store`` names a PostgreSQL server rather than a directory."""
    return isinstance(store, str) and store.startswith(("postgresql://", "postgres://"))


def redacted(url: str) -> str:
    """The URL without its password (for messages and ``repr``)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def connect(url: str):
    """An autocommit psycopg connection, or one clear error naming the fix."""
    try:
        import psycopg
        from psycopg.rows import dict_row
    except ImportError as exc:
        raise RunStoreError(
            "--store postgresql://... needs psycopg: pip install 'kernelwright[cluster]'"
        ) from exc
    try:
        return psycopg.connect(url, autocommit=True, row_factory=dict_row, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise RunStoreError(
            f"cannot reach the PostgreSQL store {redacted(url)}: {str(exc).strip()}; start the "
            "server (see README, 'Running on a cluster') or fix --store"
        ) from exc


_POOLS: dict[str, Any] = {}  # one per server URL and process, closed at exit
_POOLS_LOCK = threading.Lock()


def connection_pool(url: str):
    """The process's pool of autocommit connections to ``url`` (the server checked first,
    with ``connect``'s clear error); each connection is checked before it is lent and
    replaced when dead. Shared by every store and checkpointer opened on ``url``."""
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    with _POOLS_LOCK:
        pool = _POOLS.get(url)
        if pool is None or pool.closed:
            connect(url).close()
            if not _POOLS:
                atexit.register(_close_pools)
            pool = _POOLS[url] = ConnectionPool(
                url, min_size=1, max_size=4, open=True, name="kw-store",
                kwargs={"autocommit": True, "row_factory": dict_row, "connect_timeout": 10},
                check=ConnectionPool.check_connection)
        return pool


def _close_pools() -> None:
    with _POOLS_LOCK:
        for pool in _POOLS.values():
            pool.close()
        _POOLS.clear()


def _advisory_lock(cur, key: int, timeout_s: float = 300.0) -> None:
    """Take the session-level advisory lock ``key``, polling. A session blocked inside
    ``pg_advisory_lock`` is a transaction in progress, and LangGraph's migrations run
    ``CREATE INDEX CONCURRENTLY``, which waits for every such transaction to end: the holder
    and the waiter then wait for each other (PostgreSQL reported it as a deadlock). Between two
    tries nothing of this session is open."""
    deadline = time.monotonic() + timeout_s
    while True:
        cur.execute("SELECT pg_try_advisory_lock(%s) AS ok", (key,))
        if cur.fetchone()["ok"]:
            return
        if time.monotonic() > deadline:
            raise RunStoreError(f"the PostgreSQL store's schema lock was held for over "
                                f"{timeout_s:g} s by another process: wait for it to finish "
                                "setting up the store, or end it")
        time.sleep(0.05)


def migrate(conn, upto: int = SCHEMA_VERSION) -> int:
    """Create or upgrade the schema to version ``upto``; returns the version found before."""
    with conn.cursor() as cur:
        _advisory_lock(cur, _LOCK_KEY)
        try:
            cur.execute("SELECT to_regclass('kw_schema') AS t")
            found = 0
            if cur.fetchone()["t"] is not None:
                cur.execute("SELECT max(version) AS v FROM kw_schema")
                found = cur.fetchone()["v"] or 0
            if found > SCHEMA_VERSION:
                raise RunStoreError(
                    f"the store's schema is version {found}, newer than this kernelwright's "
                    f"{SCHEMA_VERSION}: upgrade kernelwright to use it"
                )
            for version in range(found, upto):
                with conn.transaction():
                    cur.execute(MIGRATIONS[version])
                    cur.execute("DELETE FROM kw_schema")
                    cur.execute("INSERT INTO kw_schema VALUES (%s)", (version + 1,))
            return found
        finally:
            cur.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))


def schema_version(conn) -> int:
    with conn.cursor() as cur:
        cur.execute("SELECT max(version) AS v FROM kw_schema")
        return cur.fetchone()["v"] or 0


def mirror_dir(url: str) -> Path:
    """The local directory mirroring a PostgreSQL store's file artefacts on this machine."""
    from kernelwright.config import default_data_dir

    digest = hashlib.sha256(redacted(url).encode()).hexdigest()[:12]
    return default_data_dir() / "pg-mirror" / digest


class PgRunStore(RunStore):
    """The run store's artefacts in PostgreSQL tables; same interface as :class:`RunStore`.

    Example:
        >>> store = RunStore("postgresql://kw@127.0.0.1:5432/kw")  # doctest: +SKIP
    """

    def __init__(self, url: str, mirror: str | Path | None = None) -> None:
        self.url = url
        self.root = url  # what --store said: the checkpointer opens the same server
        self.label = redacted(url)  # never the password, in reports and messages
        self.runs_dir = Path(mirror or mirror_dir(url)) / "runs"
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        self._pool = connection_pool(url)
        with self._pool.connection() as conn:
            migrate(conn)
        self._synced: dict[tuple[str, str], tuple[float, int]] = {}
        self._restored: set[str] = set()

    def __repr__(self) -> str:
        return f"PgRunStore({redacted(self.url)!r})"

    def _q(self, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
        with self._pool.connection() as conn, conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def close(self) -> None:
        """Nothing to release: the connection pool is the process's (``connection_pool``)."""

    # -- runs -----------------------------------------------------------------------------
    def run_dir(self, run_id: str) -> Path:
        if run_id not in self._restored:
            self._restored.add(run_id)
            self._restore_files(run_id)
        return self.runs_dir / run_id

    def create_run(self, run_id: str, meta: dict[str, Any]) -> None:
        now = time.time()
        meta = {**meta, "run_id": run_id, "started": now, "updated": now}
        self._q("INSERT INTO kw_runs VALUES (%s, %s, %s) ON CONFLICT (run_id) DO NOTHING",
                (run_id, json.dumps(meta), now))

    def write_meta(self, run_id: str, meta: dict[str, Any]) -> None:
        self._q("INSERT INTO kw_runs VALUES (%s, %s, %s) ON CONFLICT (run_id) "
                "DO UPDATE SET meta = EXCLUDED.meta",
                (run_id, json.dumps(meta), meta.get("started", time.time())))
        self.sync_files(run_id)

    def update_meta(self, run_id: str, **changes: Any) -> dict[str, Any]:
        self._stored_meta(run_id)  # a clear error for unknown ids
        rows = self._q("UPDATE kw_runs SET meta = meta || %s::jsonb WHERE run_id = %s "
                       "RETURNING meta", (json.dumps({**changes, "updated": time.time()}),
                                          run_id))
        self.sync_files(run_id)
        return rows[0]["meta"]

    def _stored_meta(self, run_id: str) -> dict[str, Any]:
        rows = self._q("SELECT meta FROM kw_runs WHERE run_id = %s", (run_id,))
        if not rows:
            known = ", ".join(self.run_ids()[-5:]) or "none yet"
            raise RunStoreError(
                f"no run {run_id!r} in {redacted(self.url)}: list runs with `kernelwright runs "
                f"--store ...` (latest: {known}) or pass --store with the server that holds it"
            )
        return rows[0]["meta"]

    def run_ids(self) -> list[str]:
        rows = self._q("SELECT run_id FROM kw_runs ORDER BY (meta->>'updated')::float, run_id")
        return [r["run_id"] for r in rows]

    # -- candidates and results -----------------------------------------------------------
    def save_candidate(self, run_id: str, candidate: Candidate) -> Path:
        self._q("INSERT INTO kw_candidates VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (run_id, candidate.id, candidate.model_dump_json(exclude={"source"}),
                 candidate.source))
        return self.runs_dir / run_id / "candidates" / f"{candidate.id}.py"

    def load_candidate(self, run_id: str, candidate_id: str) -> Candidate:
        rows = self._q("SELECT meta, source FROM kw_candidates WHERE run_id = %s AND "
                       "candidate_id = %s", (run_id, candidate_id))
        if not rows:
            raise RunStoreError(f"run {run_id} has no candidate {candidate_id} in the store")
        meta = dict(rows[0]["meta"])
        meta.pop("id", None)
        return Candidate(source=rows[0]["source"], **meta)

    def save_result(self, run_id: str, candidate_id: str, record: dict[str, Any]) -> None:
        self._q("INSERT INTO kw_results VALUES (%s, %s, %s) ON CONFLICT (run_id, candidate_id) "
                "DO UPDATE SET record = EXCLUDED.record", (run_id, candidate_id,
                                                           json.dumps(record)))
        self.sync_files(run_id)

    def load_result(self, run_id: str, candidate_id: str) -> dict[str, Any] | None:
        rows = self._q("SELECT record FROM kw_results WHERE run_id = %s AND candidate_id = %s",
                       (run_id, candidate_id))
        return rows[0]["record"] if rows else None

    def log_evaluation(self, run_id: str, candidate_id: str) -> None:
        self._q("INSERT INTO kw_evaluations (run_id, candidate_id, at, pid, host) "
                "VALUES (%s, %s, %s, %s, %s)",
                (run_id, candidate_id, time.time(), os.getpid(), socket.gethostname()))

    def evaluations(self, run_id: str) -> list[str]:
        rows = self._q("SELECT candidate_id FROM kw_evaluations WHERE run_id = %s ORDER BY id",
                       (run_id,))
        return [r["candidate_id"] for r in rows]

    # -- usage and files ------------------------------------------------------------------
    def load_usage(self, run_id: str) -> str | None:
        rows = self._q("SELECT ledger FROM kw_usage WHERE run_id = %s", (run_id,))
        return rows[0]["ledger"] if rows else None

    def save_usage(self, run_id: str, ledger_json: str) -> None:
        self._q("INSERT INTO kw_usage VALUES (%s, %s) ON CONFLICT (run_id) "
                "DO UPDATE SET ledger = EXCLUDED.ledger", (run_id, ledger_json))
        self.sync_files(run_id)

    def save_pending_trials(self, run_id: str, source: str, pending: dict[str, str]) -> None:
        super().save_pending_trials(run_id, source, pending)
        self.sync_files(run_id)

    def save_summary(self, run_id: str, summary_json: str) -> None:
        super().save_summary(run_id, summary_json)
        self.sync_files(run_id)

    def tune_study_name(self, run_id: str, source: str) -> str:
        return f"{run_id}/{source}"  # one server holds the studies of every run

    def tune_storage(self, run_id: str, source: str) -> str:
        return self.url

    def sync_files(self, run_id: str) -> int:
        """Copy the run's new or changed local files into ``kw_files``; returns how many."""
        base = self.runs_dir / run_id
        if not base.is_dir():
            return 0
        sent = 0
        for path in sorted(p for p in base.rglob("*") if p.is_file()):
            rel = path.relative_to(base).as_posix()
            if path.name.startswith("."):
                continue  # an atomic write in flight
            st = path.stat()
            key, stamp = (run_id, rel), (st.st_mtime, st.st_size)
            if self._synced.get(key) == stamp:
                continue
            self._q("INSERT INTO kw_files VALUES (%s, %s, %s, %s) ON CONFLICT (run_id, path) "
                    "DO UPDATE SET content = EXCLUDED.content, mtime = EXCLUDED.mtime",
                    (run_id, rel, path.read_bytes(), st.st_mtime))
            self._synced[key] = stamp
            sent += 1
        return sent

    def _restore_files(self, run_id: str) -> None:
        """Write the run's files from ``kw_files`` where the local copy is missing or older."""
        base = self.runs_dir / run_id
        for row in self._q("SELECT path, content, mtime FROM kw_files WHERE run_id = %s",
                           (run_id,)):
            path = (base / row["path"]).resolve()
            if not path.is_relative_to(base.resolve()):
                continue  # never write outside the run's directory
            if path.exists() and path.stat().st_mtime >= row["mtime"]:
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(bytes(row["content"]))
            os.utime(tmp, (row["mtime"], row["mtime"]))
            os.replace(tmp, path)
            st = path.stat()
            self._synced[(run_id, row["path"])] = (st.st_mtime, st.st_size)


def open_pg_checkpointer(url: str):
    """LangGraph's PostgresSaver on ``url``, its tables created once (under the schema lock)."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from kernelwright.graphs.store import STATE_TYPES

    saver = PostgresSaver(connection_pool(url),
                          serde=JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES))
    with connect(url) as conn, conn.cursor() as cur:  # the lock's own session
        _advisory_lock(cur, _LOCK_KEY + 1)
        try:
            saver.setup()
        finally:
            cur.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY + 1,))
    return saver

