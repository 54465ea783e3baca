"""Vendor-anchor candidates (oneDNN post-ops, library call + our epilogue) verified and timed by
the real harness (sandboxed workers, every shape variant, budget 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.config import Settings
from kernelwright.spec import Task
from kernelwright.tools.evaluate import WorkerPool
from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.program import emit_program

ROOT = Path(__file__).resolve().parents[3]
CASES = [
    ("tests/corpus/tasks/l2_linear_gelu_vendor.py", "fused", "linear"),
    ("examples/tasks/l2_matmul_bias_gelu.py", "blas", "matmul"),
    ("tests/corpus/tasks/gemm_both_transposed.py", None, "matmul"),
    ("tests/corpus/tasks/l2_conv2d_min_tanh_vendor.py", None, "conv"),
    ("tests/corpus/tasks/conv2d_stem_batch1.py", None, "conv"),
    ("tests/corpus/tasks/l2_conv2d_min_tanh_vendor.py", "channels_last", "conv"),
]


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    root = tmp_path_factory.mktemp("vendor_harness")
    settings = Settings(data_dir=root / "data", cache_dir=root / "cache", seeds=3,
                        min_time_s=1e-3, warmup_calls=0, max_repeats=3, backend="cpp",
                        promote_builds=False)
    with WorkerPool(settings) as p:
        yield p


@pytest.mark.slow
@pytest.mark.parametrize(("path", "form", "kind"), CASES, ids=[Path(c[0]).stem for c in CASES])
def test_vendor_candidate_passes_the_harness(pool, path, form, kind):
    task = Task.from_path(ROOT / path)
    prog = lower_task(task, "cpp")
    params = {k: "vendor" for k in prog.space if k.endswith(".impl")}
    if form == "channels_last":  # copies in the library's layout: still no framework op
        params["g0.vlayout"] = "cl"
    elif form is not None:
        params["g0.vform"] = form
    prog = prog.with_params(params)
    _, plans, _ = emit_program(prog)
    kinds = {s["vendor"] for plan in plans.values() for s in plan["steps"] if "vendor" in s}
    assert kind in kinds
    result = pool.evaluate(task, prog.candidate)
    assert result.correct, result.error
    assert result.timing is not None and result.timing.candidate_ms > 0


ATTENTION_TASK = '''
import torch
from torch.nn import functional as F

ALLOWED_SPACES = ["custom_kernel", "vendor_library"]


class Model(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True) * 0.5


def get_inputs():
    return [torch.randn(2, 3, 24, 16), torch.randn(2, 3, 40, 16), torch.randn(2, 3, 40, 16)]


def get_init_inputs():
    return []
'''


@pytest.mark.slow
@pytest.mark.parametrize("impl", ["kernel", "vendor"])
def test_attention_as_our_kernel_or_torchs_passes_a_vendor_contract(pool, tmp_path, impl):
    path = tmp_path / "attention_vendor.py"
    path.write_text(ATTENTION_TASK)
    task = Task.from_path(path)
    prog = lower_task(task, "cpp")
    assert prog.space["g0.impl"] == ["kernel", "vendor"]
    prog = prog.with_params({"g0.impl": impl})
    _, plans, _ = emit_program(prog)
    steps = [s for plan in plans.values() for s in plan["steps"]]
    assert any(s.get("vendor") == "attention" for s in steps) == (impl == "vendor")
    result = pool.evaluate(task, prog.candidate)
    assert result.correct, result.error
