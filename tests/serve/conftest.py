"""A run store with one finished real run, and the roots the servers under test may read."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from kernelwright.config import Settings
from kernelwright.graphs.runner import start_run
from tests.conftest import END_TO_END_ENV

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "examples" / "tasks"


@pytest.fixture(scope="session")
def served(tmp_path_factory) -> dict:
    """A store holding run 'done-run' (cpp, 2 evaluations) and a root dir with a task copy."""
    base = tmp_path_factory.mktemp("served")
    store, cache, root = base / "store", base / "cache", base / "root"
    root.mkdir()
    (root / "l1_gelu.py").write_text((TASKS / "l1_gelu.py").read_text())
    settings = Settings(data_dir=store, cache_dir=cache, backend="cpp", budget=2)
    report = start_run(root / "l1_gelu.py", settings, run_id="done-run")
    (root / "best_candidate.py").write_text(Path(report.kernel_path).read_text())
    outside = base / "outside.py"
    outside.write_text((TASKS / "l1_gelu.py").read_text())
    env = {
        "PYTHONPATH": str(ROOT),
        "KERNELWRIGHT_DATA_DIR": str(store),
        "KERNELWRIGHT_CACHE_DIR": str(cache),
        "PATH": os.environ.get("PATH", ""),
        **END_TO_END_ENV,
    }
    return {"store": store, "root": root, "outside": outside, "env": env, "settings": settings}


def server_args(served: dict, *extra: str) -> list[str]:
    return [sys.executable, "-m", "kernelwright.cli", "mcp", "--root", str(served["root"]),
            "--store", str(served["store"]), "--backend", "cpp", "--budget", "2",
            *extra]  # fmt: skip
