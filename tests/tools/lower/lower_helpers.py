"""Helpers for lowering tests: run a lowered candidate in-process against its reference."""

from __future__ import annotations

from pathlib import Path

import torch

from kernelwright.spec import Task
from kernelwright.tools.lower.in_process import built_candidate

TASKS = Path(__file__).parent / "tasks"


def task(name: str) -> Task:
    return Task.from_path(TASKS / f"{name}.py")


CONV_MODEL = '''
import torch
from torch import nn
from torch.nn import functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = {conv}

    def forward(self, x):
        return {expr}

def get_inputs():
    return [torch.randn({shape})]

def get_init_inputs():
    return []
'''


def task_file(tmp_path: Path, name: str, text: str) -> Task:
    """A task written from ``text`` into ``tmp_path``."""
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return Task.from_path(path)


def plan_steps(prog) -> list[dict]:
    """The nominal signature's launch plan steps (kernels and library calls)."""
    from kernelwright.tools.lower.program import emit_program

    _, plans, _ = emit_program(prog)
    return next(iter(plans.values()))["steps"]


def check_lowered(prog, training: bool = False, seed: int = 1, tol: float = 1e-4) -> list[float]:
    """Build ``prog``'s candidate, give it the reference's weights, compare on fresh inputs.

    Returns the max abs error per output; fails the test on a mismatch.
    """
    ref_mod = prog.task.load_module()
    new, ref = built_candidate(prog, ref_mod, training)
    torch.manual_seed(seed)
    inputs = ref_mod.get_inputs()
    with torch.no_grad():
        want = ref(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
        got = new(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(want) == len(got)
    errors = []
    for w, g in zip(want, got, strict=True):
        assert w.shape == g.shape and w.dtype == g.dtype
        torch.testing.assert_close(g, w, atol=tol, rtol=tol, equal_nan=True)
        errors.append(float((w.double() - g.double()).abs().max()) if w.numel() else 0.0)
    return errors


def built_pair(prog):
    """``(candidate model, reference model)`` of a parameterless-init task, in eval mode,
    the candidate holding the reference's weights."""
    return built_candidate(prog, prog.task.load_module(), training=False)

