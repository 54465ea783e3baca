"""Throw-away services for the cluster tests: a PostgreSQL cluster in a temporary directory on
127.0.0.1, and a local Ray head with 2 CPUs; each started once per session, stopped at the end,
and the tests that need one are skipped with the reason when it cannot be started."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest


def _pg_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_user(cmd: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run it as the ``postgres`` (or ``nobody``) user."""
    if os.geteuid() != 0:
        return cmd
    for user in ("postgres", "nobody"):
        try:
            pwd.getpwnam(user)
        except KeyError:
            continue
        return ["runuser", "-u", user, "--", *cmd]
    return cmd


@pytest.fixture(scope="session")
def pg_server():
    """The base URL of a throw-away PostgreSQL cluster (trust auth, user ``kw``)."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql; "
                    "`make system-packages` does it as root)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed: pip install -e '.[cluster]'")
    base = Path(tempfile.mkdtemp(prefix="kw-pg-"))
    os.chmod(base, 0o777)
    data, port = base / "data", _free_port()
    try:
        subprocess.run(_as_user([initdb, "-D", str(data), "-A", "trust", "-U", "kw",
                                 "--no-sync", "-E", "UTF8"]),
                       check=True, capture_output=True, timeout=120)
        subprocess.run(_as_user([pg_ctl, "-D", str(data), "-l", str(base / "log"), "-w", "-t",
                                 "60", "-o", f"-h 127.0.0.1 -p {port} -k {base} -F "
                                 "-c max_connections=200", "start"]),
                       check=True, capture_output=True, timeout=120)
    except (subprocess.SubprocessError, OSError) as exc:
        shutil.rmtree(base, ignore_errors=True)
        detail = getattr(exc, "stderr", b"") or b""
        pytest.skip(f"cannot start a throw-away PostgreSQL: {exc} {detail.decode()[-300:]}")
    try:
        yield f"postgresql://kw@127.0.0.1:{port}"
    finally:
        subprocess.run(_as_user([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]),
                       capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server):
    """A fresh, empty database on the session's server, for one test."""
    import psycopg

    name = f"kw_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(f"{pg_server}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{pg_server}/{name}"


@pytest.fixture(scope="session")
def ray_head():
    """A local Ray head with 2 CPUs and two evaluation devices (``kw_device_test_a|b``, as
    two ``kernelwright worker`` nodes declare theirs) started in this process; yields its
    GCS address; ``ray.shutdown`` stops what it started."""
    try:
        import ray
    except ImportError:
        pytest.skip("Ray is not installed: pip install -e '.[cluster]'")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        ctx = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                       namespace="kernelwright",
                       resources={"kw_device_test_a": 1, "kw_device_test_b": 1})
    except Exception as exc:  # noqa: BLE001  (any failure to start is a reason to skip)
        pytest.skip(f"cannot start a local Ray head: {exc}")
    try:
        yield ctx.address_info["gcs_address"]
    finally:
        ray.shutdown()
