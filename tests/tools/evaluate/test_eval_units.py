"""In-process units: poisoning, operator recording, the precision rule, timing statistics."""

from __future__ import annotations

import math

import torch

from kernelwright.tools.evaluate.poison import PoisonMode, poison_value
from kernelwright.tools.evaluate.precision import downgrade_message
from kernelwright.tools.evaluate.timing import summarise


def test_poison_fills_every_uninitialised_allocation():
    x = torch.randn(4, 4)
    with PoisonMode("nan"):
        made = [torch.empty(8), torch.empty_like(x), x.new_empty(3),
                torch.empty_strided((2, 2), (2, 1))]
    assert all(t.isnan().all() for t in made)
    with PoisonMode("big"):
        big = torch.empty(5, dtype=torch.float16)
        ints = torch.empty(5, dtype=torch.int32)
    assert (big == poison_value(torch.float16, "big")).all() and torch.isfinite(big).all()
    assert (ints == poison_value(torch.int32, "big")).all()


def test_recorded_compute_ops_exclude_allocation_copies_and_views():
    x = torch.randn(8, 8)
    with torch.no_grad(), PoisonMode() as mode:
        y = torch.empty_like(x)
        y.copy_(x.t().contiguous())
        y.view(-1)[:4].fill_(0)
    assert mode.compute_ops == set()
    with torch.no_grad(), PoisonMode() as mode:
        torch.nn.functional.gelu(x)
        x @ x
    assert mode.compute_ops == {"gelu", "mm"}


def test_precision_rule_flags_bf16_but_not_fp32_reordering():
    torch.manual_seed(0)
    a, b = torch.randn(64, 256), torch.randn(256, 64)
    ref64 = [a.double() @ b.double()]
    ref32 = [a @ b]
    reordered = [(a[:, :128] @ b[:128]) + (a[:, 128:] @ b[128:])]  # honest fp32, other order
    bf16 = [(a.bfloat16() @ b.bfloat16()).float()]
    assert downgrade_message(reordered, ref32, ref64) is None
    assert "lower precision" in downgrade_message(bf16, ref32, ref64)


def test_speedup_bounds_come_from_quartiles():
    t = summarise([2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0])
    assert t.speedup == 2.0 and t.speedup_low == 2.0 and t.speedup_high == 2.0
    t = summarise([1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 1.0, 1.0, 1.0, 1.0])
    assert t.speedup == 3.0 and t.speedup_low == 2.0 and t.speedup_high == 4.0
    assert math.isclose(t.reference_iqr_s, 2.0)


def test_all_close_matches_torch_allclose():
    from kernelwright.tools.evaluate._compare import all_close

    nan, inf = float("nan"), float("inf")
    r = torch.tensor([1.0, nan, inf, -inf, 0.0])
    cases = [r.clone(), torch.tensor([1.0 + 2e-4, nan, inf, -inf, 0.0]),
             torch.tensor([1.0, 0.0, inf, -inf, 0.0]), torch.tensor([1.0, nan, -inf, -inf, 0.0]),
             torch.tensor([1.00005, nan, inf, -inf, 5e-5])]
    for c in cases:
        assert all_close(c, r, 1e-4, 1e-4) == torch.allclose(c, r, 1e-4, 1e-4, equal_nan=True)
    big = torch.randn(3, 40_000)  # several chunks; the offending element in the last one
    for value, same in ((float("nan"), True), (float("inf"), True), (5.0, False)):
        c, r = big.clone(), big.clone()
        r[-1, -1], c[-1, -1] = value, value if same else 0.0
        assert all_close(c, r, 1e-4, 1e-4) == torch.allclose(c, r, 1e-4, 1e-4, equal_nan=True)
        c[-1, -2] += 1.0
        assert not all_close(c, r, 1e-4, 1e-4)


def test_timed_inputs_never_repeat_values():
    from kw_eval_helpers import task

    from kernelwright.spec import derive_contract
    from kernelwright.tools.evaluate.timing import input_stream

    t = task("gelu")
    stream = input_stream(t.load_module(), derive_contract(t).nominal, 0)
    seen = set()
    for _ in range(40):  # beyond one pool's reuses
        x = next(stream)[0]
        key = (float(x[0, 0]), float(x[-1, -1]))
        assert key not in seen
        seen.add(key)


def test_timing_stops_early_when_one_side_is_much_slower():
    from kernelwright.tools.evaluate.timing import _enough

    assert not _enough([0.1, 0.1], [0.1, 0.1], 0.1)  # fewer than 3 rounds
    assert _enough([0.05] * 3, [0.05] * 3, 0.1)  # both sides reached min_time
    assert not _enough([0.001] * 9, [0.2] * 9, 0.1)  # slow side, too few rounds for stats
    assert _enough([0.001] * 10, [0.06] * 10, 0.1)  # slow side spent 5x min_time
