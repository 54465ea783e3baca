"""The lowering corpus itself: every task loads, its reference runs, and the corpus is awkward.

These tests need no lowering. They hold the corpus to what issue 11 asks of it: at least 100
tasks over every family, odd sizes, batch 1, 3-D to 5-D tensors, training-mode norms,
contracts that allow a vendor library, and references small enough for a 2-core CPU.
The lowering tests are in ``test_corpus_lowering.py``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
import torch
from kw_corpus import FAMILIES, SYCL_STRIDE, family_of, spread, task_paths, verified

from kernelwright import load_task
from kernelwright.spec import Contract, derive_contract, run_reference, variant_inputs

PATHS = task_paths()
MAX_ELEMENTS = 1_500_000  # inputs + outputs of the nominal variant: a 2-core-CPU size
TILE = 8  # a dimension that is not a multiple of this defeats every vector width / tile


@cache
def contract_of(path: Path) -> Contract:
    return derive_contract(load_task(str(path)))


def _dims(contract: Contract) -> list[tuple[int, ...]]:
    return [s.shape for v in contract.variants for s in v.inputs if s is not None]


def test_corpus_is_large_and_covers_every_family():
    assert len(PATHS) >= 100
    counts = {fam: 0 for fam in FAMILIES}
    for p in PATHS:
        counts[family_of(p)] = counts.get(family_of(p), 0) + 1
    assert set(counts) == set(FAMILIES), f"unknown families: {set(counts) - set(FAMILIES)}"
    thin = {f: n for f, n in counts.items() if n < 5}
    assert not thin, f"families with fewer than 5 tasks: {thin}"


def test_task_names_are_unique_and_prefixed_by_family():
    names = [p.stem for p in PATHS]
    assert len(set(names)) == len(names)
    prefixes = {"pointwise": "pw_", "reduction": "red_", "softmax": "sm_", "norm": "norm_",
                "scan": "scan_", "pooling": "pool_", "loss": "loss_", "layout": "layout_",
                "gemm": "gemm_", "gemm_epilogue": "l2_", "conv": "conv",
                "conv_epilogue": "l2_"}
    wrong = [p.stem for p in PATHS if not p.stem.startswith(prefixes[family_of(p)])]
    assert not wrong, f"names not starting with their family's prefix: {wrong}"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_task_loads_runs_and_is_awkward(path: Path):
    task = load_task(str(path))
    module = task.load_module()
    assert module.FAMILY in FAMILIES
    contract = contract_of(path)
    assert len(contract.variants) >= 3 and not contract.degenerate, contract.degenerate_reason
    inputs = variant_inputs(module, contract.nominal, 0)
    outputs = run_reference(module, inputs, 0)
    for out in outputs:
        if out.is_floating_point():
            assert torch.isfinite(out).all(), f"{task.name}: non-finite reference output"
    size = sum(x.numel() for x in [*inputs, *outputs] if isinstance(x, torch.Tensor))
    assert size <= MAX_ELEMENTS, f"{task.name}: {size} elements, too big for a 2-core CPU"
    awkward = [d for shape in _dims(contract) for d in shape if d > 1 and d % TILE]
    assert awkward, f"{task.name}: every dimension is a multiple of {TILE}"


def test_corpus_has_the_awkward_cases_the_issue_names():
    contracts = {p.stem: contract_of(p) for p in PATHS}
    ranks = {name: {len(s) for s in _dims(c)} for name, c in contracts.items()}
    batch1 = [n for n, c in contracts.items() if any(s.shape[0] == 1 for s in
                                                     c.nominal.inputs if s and s.shape)]
    assert len(batch1) >= 8, f"only {len(batch1)} tasks with batch 1: {batch1}"
    for rank, least in ((3, 20), (4, 20), (5, 8)):
        have = [n for n, r in ranks.items() if rank in r]
        assert len(have) >= least, f"only {len(have)} tasks with {rank}-D inputs"
    # every space is allowed unless a task narrows it (ALLOWED_SPACES)
    vendor = [n for n, c in contracts.items() if c.allows("vendor_library")]
    assert len(vendor) >= len(contracts) // 2


@pytest.mark.slow
def test_batchnorm_tasks_run_in_training_mode():
    """KernelBench runs a module as constructed (training mode): BatchNorm normalises with the
    batch's statistics, so a lowering that assumes eval mode gives other numbers."""
    uses_bn = []
    for p in PATHS:
        module = load_task(str(p)).load_module()
        torch.manual_seed(0)
        model = module.Model(*module.get_init_inputs())
        if not any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
                   for m in model.modules()):
            continue
        uses_bn.append(p.stem)
        inputs = variant_inputs(module, contract_of(p).nominal, 0)
        train = run_reference(module, inputs, 0)[0]
        assert model.training
        with torch.no_grad():
            evaluated = model.eval()(*inputs)
        assert not torch.allclose(train, evaluated, atol=1e-3), f"{p.stem}: eval == train"
    assert len(uses_bn) >= 5, uses_bn


def test_spread_picks_every_family():
    picked = spread(PATHS, 2)
    assert {family_of(p) for p in picked} == set(FAMILIES)
    assert len(picked) == 2 * len(FAMILIES)


def _path(name: str) -> Path:
    return next(p for p in PATHS if p.stem == name)


def test_ci_verifies_every_task_on_cpp_and_a_third_of_each_family_on_sycl():
    assert verified("cpp") == PATHS
    assert verified("sycl", everything=True) == PATHS
    sycl = verified("sycl")
    assert sycl == sorted(sycl)
    for fam in FAMILIES:
        members = [p for p in PATHS if family_of(p) == fam]
        assert [p for p in sycl if family_of(p) == fam] == members[::SYCL_STRIDE]
