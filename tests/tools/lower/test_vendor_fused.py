"""Vendor anchors with the epilogue fused as oneDNN post-ops: correct on awkward shapes."""

from __future__ import annotations

import pytest

from kernelwright.tools.lower import lower_task
from tests.tools.lower.lower_helpers import (
    CONV_MODEL,
    built_pair,
    check_lowered,
    plan_steps,
    task_file,
)

LINEAR = '''
import torch
from torch import nn
from torch.nn import functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear({k}, {n}, bias={bias})

    def forward(self, x):
        return {expr}

def get_inputs():
    return [torch.randn({m}, {k})]

def get_init_inputs():
    return []
'''

def _conv(nd: int, stride: int, bias: bool, expr: str, shape: str) -> str:
    return CONV_MODEL.format(conv=f"nn.Conv{nd}d(3, 5, 3, stride={stride}, padding=1, "
                             f"bias={bias})", expr=expr, shape=shape)


@pytest.mark.parametrize(("name", "expr", "attr", "bias", "mnk"), [
    ("relu_bias", "torch.relu(self.fc(x))", "relu", True, (33, 17, 65)),
    ("gelu_nobias", "F.gelu(self.fc(x))", "gelu", False, (1, 7, 5)),
    ("gelu_tanh", "F.gelu(self.fc(x), approximate='tanh')", "gelu", True, (9, 31, 40)),
    ("silu", "F.silu(self.fc(x))", "swish", True, (1, 64, 129)),
    ("leaky", "F.leaky_relu(self.fc(x), 0.2)", "leaky_relu", True, (17, 3, 70)),
    ("relu6", "torch.clamp(torch.relu(self.fc(x)), max=6.0)", "hardtanh", True, (5, 33, 9)),
    ("hardtanh", "F.hardtanh(self.fc(x), -0.5, 0.5)", "hardtanh", False, (65, 65, 65)),
    ("sigmoid_manual_bias", "torch.sigmoid(x @ self.fc.weight.t() + self.fc.bias)",
     "sigmoid", True, (3, 11, 13)),
    ("tanh_then_more", "torch.tanh(self.fc(x)) * 2.0 + 1.0", "tanh", True, (7, 19, 23)),
    ("kn_weight", "torch.relu(x @ self.fc.weight.t().contiguous() * 1.0)", None, False,
     (9, 21, 35)),
    ("kn_weight_bias", "F.silu(x @ self.fc.weight.t().contiguous() + self.fc.bias)", "swish",
     True, (9, 21, 35)),
    ("bias_only", "self.fc(x)", "none", True, (2, 129, 31)),
])
@pytest.mark.parametrize("form", ["fused", "blas"])
def test_fused_linear_matches_torch(tmp_path, name, expr, attr, bias, mnk, form):
    m, n, k = mnk
    task = task_file(tmp_path, f"lin_{name}", LINEAR.format(k=k, n=n, bias=bias, expr=expr, m=m))
    prog = lower_task(task, "cpp")
    assert prog.params["g0.impl"] == "vendor" or m * n * k * 2 < 2 * 64**3
    assert ("g0.vform" in prog.space) == (attr is not None)
    prog = prog.with_params({"g0.impl": "vendor", **(
        {"g0.vform": form} if attr is not None else {})})
    vendor = [s for s in plan_steps(prog) if "vendor" in s]
    assert len(vendor) == 1
    if form == "fused" and attr is None:  # a scale between GEMM and activation: not fused
        assert vendor[0]["vendor"] == "matmul"
    elif form == "fused":
        assert vendor[0]["vendor"] == "linear" and vendor[0]["attr"] == attr
        assert (vendor[0]["bias"] is not None) == bias
    else:
        assert vendor[0]["vendor"] == "matmul"
    check_lowered(prog, tol=2e-4)


@pytest.mark.parametrize(("name", "nd", "expr", "attr", "bias", "shape", "stride"), [
    ("relu", 2, "torch.relu(self.conv(x))", "relu", True, "1, 3, 9, 11", 1),
    ("silu_nobias", 2, "F.silu(self.conv(x))", "swish", False, "2, 3, 7, 5", 2),
    ("gelu_1d", 1, "F.gelu(self.conv(x))", "gelu", True, "1, 3, 31", 1),
    ("hardswish_3d", 3, "F.hardswish(self.conv(x))", "hardswish", True, "1, 3, 5, 6, 7", 1),
    ("leaky_more", 2, "F.leaky_relu(self.conv(x), 0.1) - 0.5", "leaky_relu", True,
     "3, 3, 8, 8", 1),
])
def test_fused_conv_matches_torch(tmp_path, name, nd, expr, attr, bias, shape, stride):
    task = task_file(tmp_path, f"conv_{name}", _conv(nd, stride, bias, expr, shape))
    prog = lower_task(task, "cpp").with_params({"g0.impl": "vendor", "g0.vform": "fused"})
    vendor = [s for s in plan_steps(prog) if "vendor" in s]
    assert vendor[0]["vendor"] == "conv" and vendor[0]["attr"] == attr
    check_lowered(prog, tol=2e-4)


def test_a_gemm_whose_intermediate_is_also_returned_keeps_its_epilogue_kernel(tmp_path):
    expr = "(self.fc(x), torch.relu(self.fc(x)))"
    task = task_file(tmp_path, "lin_two", LINEAR.format(k=40, n=24, bias=True, expr=expr, m=16))
    prog = lower_task(task, "cpp")
    for gi in (k.split(".")[0] for k in prog.space if k.endswith(".impl")):
        prog = prog.with_params({f"{gi}.impl": "vendor"})
    check_lowered(prog, tol=2e-4)


def test_a_prepacked_conv_weight_follows_in_place_weight_updates(tmp_path):
    import torch

    task = task_file(tmp_path, "conv_pack",
                     _conv(2, 1, True, expr="torch.relu(self.conv(x))", shape="2, 3, 9, 9"))
    prog = lower_task(task, "cpp").with_params({"g0.impl": "vendor", "g0.vform": "fused"})
    new, ref = built_pair(prog)
    x = torch.randn(2, 3, 9, 9)
    with torch.no_grad():
        torch.testing.assert_close(new(x), ref(x), atol=2e-4, rtol=2e-4)
        ref.conv.weight.mul_(-2.0)  # the harness loads new weights in place
        new.load_state_dict(ref.state_dict())
        torch.testing.assert_close(new(x), ref(x), atol=2e-4, rtol=2e-4)
