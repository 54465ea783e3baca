"""Kernels that differ only in their buffers are emitted once and launched for each."""

from __future__ import annotations

import re

import pytest
from lower_helpers import check_lowered, plan_steps, task

from kernelwright.agents.variants import view_of
from kernelwright.tools.lower import lower_task


@pytest.mark.parametrize("backend", ["cpp", pytest.param("sycl", marks=pytest.mark.requires_sycl)])
def test_alike_layers_share_one_kernel_in_every_variant(backend):
    prog = lower_task(task("alike_layers"), backend)
    defined = re.findall(r"\bvoid (k\d+_\w+)\(", prog.source)
    launched = [s["kernel"] for s in plan_steps(prog) if "kernel" in s]
    # three alike layers (each one kernel, or a GEMM and its epilogue's), then the head
    assert len(set(launched)) <= len(launched) - 2
    assert set(launched) <= set(defined)
    assert len(defined) == len(set(launched)) * len(prog.variants)
    assert "launch the code of an identical one" in prog.describe()
    check_lowered(prog)
    if backend == "cpp":  # the coder's view still aligns the variants (this model's SYCL
        # variants differ beyond their integers: it has no view, shared or not)
        view = view_of(prog.candidate.source)
        assert view is not None and view.variants == len(prog.variants)
        assert view.module(view.text).split() == prog.candidate.source.split()


def test_recurrence_steps_share_kernels_with_their_offsets_moved_to_the_launch():
    import torch
    from lower_helpers import built_pair

    prog = lower_task(task("unrolled_rnn"), "cpp")
    steps = plan_steps(prog)
    moved = [s for s in steps if s.get("offsets")]
    assert len(moved) == 4 and len({s["kernel"] for s in moved}) == 1  # steps 1..4 share
    assert [s["offsets"][0] for s in moved] == [4 * 7 * 24 * t for t in range(1, 5)]
    defined = re.findall(r"\bvoid (k0_\w+)\(", prog.source)
    assert len(defined) < len(steps) // 2
    new, ref = built_pair(prog)
    for t in (5, 3, 1):  # the nominal sequence and the variants' shorter ones
        x, h = torch.randn(t, 7, 24), torch.randn(7, 16)
        with torch.no_grad():
            torch.testing.assert_close(new(x, h), ref(x, h), atol=1e-5, rtol=1e-5)


def test_offsets_come_out_only_of_plain_subscripts():
    from kernelwright.tools.lower.kernel_offsets import rebased

    head = 'extern "C" void k0_1(const float* __restrict__ a, float* __restrict__ b) {\n'
    text, offsets = rebased(head + "b[i] = a[4*i + 96] + a[4*i + 100];\n}\n", ["a", "b"])
    assert offsets == [96 * 4, 0] and "a[4*i] + a[4*i + 4]" in text
    # a conditional binds looser than +: the constant belongs to one branch only
    cond = head + "b[i] = a[c ? i : j + 96];\n}\n"
    assert rebased(cond, ["a", "b"]) == (cond, [0, 0])
    # an argument passed on whole (a helper, pointer arithmetic) keeps every offset
    passed = head + "b[i] = a[i + 8]; kw_pack(a + 8);\n}\n"
    assert rebased(passed, ["a", "b"]) == (passed, [0, 0])
    # a double argument moves by 8 bytes per element
    double = head.replace("const float*", "const double*")
    assert rebased(double + "b[i] = a[i + 3];\n}\n", ["a", "b"])[1] == [24, 0]
