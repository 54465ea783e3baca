"""Task specification: the task loader, its contract, and candidates."""

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
from kernelwright.spec.task import Task, import_task_module

__all__ = [
    "Candidate",
    "Contract",
    "ImplementationSpace",
    "ShapeVariant",
    "Task",
    "TensorSpec",
    "Tolerance",
    "derive_contract",
    "guess_backend",
    "import_task_module",
    "run_reference",
    "variant_inputs",
]
