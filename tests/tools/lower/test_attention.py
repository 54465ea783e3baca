"""Scaled dot-product attention lowers to one attention kernel (``ir.Attention``) that
matches torch on awkward shapes: causal with fewer or more queries than keys, odd widths,
an explicit scale, broadcast batch dims, transposed operands, an epilogue, float64; forms it
does not take (a mask) still lower through torch's decomposition."""

from __future__ import annotations

import pytest

from kernelwright.agents.lowered import operator_class
from kernelwright.spec import Task
from kernelwright.spec.opclass import OperatorClass
from kernelwright.tools.lower import lower_task
from tests.tools.lower.lower_helpers import check_lowered, task_file

MODEL = '''
import torch
from torch.nn import functional as F

class Model(torch.nn.Module):
    def forward(self, q, k, v):
        return {expr}

def get_inputs():
    return [torch.randn({q}{dt}), torch.randn({k}{dt}), torch.randn({v}{dt})]

def get_init_inputs():
    return []
'''

SDPA = "F.scaled_dot_product_attention"
CASES = {  # name -> (expression, q shape, k shape, v shape, dtype)
    "plain": (f"{SDPA}(q, k, v)", "2, 3, 17, 8", "2, 3, 17, 8", "2, 3, 17, 8", ""),
    "causal_short_queries": (f"{SDPA}(q, k, v, is_causal=True)", "2, 2, 5, 7", "2, 2, 19, 7",
                             "2, 2, 19, 3", ""),
    "causal_long_queries": (f"{SDPA}(q, k, v, is_causal=True)", "1, 3, 70, 5", "1, 3, 33, 5",
                            "1, 3, 33, 9", ""),
    "scale_and_3d": (f"{SDPA}(q, k, v, scale=0.3)", "4, 9, 6", "4, 130, 6", "4, 130, 11", ""),
    "broadcast_heads": (f"{SDPA}(q, k, v)", "2, 4, 10, 8", "2, 1, 12, 8", "1, 1, 12, 5", ""),
    "transposed_operands": (f"{SDPA}(q.transpose(1, 2), k.transpose(1, 2), "
                            "v.transpose(1, 2)).transpose(1, 2) * 2.0 + 1.0",
                            "2, 13, 3, 8", "2, 21, 3, 8", "2, 21, 3, 8", ""),
    "wide_rows": (f"{SDPA}(q, k, v, is_causal=True)", "1, 2, 37, 80", "1, 2, 23, 80",
                  "1, 2, 23, 72", ""),  # 152 query + value elements: arrays, not registers
    "float64": (f"{SDPA}(q, k, v, is_causal=True)", "1, 2, 9, 4", "1, 2, 9, 4", "1, 2, 9, 4",
                ", dtype=torch.float64"),
}


def _task(tmp_path, name: str, expr: str, q: str, k: str, v: str, dt: str) -> Task:
    return task_file(tmp_path, f"attn_{name}", MODEL.format(expr=expr, q=q, k=k, v=v, dt=dt))


@pytest.mark.parametrize("name", sorted(CASES))
def test_attention_matches_torch_at_every_tile(tmp_path, name):
    prog = lower_task(_task(tmp_path, name, *CASES[name]), "cpp")
    kinds = [g.kind for g in prog.variants[0].sched.groups]
    assert kinds.count("attention") == 1 and "gemm" not in kinds and "rows" not in kinds
    assert operator_class(prog) == OperatorClass.GEMM  # what the planner plans it as
    check_lowered(prog, tol=1e-4)  # the defaults
    for br, bc in ((1, 16), (4, 16), (16, 128)):  # blocks that cut rows and keys unevenly
        check_lowered(prog.with_params({"g0.br": br, "g0.bc": bc}), tol=1e-4)


@pytest.mark.parametrize("name", ["causal_short_queries", "broadcast_heads", "wide_rows"])
def test_sycl_attention_matches_torch(tmp_path, name):
    prog = lower_task(_task(tmp_path, name, *CASES[name]), "sycl")
    assert [g.kind for g in prog.variants[0].sched.groups] == ["attention"]
    check_lowered(prog, tol=1e-4)


def test_a_masked_attention_takes_torchs_decomposition(tmp_path):
    mask = "(q.sum(-1, keepdim=True) > 0) | (k.sum(-1)[:, :, None] > 0)"
    expr = f"{SDPA}(q, k, v, attn_mask={mask})"
    prog = lower_task(_task(tmp_path, "masked", expr, "1, 2, 6, 4", "1, 2, 6, 4", "1, 2, 6, 4",
                            ""), "cpp")
    assert "attention" not in [g.kind for g in prog.variants[0].sched.groups]
    check_lowered(prog, tol=1e-4)


