"""Layout rules the import-linter contracts cannot state: no private module of one package is
imported from another package, and no error class is defined outside ``kernelwright/errors.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import kernelwright

ROOT = Path(kernelwright.__file__).parent


def _modules() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        name = ".".join(("kernelwright", *path.relative_to(ROOT).with_suffix("").parts))
        out.append((name.removesuffix(".__init__"), ast.parse(path.read_text(), str(path))))
    return out


def _imported(tree: ast.Module) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names]
    return [n for n in names if n.startswith("kernelwright.")]


def _owner(module: str) -> str:
    """The package a private module belongs to: everything before its first ``_name`` part."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return module


def test_no_private_module_is_imported_from_another_package():
    modules = _modules()
    names = {name for name, _ in modules}
    bad = []
    for name, tree in modules:
        for target in _imported(tree):
            if target not in names:  # a function or class, not a module
                continue
            owner = _owner(target)
            if owner != target and not (name == owner or name.startswith(owner + ".")):
                bad.append(f"{name} imports {target}")
    assert not bad, "private modules used across packages:\n" + "\n".join(sorted(set(bad)))


def test_every_error_class_lives_in_errors_py():
    bad = []
    for name, tree in _modules():
        if name == "kernelwright.errors":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Error"):
                bad.append(f"{name}.{node.name}")
    assert not bad, f"error classes outside kernelwright/errors.py: {bad}"


def test_every_error_is_a_kernelwright_error():
    import inspect

    from kernelwright import errors

    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass)
               if c.__module__ == errors.__name__]
    assert len(classes) > 10
    assert all(issubclass(c, errors.KernelwrightError) for c in classes)
