"""Op specs of the example tasks: how each maps to a kernel template (for tests and benchmarks).

The planner derives such a mapping from a task's operator graph; for the examples it is written
down here once, so the templates can be checked against every example task.
"""

from __future__ import annotations

from kernelwright.templates import (
    ElementwiseSpec,
    GemmSpec,
    LayoutSpec,
    OpSpec,
    ReductionSpec,
    RowwiseNormSpec,
)

_NORM_INIT = [
    "self.features = features",
    "self.eps = eps",
    "self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(features))",
    "self.bias = nn.Parameter(0.1 * torch.randn(features))",
]

SPECS: dict[str, OpSpec] = {
    "l1_gelu": ElementwiseSpec(ops=["gelu_tanh"]),
    "l1_row_softmax": RowwiseNormSpec(kind="softmax"),
    "l1_layernorm": RowwiseNormSpec(
        kind="layernorm", init_args="features: int, eps: float = 1e-5", init_body=_NORM_INIT,
        eps="self.eps", weight="self.weight", bias="self.bias",
    ),
    "l1_rmsnorm": RowwiseNormSpec(
        kind="rmsnorm", init_args="features: int, eps: float = 1e-6",
        init_body=[
            "self.eps = eps",
            "self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(features))",
        ],
        eps="self.eps", weight="self.weight",
    ),
    "l1_sum_reduction": ReductionSpec(op="sum"),
    "l1_transpose": LayoutSpec(),
    "l1_matmul": GemmSpec(inputs=["a", "b"], a="a", b="b", b_layout="kn"),
    "l2_matmul_bias_gelu": GemmSpec(
        init_args="in_features: int, out_features: int",
        init_body=[
            "self.weight = nn.Parameter(torch.randn(out_features, in_features) "
            "/ math.sqrt(in_features))",
            "self.bias = nn.Parameter(0.1 * torch.randn(out_features))",
        ],
        imports=["import math"],
        b="self.weight", b_layout="nk", epilogue=["bias", "gelu_erf"], bias="self.bias",
    ),
    "l2_add_layernorm": RowwiseNormSpec(
        kind="layernorm", init_args="features: int, eps: float = 1e-5", init_body=_NORM_INIT,
        inputs=["x", "residual"], residual="residual", eps="self.eps", weight="self.weight",
        bias="self.bias",
    ),
    "l2_scaled_matmul_softmax": GemmSpec(
        init_args="scale: float", init_body=["self.scale = scale"], inputs=["q", "k"], a="q",
        b="k", b_layout="nk", batched=True, epilogue=["scale"], scale="self.scale", softmax=True,
    ),
}
