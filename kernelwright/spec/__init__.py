"""The shared vocabulary: task, contract, candidate, results, plans, profiles, decisions.

Names are imported on first use (PEP 562): ``from kernelwright.spec import Candidate`` does not
import torch (only the contract and the input makers need it), so `kernelwright runs` and
`kernelwright show` start fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "Candidate": "candidate",
    "guess_backend": "candidate",
    "Contract": "contract",
    "ImplementationSpace": "opclass",
    "ShapeVariant": "contract",
    "TensorSpec": "contract",
    "Tolerance": "contract",
    "derive_contract": "contract",
    "run_reference": "contract",
    "variant_inputs": "contract",
    "OperatorClass": "opclass",
    "MachinePeaks": "peaks",
    "Action": "plan",
    "Decision": "plan",
    "GroupSpace": "plan",
    "History": "plan",
    "Plan": "plan",
    "Profile": "plan",
    "Roofline": "plan",
    "best_profile": "plan",
    "stats_as_dict": "plan",
    "REJECTING": "result",
    "EvalResult": "result",
    "Flag": "result",
    "KernelStats": "result",
    "Level": "result",
    "Timing": "result",
    "VariantCheck": "result",
    "Verdict": "result",
    "fitness": "result",
    "verdict_for": "result",
    "Task": "task",
    "import_task_module": "task",
}

if TYPE_CHECKING:
    from kernelwright.spec.candidate import Candidate, guess_backend
    from kernelwright.spec.contract import (
        Contract,
        ShapeVariant,
        TensorSpec,
        Tolerance,
        derive_contract,
        run_reference,
        variant_inputs,
    )
    from kernelwright.spec.opclass import ImplementationSpace, OperatorClass
    from kernelwright.spec.peaks import MachinePeaks
    from kernelwright.spec.plan import (
        Action,
        Decision,
        GroupSpace,
        History,
        Plan,
        Profile,
        Roofline,
        best_profile,
        stats_as_dict,
    )
    from kernelwright.spec.result import (
        REJECTING,
        EvalResult,
        Flag,
        KernelStats,
        Level,
        Timing,
        VariantCheck,
        Verdict,
        fitness,
        verdict_for,
    )
    from kernelwright.spec.task import Task, import_task_module


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'kernelwright.spec' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"kernelwright.spec.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "REJECTING",
    "Action",
    "Candidate",
    "Contract",
    "Decision",
    "GroupSpace",
    "EvalResult",
    "Flag",
    "History",
    "ImplementationSpace",
    "KernelStats",
    "Level",
    "MachinePeaks",
    "OperatorClass",
    "Plan",
    "Profile",
    "Roofline",
    "ShapeVariant",
    "Task",
    "TensorSpec",
    "Timing",
    "Tolerance",
    "VariantCheck",
    "Verdict",
    "best_profile",
    "derive_contract",
    "fitness",
    "verdict_for",
    "guess_backend",
    "import_task_module",
    "run_reference",
    "stats_as_dict",
    "variant_inputs",
]
