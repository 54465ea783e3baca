"""Lower every corpus task for sycl and cpp; have the harness verify the baseline kernels.

"Baseline" is the lowered program with its default schedule, no search (budget 1). Two tests:

- ``test_task_lowers_for_sycl_and_cpp`` (all 167 tasks): capture, schedule and emit for both
  backends, no build. It then hands the candidates the rule below picks to a background
  verifier (:mod:`kw_verify`: two threads, a ``WorkerPool`` per task), so the harness
  works while the next tasks lower.
- ``test_lowered_baseline_is_correct`` (per backend and task): waits for the harness's verdict
  (sandboxed worker, three seeds, every shape variant of the contract, poisoned outputs,
  unchanged inputs, the fp64 precision check). Timing is cut to the minimum the harness
  allows (3 rounds, no warm-up): speed is measured by ``benchmarks/corpus_coverage.py``.

Rule (``kw_corpus.verified``): on cpp every task; on sycl every third task of each family in
name order, starting with the first (59 tasks). ``KW_CORPUS_ALL=1`` verifies all on both.

CI cost (docs/CORPUS.md has the figures and commands): the whole module took 711 CPU-s (19.4
min wall on a shared 2-core machine at load average ~4.9), so at least ~6 min on 2 quiet cores;
lowering all 167 tasks for both backends is ~1.6 CPU-s a task; a harness verdict costs a worker
start (4.5-7 s wall at load ~4), g++ (0.4-1 s) and, on sycl, icpx (4-5 s). Builds go to
temporary caches, and no source is compiled twice (no build promotion).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from kw_corpus import task_paths, verified
from kw_verify import BackgroundVerifier, describe, verify_settings

from kernelwright.spec import ImplementationSpace, Task, derive_contract
from kernelwright.tools.backends import BackendRegistry
from kernelwright.tools.evaluate import WorkerPool
from kernelwright.tools.lower import lower_task

PATHS = task_paths()
EVERYTHING = os.environ.get("KW_CORPUS_ALL") == "1"
VERIFIED = {backend: {p.stem for p in verified(backend, EVERYTHING)}
            for backend in ("cpp", "sycl")}
# small tasks of six families, where the emulator stays quick: the CUDA emitter on the PTX emulator
CUDA_TASKS = ["layout_flip_two_dims", "pool_max2d_indices", "norm_groupnorm", "sm_softmin",
              "gemm_bmm", "scan_cumprod"]


def sycl_usable() -> bool:
    try:
        return BackendRegistry(verify_settings(Path("/nonexistent"))).get("sycl").status().usable
    except Exception:
        return False


@pytest.fixture(scope="module")
def verifier(tmp_path_factory):
    backends = ["cpp"] + (["sycl"] if sycl_usable() else [])
    background = BackgroundVerifier(tmp_path_factory.mktemp("corpus-verify"), backends)
    yield background
    background.close()


def lower_and_submit(path: Path, verifier: BackgroundVerifier) -> list[str]:
    """Lower ``path`` for sycl and cpp (each must give a candidate with kernels); submit the
    candidates the rule verifies. Returns what did not lower."""
    task = Task.from_path(path)
    candidates, failures = {}, []
    for backend in ("sycl", "cpp"):
        try:  # our emitters: custom kernels only (vendor anchors: tools/lower/test_vendor_*)
            contract = derive_contract(task).narrowed([ImplementationSpace.CUSTOM_KERNEL])
            candidate = lower_task(task, backend, contract=contract).candidate
        except Exception as exc:  # a LoweringError, or a bug in the lowering
            failures.append(f"{task.name} [{backend}] does not lower: "
                            f"{type(exc).__name__}: {exc}")
            continue
        assert 'extern "C"' in candidate.source, f"{task.name} [{backend}]: no kernel emitted"
        if path.stem in VERIFIED[backend] and backend in verifier.backends:
            candidates[backend] = candidate
    if candidates:
        verifier.submit(path.stem, task, dict(sorted(candidates.items())))
    return failures


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_task_lowers_for_sycl_and_cpp(path: Path, verifier: BackgroundVerifier):
    failures = lower_and_submit(path, verifier)
    assert not failures, "\n".join(failures)


def verification_cases() -> list:
    cases = []
    for backend in ("cpp", "sycl"):
        marks = [pytest.mark.requires_sycl] if backend == "sycl" else []
        cases += [pytest.param(backend, p, id=f"{backend}-{p.stem}", marks=marks)
                  for p in PATHS if p.stem in VERIFIED[backend]]
    return cases


@pytest.mark.slow
@pytest.mark.parametrize(("backend", "path"), verification_cases())
def test_lowered_baseline_is_correct(backend: str, path: Path, verifier: BackgroundVerifier):
    if not verifier.submitted(path.stem):  # the lowering test did not run (e.g. -k)
        failures = lower_and_submit(path, verifier)
        assert not failures, "\n".join(failures)
    results = verifier.wait(path.stem)
    assert backend in results, f"{path.stem} [{backend}] was not lowered"
    problem = describe(Task.from_path(path), backend, results[backend])
    assert problem is None, problem


@pytest.mark.slow
@pytest.mark.requires_nvcc
@pytest.mark.parametrize("name", CUDA_TASKS)
def test_lowered_baseline_is_correct_in_cuda_on_the_emulator(name: str, tmp_path: Path):
    path = next(p for p in PATHS if p.stem == name)
    task = Task.from_path(path)
    program = lower_task(task, "cuda")
    settings = verify_settings(tmp_path)
    with WorkerPool(settings) as pool:
        result = pool.evaluate(task, program.candidate)
    assert result.correct, f"{result.level.name}: {result.error}"
    if not torch.cuda.is_available():  # no GPU: the cuda backend ran it on the PTX emulator
        assert BackendRegistry(settings).get("cuda").emulated
