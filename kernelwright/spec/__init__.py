"""The shared vocabulary: task, contract, candidate, results, plans, profiles, decisions."""

from kernelwright.spec.candidate import Candidate, guess_backend
from kernelwright.spec.contract import (
    Contract,
    ImplementationSpace,
    ShapeVariant,
    TensorSpec,
    Tolerance,
    derive_contract,
    run_reference,
    variant_inputs,
)
from kernelwright.spec.opclass import OperatorClass
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
