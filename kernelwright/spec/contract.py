"""The contract of a task: what any correct and admissible implementation must satisfy (HIERA).

Derived once by running the reference: input/output shapes and dtypes, per-dtype tolerances,
shape variants, the implementation spaces allowed, and whether the task is degenerate.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field

from kernelwright.errors import TaskError
from kernelwright.spec.inputs import (
    NOMINAL,
    as_tensor_list,
    init_inputs_for,
    inputs_like,
    nominal_inputs,
    variant_maker,
)
from kernelwright.spec.opclass import ImplementationSpace  # noqa: F401  (re-exported)
from kernelwright.spec.shape_ties import grown_batch, scaled_shapes, symbolic_shapes
from kernelwright.spec.task import Task

DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (1e-2, 1e-2),
}


# A task allows every space unless its file (ALLOWED_SPACES), a chat request or --spaces
# narrows it.
DEFAULT_SPACES = (ImplementationSpace.CUSTOM_KERNEL, ImplementationSpace.VENDOR_LIBRARY,
                  ImplementationSpace.FRAMEWORK)
SPACE_WORDS = {"all": DEFAULT_SPACES, "custom": (ImplementationSpace.CUSTOM_KERNEL,),
               "vendor": (ImplementationSpace.VENDOR_LIBRARY,),
               "framework": (ImplementationSpace.FRAMEWORK,)}


def parse_spaces(text: str) -> list[ImplementationSpace]:
    """``"all"``, ``"custom"``, ``"custom,vendor"`` (any case; full space names too).

    Raises:
        ValueError: an unknown word; the message names the choices.
    """
    out: list[ImplementationSpace] = []
    for word in (w.strip().lower() for w in str(text).split(",")):
        spaces = SPACE_WORDS.get(word) or next(
            ((s,) for s in ImplementationSpace if s.value == word), None)
        if spaces is None:
            raise ValueError(f"unknown implementation space {word!r}; choose from "
                             f"{', '.join(SPACE_WORDS)} (or a comma list, e.g. custom,vendor)")
        out += [s for s in spaces if s not in out]
    return out


class TensorSpec(BaseModel):
    model_config = ConfigDict(frozen=True)
    shape: tuple[int, ...]
    dtype: str

    def __str__(self) -> str:
        return f"{self.dtype}[{', '.join(map(str, self.shape))}]"


class Tolerance(BaseModel):
    model_config = ConfigDict(frozen=True)
    atol: float
    rtol: float


class ShapeVariant(BaseModel):
    """One input configuration a candidate must be correct on."""

    model_config = ConfigDict(frozen=True)
    name: str
    kind: Literal["nominal", "task", "derived"]
    inputs: list[TensorSpec | None]
    outputs: list[TensorSpec]


class Contract(BaseModel):
    """Everything a correct, admissible implementation of a task must satisfy.

    Example:
        >>> task = Task.from_path("examples/tasks/l1_gelu.py")  # doctest: +SKIP
        >>> contract = derive_contract(task)  # doctest: +SKIP
        >>> print(contract.render())  # doctest: +SKIP
    """

    model_config = ConfigDict(frozen=True)

    task_name: str
    task_hash: str
    variants: list[ShapeVariant]
    tolerances: dict[str, Tolerance]
    allowed_spaces: list[ImplementationSpace] = Field(default_factory=lambda: list(DEFAULT_SPACES))
    preserve_inputs: bool = True
    degenerate: bool = False
    degenerate_reason: str | None = None
    fixed_shapes_reason: str | None = None  # set when fewer than two variants could be derived

    @property
    def nominal(self) -> ShapeVariant:
        return self.variants[0]

    def tolerance_for(self, dtype: str) -> Tolerance:
        key = dtype.removeprefix("torch.")
        return self.tolerances.get(key) or Tolerance(atol=0.0, rtol=0.0)

    def allows(self, space: ImplementationSpace | str) -> bool:
        return ImplementationSpace(space) in self.allowed_spaces

    def narrowed(self, spaces: list[ImplementationSpace] | None) -> Contract:
        """This contract with only the allowed spaces also in ``spaces`` (None: unchanged).

        Raises:
            TaskError: nothing is left (the task file and the request disagree).
        """
        if spaces is None:
            return self
        kept = [s for s in self.allowed_spaces if s in spaces]
        if not kept:
            mine = ", ".join(s.value for s in self.allowed_spaces)
            raise TaskError(f"task {self.task_name} allows only {mine}; the requested spaces "
                            f"({', '.join(s.value for s in spaces)}) leave none. Ask for one "
                            "the task allows, or widen ALLOWED_SPACES in the task file.")
        return self.model_copy(update={"allowed_spaces": kept})

    def render(self) -> str:
        """Plain text for prompts and reports."""
        lines = [f"Task {self.task_name} (hash {self.task_hash})"]
        for v in self.variants:
            ins = ", ".join(str(s) if s else "scalar" for s in v.inputs)
            outs = ", ".join(map(str, v.outputs))
            lines.append(f"  variant {v.name} ({v.kind}): inputs {ins} -> outputs {outs}")
        used = {o.dtype for v in self.variants for o in v.outputs}
        for dtype in sorted(used):
            tol = self.tolerance_for(dtype)
            lines.append(f"  tolerance {dtype}: atol={tol.atol:g} rtol={tol.rtol:g}")
        lines.append("  inputs must not be modified" if self.preserve_inputs else "")
        spaces = ", ".join(s.value for s in self.allowed_spaces)
        lines.append(f"  allowed implementation spaces: {spaces}")
        if self.degenerate:
            lines.append(f"  WARNING degenerate task: {self.degenerate_reason}")
        if self.fixed_shapes_reason:
            lines.append(f"  note, fixed shapes: {self.fixed_shapes_reason}")
        return "\n".join(line for line in lines if line)


def variant_inputs(module: ModuleType, variant: ShapeVariant, seed: int) -> list[Any]:
    """Fresh inputs of ``variant`` drawn under ``seed`` (same tensors in every process)."""
    if variant.kind == "nominal":
        return nominal_inputs(module, seed)
    if variant.kind == "task":
        return variant_maker(module, variant.name, module.get_shape_variants()[variant.name])(seed)
    shapes = [None if s is None else s.shape for s in variant.inputs]
    return inputs_like(nominal_inputs(module, seed), shapes, seed)


def run_reference(module: ModuleType, inputs: list[Any], seed: int = 0) -> list[torch.Tensor]:
    """Build ``Model`` under ``seed`` and run it once on ``inputs`` without autograd."""
    torch.manual_seed(seed)
    model = module.Model(*init_inputs_for(module))
    with torch.no_grad():
        return as_tensor_list(model(*inputs), "reference Model")


def derive_contract(task: Task, seed: int = 0) -> Contract:
    """Run the reference to derive the contract; raise ``TaskError`` naming problem and fix.

    Derived once per process for a given task source and seed (the planner and the worker
    pool both ask for it); a contract is frozen, so sharing it is safe.
    """
    key = (str(task.path), task.source_hash, seed)
    if key not in _DERIVED:
        _DERIVED[key] = _derive(task, seed)
    return _DERIVED[key]


_DERIVED: dict[tuple[str, str, int], Contract] = {}


def _derive(task: Task, seed: int) -> Contract:
    module = task.module()
    where = f"task file {task.path}"
    nominal = _checked_run(module, lambda s: nominal_inputs(module, s), seed, where, NOMINAL)
    variants = [_variant(NOMINAL, "nominal", *nominal)]
    given = _task_variants(module, seed, where)
    if len(given) < 2:  # the task's own variants first, derived ones fill up to two
        given += _derived_variants(module, nominal[0], seed)[:2 - len(given)]
    variants += given
    fixed = None
    if len(variants) < 3:  # a reference built for its nominal sizes (a batch fixed in
        # __init__): a kernel specialised to the shapes it accepts is correct for all of them
        fixed = ("the reference rejected every scaled shape tried (the leading dimensions, the "
                 "free dimensions torch.export finds, a batch of 1), so candidates are checked "
                 f"on {len(variants)} shape set(s) only; if it accepts others, define "
                 "get_shape_variants() returning {'name': [input shapes...], ...}")
    degenerate = _degenerate_reason(module, nominal[1], seed)
    return Contract(
        task_name=task.name,
        task_hash=task.source_hash,
        variants=variants,
        tolerances=_tolerances(module, where),
        allowed_spaces=_allowed_spaces(module, where),
        degenerate=degenerate is not None,
        degenerate_reason=degenerate,
        fixed_shapes_reason=fixed,
    )


def _checked_run(module, make_inputs, seed, where, name):
    try:
        inputs = make_inputs(seed)
    except Exception as exc:
        raise TaskError(
            f"{where}: making inputs for variant {name!r} raised {type(exc).__name__}: {exc}. "
            "Make get_inputs()/get_shape_variants() return a list of tensors."
        ) from exc
    try:
        outputs = run_reference(module, inputs, seed)
    except TaskError:
        raise
    except Exception as exc:
        raise TaskError(
            f"{where}: the reference Model raised {type(exc).__name__} on variant {name!r}: "
            f"{exc}. Fix Model or the inputs so that Model(*get_init_inputs())(*inputs) runs."
        ) from exc
    return inputs, outputs


def _variant(name: str, kind: str, inputs: list[Any], outputs: list[torch.Tensor]):
    specs = [_spec(t) if isinstance(t, torch.Tensor) else None for t in inputs]
    return ShapeVariant(name=name, kind=kind, inputs=specs, outputs=[_spec(o) for o in outputs])


def _spec(t: torch.Tensor) -> TensorSpec:
    return TensorSpec(shape=tuple(t.shape), dtype=str(t.dtype).removeprefix("torch."))


def _task_variants(module, seed, where) -> list[ShapeVariant]:
    fn = getattr(module, "get_shape_variants", None)
    if fn is None:
        return []
    table = fn()
    if not isinstance(table, dict) or not table:
        raise TaskError(
            f"{where}: get_shape_variants() must return a non-empty dict name -> shapes"
        )
    out = []
    for name, spec in table.items():
        make = variant_maker(module, name, spec)
        out.append(_variant(name, "task", *_checked_run(module, make, seed, where, name)))
    return out


def _derived_variants(module, nominal: list[Any], seed: int) -> list[ShapeVariant]:
    """Two smaller, odd-sized variants the reference accepts: the leading dimensions scaled,
    else every free dimension (found by ``torch.export`` with dynamic dims; tied ones scale
    together), else a batch of 1 grown."""
    found: list = []

    def symbolic():  # exported once, only when scaling the leading dimensions fails
        if not found:
            torch.manual_seed(seed)
            found.append(symbolic_shapes(module.Model(*init_inputs_for(module)), nominal))
        return found[0]

    seen = {tuple(getattr(t, "shape", None) for t in nominal)}
    out: list[ShapeVariant] = []
    for name, scale, grow in (("half_plus_one", lambda d: d // 2 + 1 if d > 2 else d + 1, 2),
                              ("quarter_odd", _quarter_odd, 3)):
        def tries(scale=scale, grow=grow):
            yield from _scalings(nominal, scale)
            if symbolic():
                yield scaled_shapes(nominal, symbolic(), scale)
            yield grown_batch(nominal, grow)

        for shapes in tries():
            key = tuple(None if s is None else torch.Size(s) for s in shapes or [])
            if shapes is None or key in seen:
                continue
            inputs = inputs_like(nominal, shapes, seed)
            try:
                outputs = run_reference(module, inputs, seed)
            except Exception:
                continue
            seen.add(key)
            out.append(_variant(name, "derived", inputs, outputs))
            break
    return out


def _quarter_odd(d: int) -> int:
    q = max(1, d // 4)
    return q if q % 2 else max(1, q - 1)


def _scalings(nominal: list[Any], scale) -> list[list[tuple[int, ...] | None]]:
    """Shape lists to try: dim 0 of every input sharing the first's dim 0, then the first only."""
    tensors = [t for t in nominal if isinstance(t, torch.Tensor) and t.dim() > 0]
    if not tensors:
        return []
    lead = tensors[0].shape[0]

    def scaled(t: Any, every: bool) -> tuple[int, ...] | None:
        if not isinstance(t, torch.Tensor):
            return None
        if t.dim() > 0 and t.shape[0] == lead and (every or t is tensors[0]):
            return (scale(lead), *t.shape[1:])
        return tuple(t.shape)

    return [[scaled(t, True) for t in nominal], [scaled(t, False) for t in nominal]]


