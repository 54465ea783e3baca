"""Small code generators the Jinja templates call: elementwise op chains as C++ statements."""

from __future__ import annotations

from collections.abc import Sequence

SQRT_2_OVER_PI = "0.7978845608028654f"
INV_SQRT_2 = "0.7071067811865476f"


def _op(op: str, m: str, v: str, col: str, idx: str) -> str:
    table = {
        "gelu_tanh": f"{v} = 0.5f * {v} * (1.0f + {m}tanh({SQRT_2_OVER_PI} * "
                     f"({v} + 0.044715f * {v} * {v} * {v})));",
        "gelu_erf": f"{v} = 0.5f * {v} * (1.0f + {m}erf({v} * {INV_SQRT_2}));",
        "silu": f"{v} = {v} / (1.0f + {m}exp(-{v}));",
        "relu": f"{v} = {v} > 0.0f ? {v} : 0.0f;",
        "sigmoid": f"{v} = 1.0f / (1.0f + {m}exp(-{v}));",
        "tanh": f"{v} = {m}tanh({v});",
        "scale": f"{v} = {v} * scale;",
        "bias": f"{v} = {v} + bias[{col}];",
        "add": f"{v} = {v} + x2[{idx}];",
    }
    return table[op]


def apply_ops(ops: Sequence[str], math: str, var: str = "v", col: str = "col",
              idx: str = "i") -> str:
    """C++ statements applying ``ops`` in order to the float ``var``.

    Args:
        ops: Op names (see ``ElementwiseOp``).
        math: Namespace prefix of the math functions: ``"sycl::"`` or ``"std::"``.
        var: The variable holding the value.
        col: Expression of the column (for ``bias``); idx: of the flat index (for ``add``).
    """
    return " ".join(_op(op, math, var, col, idx) for op in ops)


def py_float(expr: str) -> str:
    """Wrap a Python expression so the generated code passes a float kernel argument."""
    return f"float({expr})"


def pow2_ceil(n: int) -> int:
    """The smallest power of two >= ``n``."""
    p = 1
    while p < n:
        p *= 2
    return p
