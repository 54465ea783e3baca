"""Resolve ``"package.module:Name"`` strings: every plug-in registry in kernelwright is a plain
dict from a short name to such a string, imported only when the name is first used (so an
optional SDK behind one entry costs nothing until it is chosen).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any


def resolve(target: str) -> Any:
    """The object ``Name`` of module ``package.module`` named by ``"package.module:Name"``.

    Raises:
        ValueError: ``target`` lacks the ``module:Name`` form (the message shows the form).
        ImportError / AttributeError: the module or the name does not exist.

    Example:
        >>> resolve("pathlib:Path").__name__
        'Path'
    """
    module, sep, name = target.rpartition(":")
    if not sep or not module or not name:
        raise ValueError(f"{target!r} is not an import path; write it as 'package.module:Name'")
    return getattr(importlib.import_module(module), name)


def lookup(registry: Mapping[str, str], name: str, what: str) -> Any:
    """``resolve(registry[name])``; an unknown ``name`` raises ``ValueError`` listing choices."""
    if name not in registry:
        raise ValueError(f"unknown {what} {name!r}; choose one of: {', '.join(registry)}")
    return resolve(registry[name])