@pytest.mark.requires_nvcc
@pytest.mark.slow
def test_cuda_attention_runs_correctly_on_the_emulator(tmp_path):
    from kernelwright.config import Settings
    from kernelwright.tools.backends import BackendRegistry

    assert BackendRegistry(Settings()).get("cuda").status().can_run
    prog = lower_task(_task(tmp_path, "tiny", f"{SDPA}(q, k, v, is_causal=True)", "1, 2, 5, 4",
                            "1, 2, 6, 4", "1, 2, 6, 3", ""), "cuda")
    assert [g.kind for g in prog.variants[0].sched.groups] == ["attention"]
    check_lowered(prog, tol=1e-4)


def test_torchs_fused_kernel_is_the_library_option_where_it_takes_the_operands(tmp_path):
    from kernelwright.tools.lower.choose import choose_spaces

    fits = lower_task(_task(tmp_path, "plain", *CASES["plain"]), "cpp")
    assert fits.space["g0.impl"] == ["kernel", "vendor"] and fits.params["g0.impl"] == "kernel"
    check_lowered(fits.with_params({"g0.impl": "vendor"}), tol=1e-4)
    params, groups, _ = choose_spaces(fits, lambda p: (
        (1.0 if p.params["g0.impl"] == "vendor" else 2.0), 0.0))
    assert params["g0.impl"] == "vendor" and groups[0].space.value == "vendor_library"
    other = lower_task(_task(tmp_path, "widths", *CASES["causal_short_queries"]), "cpp")
    assert "g0.impl" not in other.space  # values of another width: no library form
    _, groups, _ = choose_spaces(other, lambda p: (1.0, 0.0))
    assert "does not take these operands" in groups[0].why



HAND_WRITTEN = {  # name -> (forward body, input shapes, attention kernels expected)
    "bmm_div": ("torch.bmm(torch.softmax(torch.bmm(q, k.transpose(1, 2)) / 5.0, dim=-1), v)",
                ("3, 17, 6", "3, 23, 6", "3, 23, 5"), 1),
    "mingpt_4d": ("torch.softmax((q @ k.transpose(-2, -1)) * 0.3, dim=-1) @ v",
                  ("2, 4, 9, 8", "2, 4, 9, 8", "2, 4, 9, 8"), 1),
    "mm_2d": ("torch.softmax(q @ k.t(), dim=1) @ v", ("7, 4", "11, 4", "11, 3"), 1),
    "scores_returned": ("(torch.softmax((s := q @ k.transpose(-2, -1)), -1) @ v, s)",
                        ("2, 5, 4", "2, 6, 4", "2, 6, 3"), 0),
    "softmax_not_last": ("torch.softmax(q @ k.transpose(-2, -1), 1) @ v",
                         ("2, 5, 4", "2, 5, 4", "2, 5, 3"), 0),
}


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_hand_written_attention_folds_into_one_kernel(tmp_path, name):
    body, (q, k, v), kernels = HAND_WRITTEN[name]
    text = MODEL.replace("{expr}", body.replace("{", "{{").replace("}", "}}"))
    prog = lower_task(task_file(tmp_path, f"hand_{name}", text.format(q=q, k=k, v=v, dt="")),
                      "cpp")
    kinds = [g.kind for g in prog.variants[0].sched.groups]
    assert kinds.count("attention") == kernels, kinds
    check_lowered(prog, tol=1e-4)


MASKED = '''
import torch
from torch.nn import functional as F

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("bias", {buffer}.view(1, 1, 12, 12))

    def forward(self, q, k, v):
        att = (q @ k.transpose(-2, -1)) * 0.25
        att = att.masked_fill({mask}, float("-inf"))
        return F.dropout(F.softmax(att, dim=-1), {drop}, self.training) @ v

def get_inputs():
    return [torch.randn(2, 3, 12, 8), torch.randn(2, 3, 12, 8), torch.randn(2, 3, 12, 5)]

def get_init_inputs():
    return []
'''


@pytest.mark.parametrize(("name", "buffer", "mask", "drop", "folded"), [
    # KernelBench level 3's minGPT attention: a tril buffer and dropout(p=0), a clone
    ("mingpt_causal", "torch.tril(torch.ones(12, 12))", "self.bias == 0", 0.0, 1),
    ("anti_causal", "torch.triu(torch.ones(12, 12))", "self.bias == 0", 0.0, 0),
    ("from_the_input", "torch.tril(torch.ones(12, 12))", "q.sum(-1, keepdim=True) > 0", 0.0,
     0),
])
def test_a_causal_mask_from_a_buffer_folds_other_masks_do_not(tmp_path, name, buffer, mask,
                                                              drop, folded):
    prog = lower_task(task_file(tmp_path, f"masked_{name}",
                                MASKED.format(buffer=buffer, mask=mask, drop=drop)), "cpp")
    groups = prog.variants[0].sched.groups
    assert [g.kind for g in groups].count("attention") == folded
    if folded:
        assert groups[[g.kind for g in groups].index("attention")].main[0].causal
    check_lowered(prog, tol=1e-4)
