"""Convolutions are correct for every output-channel block (``ocb``) the schedule space offers.

Regression: a 3-D convolution whose channel block came out as 1 (out_channels 5 or 7) gave
wrong values (max error 2.96) because the emitter named its tap loops ``t0, t1, t2`` by hand
while value-numbered temporaries are ``t1, t2, ...`` too: with one accumulator the input-channel
temporary was ``t2`` and the third tap loop shadowed it.
"""

from __future__ import annotations

import re

import pytest
from lower_helpers import check_lowered, task

from kernelwright.tools.lower import lower_task

BLOCKS = [1, 2, 4, 8]


@pytest.fixture(scope="module")
def cpp_program():
    return lower_task(task("conv3d_odd_cout"), "cpp")


def with_block(prog, ocb: int):
    """``prog`` with every convolution group's channel block set to ``ocb``.

    The block belongs to the direct schedule (the implicit-GEMM one tiles by ``mr``/``nr``), so
    the direct algorithm is pinned: the default would take GEMM for the transposed convolution.
    """
    keys = [k for k in prog.space if k.endswith(".ocb")]
    assert len(keys) == 3 and all(prog.space[k] == BLOCKS for k in keys)
    kernel = {k: "kernel" for k in prog.space if k.endswith(".impl")}  # our emitter, not oneDNN
    direct = {k: "direct" for k in prog.space if k.endswith(".algo")}
    return prog.with_params({**{k: ocb for k in keys}, **kernel, **direct})


def kernels(source: str) -> list[str]:
    """The text of each emitted kernel (C++ and SYCL kernels both start with ``extern "C"``)."""
    return source.split('\nextern "C"')[1:]


@pytest.mark.parametrize("ocb", BLOCKS)
def test_no_name_is_declared_twice_in_a_convolution_kernel(cpp_program, ocb):
    """Each local of a kernel is declared once, so no loop counter can shadow a temporary."""
    bodies = [b for b in kernels(with_block(cpp_program, ocb).source)
              if b.lstrip().startswith("void k0_")]  # the nominal signature's kernels
    assert len(bodies) == 3
    for body in bodies:
        names = re.findall(r"(?:\bconst \w+|\bint|\bfloat|\bdouble) (\w+) =", body)
        repeated = sorted({n for n in names if names.count(n) > 1})
        assert not repeated, f"ocb={ocb}: {repeated} declared twice"


@pytest.mark.parametrize("ocb", BLOCKS)
def test_3d_convolutions_with_odd_out_channels_match_torch_on_cpp(cpp_program, ocb):
    assert len(check_lowered(with_block(cpp_program, ocb))) == 3


@pytest.mark.slow
@pytest.mark.requires_sycl
@pytest.mark.parametrize("ocb", BLOCKS)
def test_3d_convolutions_with_odd_out_channels_match_torch_on_sycl(ocb):
    assert len(check_lowered(with_block(lower_task(task("conv3d_odd_cout"), "sycl"), ocb))) == 3
