"""Every example task loads and has a contract; every naive candidate is correct on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.spec import Candidate, Level, Task, derive_contract
from kernelwright.testing import harness_check as qc

CANDIDATES = qc.EXAMPLES / "candidates"
# Tasks with a hand-written naive candidate; the vendor L2 tasks are served by the lowering alone.
HANDWRITTEN = [t for t in qc.TASKS if (CANDIDATES / f"{t}_naive_sycl.py").is_file()]
LOWERED_ONLY = [t for t in qc.TASKS if t not in HANDWRITTEN]


def test_there_are_at_least_ten_tasks_with_a_naive_candidate_each():
    assert len(HANDWRITTEN) >= 10
    assert all(t.endswith("_vendor") for t in LOWERED_ONLY), LOWERED_ONLY


@pytest.mark.parametrize("name", qc.TASKS)
@pytest.mark.slow
def test_task_derives_a_contract_with_three_variants(name: str):
    contract = derive_contract(Task.from_path(qc.task_path(name)))
    assert len(contract.variants) >= 3
    assert not contract.degenerate, contract.degenerate_reason
    assert len({tuple(v.outputs[0].shape) for v in contract.variants}) >= 3


@pytest.mark.parametrize("name", HANDWRITTEN)
def test_naive_candidate_is_a_sycl_candidate(name: str):
    candidate = Candidate.from_file(CANDIDATES / f"{name}_naive_sycl.py")
    assert candidate.backend == "sycl"
    assert "class ModelNew" in candidate.source


@pytest.mark.requires_sycl
@pytest.mark.slow
@pytest.mark.parametrize("name", HANDWRITTEN)
def test_naive_candidate_is_correct_on_every_variant(name: str, harness):
    source = Path(CANDIDATES / f"{name}_naive_sycl.py").read_text()
    result = harness.check(name, source)
    assert result.correct, result.error


@pytest.mark.requires_sycl
@pytest.mark.slow
@pytest.mark.parametrize("name", qc.TASKS)
def test_lowered_program_is_correct_on_every_variant(name: str, harness):
    """The offline team's first candidate for every example: the lowered SYCL program."""
    from kernelwright.tools.lower import lower_task

    candidate = lower_task(Task.from_path(qc.task_path(name)), "sycl").candidate
    assert candidate.backend == "sycl"
    result = harness.check(name, candidate.source)
    assert result.correct, result.error


@pytest.mark.requires_sycl
@pytest.mark.slow
def test_the_harness_check_catches_a_wrong_candidate(harness):
    source = (CANDIDATES / "l1_gelu_naive_sycl.py").read_text()
    assert harness.check("l1_gelu", source).correct
    wrong = source.replace("0.5f * v", "0.49f * v")
    assert wrong != source
    result = harness.check("l1_gelu", wrong)
    assert not result.correct and result.level == Level.VALUE_MISMATCH
    assert max(e for e in result.max_error.values() if e is not None) > 1e-3
