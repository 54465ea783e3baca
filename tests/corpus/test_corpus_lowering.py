"""Lower corpus tasks and have the harness verify the baseline kernel (budget 1).

"Baseline" is the lowered program with its default schedule, no search. The verdict is the
harness's own (sandboxed worker, three seeds, every shape variant of the contract, poisoned
outputs, unchanged inputs, the fp64 precision check); timing is cut to the minimum the harness
allows (3 rounds, no warm-up) because only correctness is asserted here: speed is measured by
``benchmarks/coverage.py``.

CI cost (measured, see docs/CORPUS.md): with a cold build cache a task costs ~25 s on 2 quiet
cores (two captures, one worker for both backends, a SYCL build done by the candidate runner and
again by the trusted builder), so CI checks ``kw_corpus.CI_SAMPLE`` (one task per family, 13 in
all); ``KW_CORPUS_ALL=1`` checks all 167. The reference is recorded once per task and replayed
for both candidates; builds land in the user's build cache, so a second run compiles nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from kw_corpus import ci_paths, task_paths

from kernelwright.config import Settings
from kernelwright.errors import KernelwrightError
from kernelwright.spec import Task
from kernelwright.tools.backends import BackendRegistry
from kernelwright.tools.evaluate import WorkerPool
from kernelwright.tools.lower import lower_task

PATHS = task_paths()
CHECKED = ci_paths(everything=os.environ.get("KW_CORPUS_ALL") == "1")


def cases(paths: list[Path]) -> list:
    return [pytest.param(p, id=p.stem) for p in paths]


# small tasks of six families, where the emulator stays quick: the CUDA emitter on the PTX emulator
CUDA_TASKS = ["layout_flip_two_dims", "pool_max2d_indices", "norm_groupnorm", "sm_softmin",
              "gemm_bmm", "scan_cumprod"]


@pytest.fixture(scope="module")
def verify_settings(tmp_path_factory) -> Settings:
    """Correctness only: the harness's minimal timing; recordings in a temporary store."""
    return Settings(data_dir=tmp_path_factory.mktemp("corpus"), seeds=3, min_time_s=1e-3,
                    warmup_calls=0, max_repeats=3, record_replay=True,
                    promote_builds=False)


def failure(task: Task, backend: str, pool: WorkerPool, settings: Settings) -> str | None:
    """Why the lowered baseline of ``task`` is not correct on ``backend`` (None if it is)."""
    try:
        program = lower_task(task, backend)
    except KernelwrightError as exc:
        return f"{task.name} [{backend}] does not lower: {exc}"
    result = pool.evaluate(task, program.candidate, settings=settings)
    if result.correct:
        return None
    return (f"{task.name} [{backend}] {result.level.name.lower()}: "
            f"{(result.error or '').strip()[:1500]}")


@pytest.mark.slow
@pytest.mark.requires_sycl
@pytest.mark.parametrize("path", cases(CHECKED))
def test_lowered_baseline_is_correct_on_cpp_and_sycl(path: Path, verify_settings: Settings):
    task = Task.from_path(path)
    with WorkerPool(verify_settings) as pool:
        failures = [f for backend in ("cpp", "sycl")
                    if (f := failure(task, backend, pool, verify_settings))]
    assert not failures, "\n".join(failures)


@pytest.mark.slow
@pytest.mark.requires_nvcc
@pytest.mark.parametrize("name", CUDA_TASKS)
def test_lowered_baseline_is_correct_in_cuda_on_the_emulator(name: str,
                                                             verify_settings: Settings):
    path = next(p for p in PATHS if p.stem == name)
    task = Task.from_path(path)
    program = lower_task(task, "cuda")
    with WorkerPool(verify_settings) as pool:
        result = pool.evaluate(task, program.candidate, settings=verify_settings)
    assert result.correct, f"{result.level.name}: {result.error}"
    if not torch.cuda.is_available():  # no GPU: the cuda backend ran it on the PTX emulator
        assert BackendRegistry(verify_settings).get("cuda").emulated
