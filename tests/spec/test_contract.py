from __future__ import annotations

import textwrap

import pytest
import torch

from kernelwright.errors import TaskError
from kernelwright.spec import Task, derive_contract, variant_inputs
from kernelwright.spec.contract import DEFAULT_SPACES

ROWWISE = """
import torch
from torch import nn

class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)

def get_inputs():
    return [torch.randn(128, 64)]
"""

MATMUL = """
import torch
from torch import nn

class Model(nn.Module):
    def forward(self, a, b):
        return a @ b

def get_inputs():
    return [torch.randn(64, 64), torch.randn(64, 32)]
"""


def load(tmp_path, text):
    path = tmp_path / "task.py"
    path.write_text(textwrap.dedent(text))
    return Task.from_path(path)


def test_contract_shapes_dtypes_and_default_tolerance(tmp_path):
    contract = derive_contract(load(tmp_path, ROWWISE))
    nominal = contract.nominal
    assert nominal.inputs[0].shape == (128, 64) and nominal.outputs[0].dtype == "float32"
    assert contract.tolerance_for("float32").atol == 1e-4
    assert contract.tolerance_for("float16").rtol == 1e-2
    assert contract.allowed_spaces == list(DEFAULT_SPACES)  # every space unless narrowed
    assert contract.preserve_inputs and not contract.degenerate


def test_derived_variants_are_odd_smaller_leading_dims(tmp_path):
    contract = derive_contract(load(tmp_path, ROWWISE))
    shapes = [v.inputs[0].shape for v in contract.variants]
    assert shapes == [(128, 64), (65, 64), (31, 64)]
    assert len({v.name for v in contract.variants}) == 3


def test_square_matmul_scales_only_the_first_input(tmp_path):
    contract = derive_contract(load(tmp_path, MATMUL))
    assert [v.inputs[0].shape for v in contract.variants][1:] == [(33, 64), (15, 64)]
    assert all(v.inputs[1].shape == (64, 32) for v in contract.variants)


def test_variant_inputs_are_fresh_per_seed_and_reproducible(tmp_path):
    task = load(tmp_path, ROWWISE)
    contract = derive_contract(task)
    module = task.load_module()
    variant = contract.variants[1]
    a0, a0_again, a1 = (variant_inputs(module, variant, s)[0] for s in (0, 0, 1))
    assert torch.equal(a0, a0_again) and not torch.equal(a0, a1)
    assert tuple(a0.shape) == variant.inputs[0].shape


def test_task_overrides_tolerances_spaces_and_variants(tmp_path):
    text = ROWWISE + textwrap.dedent(
        """
        TOLERANCES = {"float32": (1e-3, 1e-2)}
        ALLOWED_SPACES = ["custom_kernel", "framework"]

        def get_shape_variants():
            return {"tall": [(300, 64)], "wide": [(8, 1000)]}
        """
    )
    contract = derive_contract(load(tmp_path, text))
    assert contract.tolerance_for("float32").rtol == 1e-2
    assert contract.allows("framework")
    assert [v.name for v in contract.variants] == ["nominal", "tall", "wide"]
    assert contract.variants[2].outputs[0].shape == (8, 1000)
    text = contract.render()
    assert "variant wide (task)" in text and "rtol=0.01" in text and "framework" in text


def test_degenerate_task_is_detected(tmp_path):
    text = ROWWISE.replace("torch.softmax(x, dim=-1)", "torch.zeros_like(x)")
    contract = derive_contract(load(tmp_path, text))
    assert contract.degenerate and "does not change" in contract.degenerate_reason
    assert "degenerate" in contract.render()


def test_bad_allowed_space_lists_choices(tmp_path):
    with pytest.raises(TaskError, match="custom_kernel"):
        derive_contract(load(tmp_path, ROWWISE + "\nALLOWED_SPACES = ['magic']\n"))


def test_unscalable_task_is_checked_on_its_nominal_shapes_and_says_so(tmp_path):
    # a reference that accepts one shape only (KernelBench level 3's VanillaRNN fixes its
    # batch in __init__): its contract is that shape, with a note naming the way out
    text = ROWWISE.replace("torch.softmax(x, dim=-1)", "x.reshape(128, 64) * 2")
    contract = derive_contract(load(tmp_path, text))
    assert [v.kind for v in contract.variants] == ["nominal"]
    assert "get_shape_variants" in contract.fixed_shapes_reason
    assert "fixed shapes" in contract.render()


def test_scalable_task_has_no_fixed_shapes_note(tmp_path):
    contract = derive_contract(load(tmp_path, ROWWISE))
    assert len(contract.variants) == 3 and contract.fixed_shapes_reason is None
