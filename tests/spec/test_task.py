from __future__ import annotations

import textwrap

import pytest

from kernelwright.errors import KernelwrightError, TaskError
from kernelwright.spec import Task, derive_contract

GOOD = """
import torch
from torch import nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2

def get_inputs():
    return [torch.randn(64, 32)]

def get_init_inputs():
    return []
"""


def write(tmp_path, text, name="task.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_loads_a_good_task(tmp_path):
    task = Task.from_path(write(tmp_path, GOOD))
    assert task.name == "task"
    assert len(task.source_hash) == 16


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("def broken(:\n    pass\n", "syntax error at line 1"),
        ("import torch\ndef get_inputs():\n    return []\n", "does not define Model"),
        (
            "from torch import nn\nclass Model(nn.Module):\n    pass\n",
            "does not define get_inputs",
        ),
        ("raise RuntimeError('boom')\n", "raised RuntimeError while being imported"),
    ],
)
def test_bad_task_file_names_file_problem_and_fix(tmp_path, text, problem):
    path = write(tmp_path, text)
    with pytest.raises(TaskError) as err:
        Task.from_path(path)
    message = str(err.value)
    assert str(path) in message and problem in message
    assert isinstance(err.value, KernelwrightError) and isinstance(err.value, ValueError)


def test_missing_file(tmp_path):
    with pytest.raises(TaskError, match="does not exist"):
        Task.from_path(tmp_path / "nope.py")


def test_reference_that_raises(tmp_path):
    text = GOOD.replace("return torch.relu(x) * 2", "raise ValueError('bad reference')")
    with pytest.raises(TaskError, match="reference Model raised ValueError.*bad reference"):
        derive_contract(Task.from_path(write(tmp_path, text)))


def test_outputs_that_are_not_tensors(tmp_path):
    text = GOOD.replace("return torch.relu(x) * 2", "return 3.0")
    with pytest.raises(TaskError, match="returned float, not tensors"):
        derive_contract(Task.from_path(write(tmp_path, text)))
