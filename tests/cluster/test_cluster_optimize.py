"""`optimize --cluster`: a run whose evaluations go to the Ray head's two device workers,
its artefacts to a PostgreSQL store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster.test_pg_runs import QUICK_ENV, TASK

pytestmark = [pytest.mark.requires_sycl, pytest.mark.slow]


def test_optimize_on_two_ray_workers(ray_head, pg_url):
    from kernelwright.graphs.store_pg import PgRunStore

    budget = 4
    env = {**os.environ, **QUICK_ENV, "KERNELWRIGHT_MAX_CONCURRENT_EVALS": "2"}
    proc = subprocess.run(
        [sys.executable, "-m", "kernelwright.cli", "optimize", str(TASK), "--budget",
         str(budget), "--run-id", "on-ray", "--cluster", ray_head, "--store", pg_url, "--json"],
        env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    runs = PgRunStore(pg_url, mirror=Path(os.environ.get("TMPDIR", "/tmp")) / "kw-check")
    logged = runs.evaluations("on-ray")
    assert report["correct"] and report["evaluations"] == budget == len(set(logged))
    assert len(logged) == budget
