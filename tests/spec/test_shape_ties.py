"""Contract derivation finds tied input dimensions and scales only the free ones."""

import textwrap

import torch

from kernelwright.spec import Task, derive_contract, run_reference, variant_inputs
from kernelwright.spec.shape_ties import scaled_shapes, symbolic_shapes


def load(tmp_path, name, body):
    path = tmp_path / f"{name}.py"
    path.write_text("import torch\nfrom torch import nn\n\n" + textwrap.dedent(body))
    return Task.from_path(path)


AT_BT = """
class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a.T, b.T)

def get_inputs():
    return [torch.randn(64, 48), torch.randn(40, 64)]

def get_init_inputs():
    return []
"""


def test_export_ties_k_and_leaves_m_and_n_free():
    a, b = torch.randn(64, 48), torch.randn(40, 64)

    class M(torch.nn.Module):
        def forward(self, a, b):
            return torch.matmul(a.T, b.T)

    shapes, _ = symbolic_shapes(M(), [a, b])
    assert shapes[0][0] == shapes[1][1]  # K: one symbol for both
    assert len({shapes[0][0], shapes[0][1], shapes[1][0]}) == 3  # M, N, K all distinct
    scaled = scaled_shapes([a, b], (shapes, {}), lambda d: d // 2 + 1)
    assert scaled == [(33, 25), (21, 33)]


def test_matmul_of_transposes_gets_two_variants_without_get_shape_variants(tmp_path):
    task = load(tmp_path, "at_bt", AT_BT)
    contract = derive_contract(task)
    shapes = [[s.shape for s in v.inputs] for v in contract.variants]
    assert len(shapes) == 3 and len({tuple(s) for s in shapes}) == 3
    for a, b in shapes[1:]:
        assert a[0] == b[1] and a != (64, 48)  # K stays tied, the sizes moved
    module = task.load_module()
    for v in contract.variants[1:]:
        out = run_reference(module, variant_inputs(module, v, 0), 0)[0]
        assert tuple(out.shape) == tuple(v.outputs[0].shape)


def test_a_weight_fixed_feature_dim_stays_and_a_batch_of_one_grows(tmp_path):
    task = load(tmp_path, "lin_b1", """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 7)

    def forward(self, x):
        return self.fc(x)

def get_inputs():
    return [torch.randn(1, 5)]

def get_init_inputs():
    return []
""")
    shapes = [v.inputs[0].shape for v in derive_contract(task).variants]
    assert shapes == [(1, 5), (2, 5), (3, 5)]


def test_one_task_variant_is_filled_up_with_a_derived_one(tmp_path):
    task = load(tmp_path, "one_variant", AT_BT + """
def get_shape_variants():
    return {"mine": [(32, 48), (40, 32)]}
""")
    variants = derive_contract(task).variants
    assert [v.kind for v in variants] == ["nominal", "task", "derived"]