def _degenerate_reason(module, outputs: list[torch.Tensor], seed: int) -> str | None:
    other = run_reference(module, nominal_inputs(module, seed + 1), seed)
    for i, (a, b) in enumerate(zip(outputs, other, strict=True)):
        if a.shape == b.shape and torch.equal(a, b):
            return f"output {i} does not change when the inputs change"
        if a.numel() > 1 and a.is_floating_point() and float(a.double().std()) == 0.0:
            return f"output {i} is constant"
    return None


def _tolerances(module, where) -> dict[str, Tolerance]:
    table = {k: Tolerance(atol=a, rtol=r) for k, (a, r) in DEFAULT_TOLERANCES.items()}
    for key, value in (getattr(module, "TOLERANCES", None) or {}).items():
        atol, rtol = (value, value) if isinstance(value, (int, float)) else value
        if not all(
            isinstance(x, (int, float)) and math.isfinite(x) and x >= 0 for x in (atol, rtol)
        ):
            raise TaskError(f"{where}: TOLERANCES[{key!r}] must be a number or (atol, rtol) >= 0")
        table[str(key).removeprefix("torch.")] = Tolerance(atol=float(atol), rtol=float(rtol))
    return table


def _allowed_spaces(module, where) -> list[ImplementationSpace]:
    names = getattr(module, "ALLOWED_SPACES", None) or list(DEFAULT_SPACES)
    try:
        return [ImplementationSpace(n) for n in names]
    except ValueError as exc:
        choices = ", ".join(s.value for s in ImplementationSpace)
        raise TaskError(
            f"{where}: ALLOWED_SPACES has an unknown entry ({exc}); use {choices}"
        ) from exc
