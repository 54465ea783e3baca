"""Parameterised kernel templates: declared parameters, validation, rendering to a candidate.

A :class:`Template` is one kernel family for one operator class and one backend (a Jinja2 file
under ``sycl/`` or ``cpp/``). Its parameters are discrete choices (work-group size, tile sizes,
vector width, unroll, items per work-item, register block), so a tuner can enumerate or sample
them; cross-parameter rules (``tile_m % reg_m == 0``) are checked by ``validate`` as well.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kernelwright.errors import ConfigError

if TYPE_CHECKING:
    from kernelwright.spec import Candidate
    from kernelwright.templates.opspec import OpSpec

ParamValue = int | str | bool
Rule = Callable[[Mapping[str, ParamValue]], str | None]


@dataclass(frozen=True)
class Param:
    """One tunable parameter: its allowed values and the default.

    Example:
        >>> Param("wg_size", (64, 128, 256), 128, "work-group size").default
        128
    """

    name: str
    choices: tuple[ParamValue, ...]
    default: ParamValue
    doc: str = ""

    def __post_init__(self) -> None:
        if self.default not in self.choices:
            raise ValueError(f"param {self.name}: default {self.default!r} not in {self.choices}")

    def check(self, value: object) -> None:
        """Raise ``ConfigError`` naming the parameter and its choices unless ``value`` is one."""
        ok = value in self.choices and type(value) is type(self.default)
        if not ok:
            raise ConfigError(
                f"template parameter {self.name}={value!r} is out of range ({self.doc}); "
                f"choose one of {list(self.choices)}"
            )


@dataclass(frozen=True)
class Template:
    """A parameterised kernel source that renders to a complete candidate module.

    Attributes:
        name: Unique name, e.g. ``"sycl.gemm_tiled"``.
        operator_class: One of elementwise, rowwise_norm, reduction, layout, gemm.
        backend: ``"sycl"`` or ``"cpp"``.
        file: The Jinja2 file, relative to this package.
        params: Declared parameters.
        rules: Cross-parameter constraints; each returns an error text or ``None``.
        description: One line for prompts and reports.

    Example:
        >>> from kernelwright.templates import get_template
        >>> t = get_template("sycl.elementwise_vec")
        >>> src = t.render(t.default_params(), spec)  # doctest: +SKIP
    """

    name: str
    operator_class: str
    backend: str
    file: str
    params: tuple[Param, ...]
    rules: tuple[Rule, ...] = field(default=())
    description: str = ""

    def default_params(self) -> dict[str, ParamValue]:
        """The default value of every parameter."""
        return {p.name: p.default for p in self.params}

    def space(self) -> dict[str, tuple[ParamValue, ...]]:
        """Parameter name -> allowed values (the search space for a tuner)."""
        return {p.name: p.choices for p in self.params}

    def validate(self, params: Mapping[str, ParamValue] | None = None) -> dict[str, ParamValue]:
        """Defaults overlaid with ``params``, checked; raise ``ConfigError`` naming the problem."""
        merged = self.default_params()
        unknown = sorted(set(params or {}) - set(merged))
        if unknown:
            raise ConfigError(
                f"template {self.name} has no parameter(s) {', '.join(unknown)}; "
                f"its parameters are {', '.join(merged)}"
            )
        merged.update(params or {})
        by_name = {p.name: p for p in self.params}
        for name, value in merged.items():
            by_name[name].check(value)
        for rule in self.rules:
            problem = rule(merged)
            if problem:
                raise ConfigError(f"template {self.name}: {problem}")
        return merged

    def render(self, params: Mapping[str, ParamValue] | None, op_spec: OpSpec) -> str:
        """The source of a candidate module (``class ModelNew``) computing ``op_spec``."""
        from kernelwright.templates._jinja import render_file

        if op_spec.operator_class != self.operator_class:
            raise ConfigError(
                f"template {self.name} implements {self.operator_class}, but the op spec is "
                f"{op_spec.operator_class}; pick one of templates_for({op_spec.operator_class!r})"
            )
        checked = self.validate(params)
        return render_file(self.file, p=checked, spec=op_spec, template=self)

    def candidate(self, params: Mapping[str, ParamValue] | None, op_spec: OpSpec) -> Candidate:
        """``render`` wrapped as a :class:`~kernelwright.spec.Candidate` carrying its params."""
        from kernelwright.spec import Candidate

        checked = self.validate(params)
        return Candidate(source=self.render(checked, op_spec), backend=self.backend,
                         params=checked, origin=f"template:{self.name}")

    def __repr__(self) -> str:
        names = ", ".join(p.name for p in self.params)
        return f"Template({self.name!r}, {self.operator_class}, {self.backend}, params=[{names}])"
