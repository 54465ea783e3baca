"""benchmarks/kernelbench_cpu.py: the size rule that scales public problems to CPU sizes."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# a level-3 style file: the image size lives in a tuple; __init__ reads a value (.item()),
# which the meta device cannot give
PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.rate = torch.linspace(0, 1, 4)[1].item()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.fc(self.conv(x).mean((2, 3)) * self.rate)


batch_size = 8
num_classes = 1000
input_shape = (batch_size, 3, 224, 224)


def get_inputs():
    return [torch.randn(*input_shape)]


def get_init_inputs():
    return [num_classes]
'''


@pytest.fixture(scope="module")
def scaler():
    spec = importlib.util.spec_from_file_location(
        "kernelbench_cpu", ROOT / "benchmarks" / "kernelbench_cpu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tuple_elements_are_size_constants_only_when_asked(scaler):
    values = scaler.load(PROBLEM)
    tree = ast.parse(PROBLEM)
    assert scaler.size_constants(tree, values) == {"batch_size": 8, "num_classes": 1000}
    sizes = scaler.size_constants(tree, values, elements=True)
    assert sizes == {"batch_size": 8, "num_classes": 1000, "input_shape[2]": 224,
                     "input_shape[3]": 224}
    text = scaler.rewrite(PROBLEM, {**sizes, "input_shape[3]": 56})
    assert scaler.load(text)["input_shape"] == (8, 3, 224, 56)


def test_scaling_shrinks_the_tuple_and_measures_a_model_the_meta_device_cannot_build(scaler):
    text, account = scaler.scale(PROBLEM, max_mb=0.5, max_gflop=0.01, elements=True)
    assert "input_shape[2] 224->" in account
    shape = scaler.load(text)["input_shape"]
    assert shape[0] == 8 and shape[2] < 224 and shape[3] < 224
    assert scaler.gflop(scaler.load(text)) <= 0.01
    with pytest.raises(ValueError, match="no size constant can shrink further"):
        scaler.scale(PROBLEM, max_mb=0.5, max_gflop=0.01)  # the image size is out of reach
