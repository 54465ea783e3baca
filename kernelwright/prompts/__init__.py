"""Prompt templates (``*.j2``, rendered with ``StrictUndefined``) and the reply formats they want.

Prompts exist only as template files in this package, never as Python strings.

Example:
    >>> from kernelwright.prompts import render
    >>> "SEARCH" in render("repair.j2", error="no code block", want="edits")
    True
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import jinja2
import yaml

from kernelwright.prompts.formats import (
    EVOLVE_END,
    EVOLVE_START,
    CodeBlock,
    Edit,
    apply_edits,
    check_module,
    code_blocks,
    evolve_regions,
    extract_json,
    extract_module,
    parse_edits,
)

__all__ = [
    "EVOLVE_END",
    "EVOLVE_START",
    "CodeBlock",
    "Edit",
    "apply_edits",
    "check_module",
    "code_blocks",
    "evolve_regions",
    "extract_json",
    "extract_module",
    "load_data",
    "parse_edits",
    "render",
    "template_names",
]


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("kernelwright", "prompts"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def render(name: str, **context: object) -> str:
    """Render template ``name`` (e.g. ``"coder.j2"``); a missing variable raises at once."""
    return _environment().get_template(name).render(**context).strip() + "\n"


def template_names() -> list[str]:
    """Every template this package ships (partials start with ``_``)."""
    return sorted(n for n in _environment().list_templates() if n.endswith(".j2"))


def load_data(name: str) -> object:
    """A YAML data file shipped in this package (e.g. the meta-prompt seed sections)."""
    return yaml.safe_load(resources.files(__name__).joinpath(name).read_text())
