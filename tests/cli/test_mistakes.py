"""A new user's mistakes, each run as a real command at 40 and at 200 columns.

Every mistake must end the command before any work starts with exactly one line on stderr that
names the problem (the words in ``names``) and says what to do, no traceback, nothing on
stdout, a non-zero exit code, and no run left in the store.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TASK = "examples/tasks/l1_gelu.py"
SYCL_CANDIDATE = "examples/candidates/l1_gelu_naive_sycl.py"

# (argv, words the one line must contain: the problem and the fix)
MISTAKES: list[tuple[list[str], list[str]]] = [
    (["optimize", "--backend", "gpu", TASK], ["'gpu'", "sycl", "cpp", "cuda"]),
    (["optimize", "--budget", "0", TASK], ["--budget", "0", "greater than or equal to 1"]),
    (["optimize", "--budget", "-3", TASK], ["--budget", "-3", "greater than or equal to 1"]),
    (["optimize", "examples/tasks"], ["examples/tasks", "directory", "pass one file"]),
    (["optimize", "no_such_task.py"], ["no_such_task.py", "does not exist"]),
    (["optimize", "--time-limit", "0", TASK], ["--time-limit", "greater than 0"]),
    (["optimize", "--max-cost", "-1", TASK], ["--max-cost", "greater than 0"]),
    (["optimize", "--max-tokens", "0", TASK], ["--max-tokens", "greater than or equal to 1"]),
    (["optimize", "--llm-timeout", "0", TASK], ["--llm-timeout", "greater than 0"]),
    (["optimize"], ["Missing argument", "optimize --help"]),
    (["optimize", "--bugdet", "3", TASK], ["--bugdet", "optimize --help"]),
    (["eval", "--backend", "gpu", TASK, SYCL_CANDIDATE], ["'gpu'", "sycl"]),
    (["eval", "--backend", "cpp", TASK, SYCL_CANDIDATE], ["builds its kernels with sycl",
                                                          "'cpp'", "drop the backend"]),
    (["eval", TASK, "examples/candidates"], ["examples/candidates", "is a directory"]),
    (["eval", "examples/tasks", SYCL_CANDIDATE], ["examples/tasks", "is a directory"]),
    (["campaign", "examples/tasks", "--hours", "0"], ["--hours", "positive"]),
    (["campaign", TASK, "--hours", "1"], ["is a file", "DIRECTORY", "kernelwright optimize"]),
    (["campaign", "examples/tasks", "--hours", "1", "--slice", "0"], ["--slice", "1"]),
    (["campaign", "examples/tasks", "--hours", "1", "--budget-per-task", "0"],
     ["--budget-per-task"]),
    (["chat", "--budget", "0"], ["--budget", "greater than or equal to 1"]),
    (["chat", "examples/tasks"], ["examples/tasks", "directory"]),
    (["trace", "no_such_workload", "--out", "{tmp}/t"], ["no_such_workload", "lud", "bfs"]),
    (["trace", "lud", "--out", "{tmp}/t", "--size", "n"], ["--size", "NAME=VALUE"]),
    (["simulate", "{tmp}/no_such_dir"], ["no_such_dir", "does not exist", "kernelwright trace"]),
    (["simulate", "--gpu", "rtx9999", "{tmp}"], ["rtx9999", "rtx2080ti"]),
    (["sample", "--method", "astrology", "{tmp}"], ["astrology", "gcl"]),
    (["app", "{tmp}", "--coverage", "0"], ["--coverage", "(0, 1]"]),
    (["app", "{tmp}", "--task", "foo"], ["'foo'", "KERNEL=TASK_FILE"]),
    (["app", "{tmp}", "--task", "foo=no_such.py"], ["no_such.py", "does not exist"]),
    (["app", "{tmp}", "--backend", "opencl"], ["'opencl'", "sycl"]),
    (["show", "no-such-run"], ["no run 'no-such-run'", "kernelwright runs"]),
    (["resume", "no-such-run"], ["no run 'no-such-run'", "kernelwright runs"]),
    (["report", "no-such-run", "--html", "{tmp}"], ["--html", "is a directory"]),
    (["runs", "--store", TASK], ["is a file", "directory"]),
    (["mcp", "--transport", "tcp"], ["'tcp'", "stdio", "http"]),
    (["mcp", "--root", "{tmp}/no_such_root"], ["no_such_root", "not a directory"]),
    (["no-such-command"], ["No such command", "kernelwright --help"]),
]


def test_the_table_covers_at_least_twenty_mistakes():
    assert len(MISTAKES) >= 20


@pytest.mark.parametrize("columns", [40, 200])
@pytest.mark.parametrize(("argv", "names"), MISTAKES, ids=[" ".join(a) for a, _ in MISTAKES])
def test_a_mistake_is_one_line_naming_problem_and_fix(tmp_path, columns, argv, names):
    _check(tmp_path, columns, argv, names, {})


# Mistakes in the environment: the line names the variable as well as the flag.
ENV_MISTAKES = [
    ({"KERNELWRIGHT_BACKEND": "gpu"}, ["runs"], ["$KERNELWRIGHT_BACKEND", "'gpu'", "sycl"]),
    ({"KERNELWRIGHT_LLM_MAX_COST": "-2"}, ["optimize", TASK],
     ["$KERNELWRIGHT_LLM_MAX_COST", "greater than 0"]),
]


@pytest.mark.parametrize(("env", "argv", "names"), ENV_MISTAKES)
def test_an_environment_mistake_is_one_line_too(tmp_path, env, argv, names):
    _check(tmp_path, 40, argv, names, env)


def _check(tmp_path, columns: int, argv: list[str], names: list[str], extra: dict) -> None:
    data = tmp_path / "data"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_DATA_HOME": str(data),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": str(columns)}  # fmt: skip
    for name in [k for k in env if k.startswith("KERNELWRIGHT_")]:
        del env[name]
    env.update(extra)
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    proc = subprocess.run([sys.executable, "-m", "kernelwright.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode != 0, proc.stdout
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    for word in names:
        assert word in lines[0], lines[0]
    assert "Traceback" not in proc.stderr and "ValidationError" not in proc.stderr
    assert "pydantic" not in proc.stderr
    assert proc.stdout == ""
    runs = data / "kernelwright" / "runs"
    assert not runs.exists() or not any(runs.iterdir()), list(runs.iterdir())


def test_the_choices_the_help_lists_are_the_registries():
    from typing import get_args

    from kernelwright.cli import _app
    from kernelwright.config import BACKENDS
    from kernelwright.tools.gpusim.gpus import _ALIASES, GPUS
    from kernelwright.tools.gpusim.workloads import WORKLOADS

    assert get_args(_app.Backend) == BACKENDS
    assert set(_app.GPUS) == set(GPUS) | set(_ALIASES)
    assert set(_app.WORKLOADS) == set(WORKLOADS)
