"""The Jinja2 environment for kernel templates (StrictUndefined: a missing value is an error)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from kernelwright.templates import _codegen

ROOT = Path(__file__).parent


@cache
def environment() -> jinja2.Environment:
    """One environment: files under this package, strict, with the code-generation helpers."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(ROOT)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.globals.update(
        apply_ops=_codegen.apply_ops, py_float=_codegen.py_float, pow2_ceil=_codegen.pow2_ceil
    )
    return env


def render_file(name: str, **context: Any) -> str:
    """Render the template file ``name`` (relative to this package) with ``context``."""
    return environment().get_template(name).render(**context)
