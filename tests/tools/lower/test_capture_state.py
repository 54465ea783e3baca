"""Module state the reference keeps outside its state_dict: non-persistent buffers and tensor
attributes that forward reassigns (an RNN cell's hidden state)."""

from __future__ import annotations

import pytest
from lower_helpers import check_lowered, task_file

from kernelwright.errors import LoweringError
from kernelwright.tools.lower import lower_task

TAIL = '''
def get_inputs():
    return [torch.randn(4, 8), torch.randn(4, 8)]

def get_init_inputs():
    return []
'''

NON_PERSISTENT = '''
import torch

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.randn(8), persistent=False)

    def forward(self, x, y):
        return x * self.scale + y
''' + TAIL

# KernelBench level 3's VanillaRNN: the state is overwritten from an input, then reassigned
STATE_FROM_INPUT = '''
import torch

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.randn(4, 8)
        self.cell = torch.nn.Linear(16, 8)

    def forward(self, x, h0):
        self.hidden.copy_(h0)
        self.hidden = torch.tanh(self.cell(torch.cat((x, self.hidden), dim=1)))
        return self.hidden * 2
''' + TAIL

CARRIED_STATE = '''
import torch

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.total = torch.zeros(4, 8)

    def forward(self, x, y):
        self.total = self.total + x
        return self.total * y
''' + TAIL


def test_non_persistent_buffer_is_folded_as_a_constant(tmp_path):
    # not in the state_dict the harness loads, so the candidate cannot take it as a weight
    prog = lower_task(task_file(tmp_path, "non_persistent", NON_PERSISTENT), "cpp")
    assert "scale" in prog.consts and "scale" not in prog.state
    check_lowered(prog)


def test_state_overwritten_from_an_input_lowers(tmp_path):
    prog = lower_task(task_file(tmp_path, "state_from_input", STATE_FROM_INPUT), "cpp")
    check_lowered(prog)


# a registered buffer read and then updated: an average the output uses
CARRIED_BUFFER = '''
import torch

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(8))

    def forward(self, x, y):
        self.total.mul_(0.5).add_(x.mean(0))
        return y - self.total
''' + TAIL


@pytest.mark.parametrize("source", [CARRIED_STATE, CARRIED_BUFFER], ids=["attribute", "buffer"])
def test_state_carried_across_calls_is_refused_by_name(tmp_path, source):
    with pytest.raises(LoweringError, match=r"keeps state across calls.*self\.total"):
        lower_task(task_file(tmp_path, "carried_state", source), "cpp")


TRAINING_NORM = '''
import torch

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.BatchNorm1d(8)

    def forward(self, x, y):
        return self.norm(x) + y
''' + TAIL


def test_running_statistics_updated_in_training_are_not_carried_state(tmp_path):
    # the update reads the old running mean; the normalised output reads batch statistics
    prog = lower_task(task_file(tmp_path, "training_norm", TRAINING_NORM), "cpp")
    check_lowered(prog, training=True)
