"""A library convolution may leave its result channels-last (``g<i>.vlayout``): every kernel
that reads it indexes it in that layout, and a result returned directly is a channels-last
tensor with torch's values."""

from __future__ import annotations

import pytest
import torch

from kernelwright.spec import Task
from kernelwright.tools.lower import lower_task
from tests.tools.lower.lower_helpers import (
    CONV_MODEL,
    built_pair,
    check_lowered,
    plan_steps,
    task_file,
)

CASES = {  # name -> (conv, expr, input shape)
    "direct_2d": ("nn.Conv2d(3, 5, 3, padding=1)", "self.conv(x)", "2, 3, 9, 11"),
    "relu_softmax_channels": ("nn.Conv2d(4, 7, 3)", "torch.softmax(torch.relu(self.conv(x)), 1)",
                              "2, 4, 8, 10"),
    "instance_norm": ("nn.Conv2d(3, 6, 3, stride=2)",
                      "F.instance_norm(self.conv(x)) / 2.0", "3, 3, 13, 9"),
    "transposed_3d_groups": ("nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1, groups=2)",
                             "torch.sigmoid(self.conv(x)).mean(dim=(2, 3))", "2, 4, 3, 5, 4"),
    "max_over_width": ("nn.Conv2d(2, 3, (1, 3), bias=False)",
                       "self.conv(x).amax(dim=-1) + 1.0", "1, 2, 5, 17"),
}


def _task(tmp_path, name: str) -> Task:
    conv, expr, shape = CASES[name]
    return task_file(tmp_path, f"cl_{name}", CONV_MODEL.format(conv=conv, expr=expr,
                                                               shape=shape))


def _channels_last_steps(prog) -> list[dict]:
    return [s for s in plan_steps(prog) if s.get("channels_last")]


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_channels_last_library_conv_matches_torch(tmp_path, name):
    prog = lower_task(_task(tmp_path, name), "cpp")
    assert prog.space.get("g0.vlayout") == ["plain", "cl"]
    assert prog.params["g0.vlayout"] == "plain"  # channels-last only when measured faster
    forms = [{"g0.vform": f} for f in prog.space.get("g0.vform", [])] or [{}]
    for form in forms:
        cl = prog.with_params({"g0.impl": "vendor", "g0.vlayout": "cl", **form})
        assert len(_channels_last_steps(cl)) == 1
        check_lowered(cl, tol=2e-4)


def test_a_returned_channels_last_result_keeps_torchs_values_and_layout(tmp_path):
    prog = lower_task(_task(tmp_path, "direct_2d"), "cpp").with_params(
        {"g0.impl": "vendor", "g0.vlayout": "cl"})
    new, ref = built_pair(prog)
    x = torch.randn(2, 3, 9, 11)
    with torch.no_grad():
        got, want = new(x), ref(x)
    assert got.is_contiguous(memory_format=torch.channels_last) and not got.is_contiguous()
    torch.testing.assert_close(got, want, atol=2e-4, rtol=2e-4)


def test_channels_last_is_offered_only_where_every_reader_honours_the_layout(tmp_path):
    two = lower_task(task_file(tmp_path, "two_convs", CONV_MODEL.format(
        conv="nn.Conv2d(3, 3, 3, padding=1)", expr="self.conv(torch.relu(self.conv(x)))",
        shape="1, 3, 8, 8")), "cpp")
    assert not [k for k in two.space if k.endswith(".vlayout")]  # a conv reads the other's
    one_d = task_file(tmp_path, "conv_1d", CONV_MODEL.format(
        conv="nn.Conv1d(3, 4, 3)", expr="torch.relu(self.conv(x))", shape="2, 3, 16"))
    assert "g0.vlayout" not in lower_task(one_d, "cpp").space


def test_the_planner_times_the_channels_last_forms_beside_the_others(tmp_path):
    from kernelwright.tools.lower.choose import choose_spaces

    prog = lower_task(_task(tmp_path, "relu_softmax_channels"), "cpp")

    def timer(p):  # channels-last is "fastest" here: the choice must follow the timer
        return (1.0 if p.params.get("g0.vlayout") == "cl" else 2.0), 0.5

    params, groups, _ = choose_spaces(prog, timer)
    assert params["g0.vlayout"] == "cl" and params["g0.impl"] == "vendor"
    assert "channels-last" in groups[0].form
    assert sum("channels-last" in k for k in groups[0].timings_ms) == len(
        prog.space.get("g0.vform", [None]))


def test_sycl_kernels_read_a_channels_last_result_too(tmp_path):
    prog = lower_task(_task(tmp_path, "instance_norm"), "sycl")
    cl = prog.with_params({"g0.impl": "vendor", "g0.vlayout": "cl"})
    assert len(_channels_last_steps(cl)) == 1
    check_lowered(cl, tol=2e-4)


@pytest.mark.parametrize("conv,expr,shape", [
    ("nn.ConvTranspose2d(4, 6, 4, stride=2)",
     "F.gelu(torch.clamp(self.conv(x) + 0.5, max=0.0)) * 2", "2, 4, 9, 7"),
    ("nn.Conv3d(3, 5, 3)", "torch.sigmoid(self.conv(x)) - 0.25", "1, 3, 6, 7, 12"),
])
def test_an_epilogue_over_a_channels_last_result_runs_the_channels_as_lanes(
        tmp_path, conv, expr, shape):
    """Along the last dim a channels-last operand is read a channel stride apart; the
    elementwise epilogue's simd loop runs over the channels instead (contiguous reads), inside
    a loop over the last dim, and still matches torch. In the plain layout it stays rows."""
    import re

    prog = lower_task(task_file(tmp_path, "cl_lanes", CONV_MODEL.format(
        conv=conv, expr=expr, shape=shape)), "cpp")
    channels = int(conv.split("(")[1].split(",")[1])
    lanes = re.compile(r"#pragma omp simd\s+for \(int v = 0; v < " + str(channels) + r"; \+\+v\)")
    plain = prog.with_params({"g0.impl": "vendor", "g0.vlayout": "plain"})
    assert not lanes.search(plain.candidate.source)
    cl = prog.with_params({"g0.impl": "vendor", "g0.vlayout": "cl"})
    assert lanes.search(cl.candidate.source.split("[EVOLVE_START]")[1])
    check_lowered(cl, tol=2e-4)
