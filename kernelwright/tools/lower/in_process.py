"""A lowered program's candidate built in this process, holding the reference's weights.

For the planner's timing, the benchmarks and the tests; the harness builds candidates in its
own sandboxed process and never calls this.
"""

from __future__ import annotations

import types
from typing import Any

import torch

from kernelwright.spec.inputs import init_inputs_for


def built_candidate(prog: Any, module: types.ModuleType, training: bool | None = None,
                    strict: bool = True) -> tuple[torch.nn.Module, torch.nn.Module]:
    """``(candidate model, reference model)`` for ``prog`` and the task's ``module``.

    The reference is built first, right after ``torch.manual_seed(0)``, the seed the lowering
    builds its model with, so buffers folded into the program as constants match it; the
    candidate then loads its state and takes its mode (``training``, else the reference's).
    """
    lowered = types.ModuleType("kw_lowered")
    exec(compile(prog.candidate.source, "kw_lowered", "exec"), lowered.__dict__)  # noqa: S102
    torch.manual_seed(0)
    ref = module.Model(*init_inputs_for(module))
    if training is not None:
        ref.train(training)
    model = lowered.ModelNew(*init_inputs_for(module))
    model.load_state_dict(ref.state_dict(), strict=strict)
    model.train(ref.training)
    return model, ref
