"""LoweredProgram: schedule space, with_params, describe, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from lower_helpers import check_lowered, task, task_file
from torch import nn

from kernelwright.errors import LoweringError
from kernelwright.spec import Candidate, Task
from kernelwright.tools.lower import LoweredProgram, lower_task


def test_space_and_params_change_the_kernels_not_the_result():
    prog = lower_task(task("layernorm3"), "sycl")
    assert isinstance(prog, LoweredProgram)
    assert "g0.strategy" in prog.space and "g0.wg" in prog.space
    assert isinstance(prog.candidate, Candidate)
    flip = "group" if prog.params["g0.strategy"] != "group" else "item"
    other = prog.with_params({"g0.strategy": flip})
    assert other.params["g0.strategy"] == flip
    assert other.candidate.source != prog.candidate.source
    assert other.candidate.params != prog.candidate.params


@pytest.mark.requires_sycl
def test_both_row_strategies_are_correct_on_sycl():
    prog = lower_task(task("layernorm3"), "sycl")
    for strategy in ("group", "item", "lanes"):
        check_lowered(prog.with_params({"g0.strategy": strategy, "g0.wg": 32}))


def test_unknown_parameter_is_rejected_with_the_choices():
    prog = lower_task(task("relu_chain"), "cpp")
    with pytest.raises(ValueError, match="choose from"):
        prog.with_params({"nope": 1})


def test_describe_names_groups_kernels_and_space():
    text = lower_task(task("gemm_epi"), "cpp").describe()
    assert "gemm" in text and "implementation space" in text and "k0_0" in text


def test_unknown_backend():
    with pytest.raises(ValueError, match="sycl"):
        lower_task(task("relu_chain"), "metal")


def _write(tmp_path, body: str) -> Task:
    path = tmp_path / "t.py"
    path.write_text("import torch\nfrom torch import nn\n" + body)
    return Task.from_path(path)


@pytest.mark.slow
def test_unsupported_operator_raises_lowering_error_naming_it(tmp_path):
    t = _write(tmp_path, (
        "class Model(nn.Module):\n"
        "    def forward(self, x):\n        return torch.sort(x, dim=1)[0]\n"
        "def get_inputs():\n    return [torch.randn(5, 7)]\n"
        "def get_init_inputs():\n    return []\n"))
    with pytest.raises(LoweringError, match="sort"):
        lower_task(t, "cpp")


def test_lowering_error_is_a_kernelwright_error():
    from kernelwright.errors import KernelwrightError

    assert issubclass(LoweringError, KernelwrightError)
    assert nn is not None and torch is not None


def test_lowering_uses_the_module_the_task_already_imported(monkeypatch):
    """docs/ARCHITECTURE.md: the orchestrator imports a task file once (Task.from_path)."""
    t = task("relu_chain")
    t.module()  # imported (Task.from_path does this)

    def second_import(self):
        raise AssertionError("lower_task imported the task file a second time")

    monkeypatch.setattr(Task, "load_module", second_import)
    program = lower_task(t, "cpp")
    assert program.source


def test_library_choice_of_a_train_mode_group_leaves_eval_mode_groups_alone(tmp_path):
    # train: conv, rows (batch-norm statistics), conv, rows (softmax), conv; eval folds the
    # batch norm: conv, conv, rows, conv. Group parameters are named by the nominal (train)
    # variant's numbers, so g2's library call met eval's softmax rows (KeyError: 'rows',
    # KernelBench level 3 UNetSoftmax)
    text = (Path(__file__).parent / "tasks" / "conv_bn.py").read_text().replace(
        "return torch.relu(self.bn(self.conv(x)))",
        "return self.head(torch.softmax(self.conv2(self.bn(self.conv(x))), -1))").replace(
        "self.bn = nn.BatchNorm2d(8)",
        "self.bn = nn.BatchNorm2d(8)\n        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)\n"
        "        self.head = nn.Conv2d(8, 4, 1)")
    prog = lower_task(task_file(tmp_path, "bn_softmax", text), "cpp")
    kinds = {v.key.split("|")[0]: [g.kind for g in v.sched.groups] for v in prog.variants}
    assert kinds["train"][2] == "conv" and kinds["eval"][2] == "rows"
    vendor = prog.with_params({k: "vendor" for k in prog.space if k.endswith(".impl")})
    check_lowered(vendor, training=True)
    check_lowered(vendor, training=False)


FIRST_SLICE = '''
import torch
from torch import nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 32)

    def forward(self, x, h):
        return self.fc(h[0]) + x

def get_inputs():
    return [torch.randn(10, 32), torch.randn(3, 10, 64)]

def get_init_inputs():
    return []
'''


def test_library_call_reads_the_first_slice_of_a_larger_buffer(tmp_path):
    """A linear over h[0] of an RNN state (layers, batch, hidden): the library operand is the
    buffer's first batch x hidden elements, contiguous, at offset 0 (level 3's LSTMHn failed:
    "shape '[10, 64]' is invalid for input of size 3840")."""
    prog = lower_task(task_file(tmp_path, "first_slice", FIRST_SLICE), "cpp")
    vendor = prog.with_params({k: "vendor" for k in prog.space if k.endswith(".impl")})
    assert "vendor_linear" in vendor.describe()
    check_lowered(vendor)


DROPPED_INDICES = '''
import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        values = torch.min(x, dim=1)[0]                  # the indices are dropped
        top, where = torch.max(x, dim=2)                 # both kept
        return values * 2, top + where.to(x.dtype)


def get_inputs():
    return [torch.randn(4, 33, 40)]


def get_init_inputs():
    return []
'''


def test_values_no_output_depends_on_get_no_kernel(tmp_path):
    """``torch.min(x, dim)[0]`` traces an index reduction too: it is left out of the program
    (it was a kernel of its own, run on every call), while ``max`` keeps its indices, which an
    output reads."""
    path = tmp_path / "dropped.py"
    path.write_text(DROPPED_INDICES)
    prog = lower_task(Task.from_path(path), "cpp")
    check_lowered(prog)
    graph = prog.variants[0].graph
    reached = {n.id for n in graph.outputs}
    stack = list(graph.outputs)
    while stack:
        for d in stack.pop().deps:
            if d.id not in reached:
                reached.add(d.id)
                stack.append(d)
    assert {n.id for n in graph.nodes} <= reached  # every node feeds an output
    kinds = [getattr(n, "op", None) for n in graph.nodes]
    assert "argmax" in kinds and "argmin" not in kinds, kinds
