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


# Exceptions that never leave their module: control flow between a function and its caller
# (each caught where it is raised, never shown to a user). A new one must be added here on
# purpose; any other exception class belongs in kernelwright/errors.py.
INTERNAL_EXCEPTIONS = {
    "kernelwright.tools.evaluate.orchestrator.RunnerFailed",  # a runner's error, as data
    "kernelwright.tools.evaluate.protocol.ChannelClosed",  # the peer closed the channel
    "kernelwright.tools.evaluate.protocol.ChannelTimeout",  # no message in time
    "kernelwright.tools.evaluate.protocol.ProtocolViolation",  # a malformed message
    "kernelwright.tools.evaluate.verify.Rejected",  # a rung of the verification ladder failed
    "kernelwright.tools.lower.codegen.NotFusable",  # the fuser tries the next grouping
    "kernelwright.tools.lower.emit.rows.StashMismatch",  # the emitter falls back to recomputing
    "kernelwright.tools.lower.fusion._Unfusable",  # the scheduler's legality check splits a group
}


def _is_exception_class(node: ast.ClassDef, ours: set[str]) -> bool:
    """A class whose base is a builtin exception, one of ours, or named like an exception."""
    import builtins

    for base in node.bases:
        name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
        builtin = getattr(builtins, name, None)
        if isinstance(builtin, type) and issubclass(builtin, BaseException):
            return True
        if name in ours or name.endswith(("Error", "Exception")):
            return True
    return node.name.endswith("Error")


def test_every_exception_class_lives_in_errors_py():
    import inspect

    from kernelwright import errors

    ours = {name for name, _ in inspect.getmembers(errors, inspect.isclass)}
    found = [f"{name}.{node.name}" for name, tree in _modules() if name != "kernelwright.errors"
             for node in ast.walk(tree)
             if isinstance(node, ast.ClassDef) and _is_exception_class(node, ours)]  # fmt: skip
    bad = sorted(set(found) - INTERNAL_EXCEPTIONS)
    assert not bad, f"exception classes outside kernelwright/errors.py: {bad}"
    assert INTERNAL_EXCEPTIONS <= set(found), "a listed internal exception is gone: unlist it"


def test_the_exception_check_sees_exceptions_by_their_bases():
    tree = ast.parse("class Oops(ValueError): ...\nclass Fault(LaunchError): ...\n"
                     "class Plain: ...\nclass Sub(Exception): ...")  # fmt: skip
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    assert [_is_exception_class(c, {"LaunchError"}) for c in classes] == [True, True, False, True]


def test_every_error_is_a_kernelwright_error():
    import inspect

    from kernelwright import errors

    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass)
               if c.__module__ == errors.__name__]
    assert len(classes) > 10
    assert all(issubclass(c, errors.KernelwrightError) for c in classes)


# -- the lowering: backend differences live in tools/lower/backends ------------------------

LOWER = ROOT / "tools" / "lower"
MAX_LINES = 400


def _backend_branches(tree: ast.AST, names: set[str]) -> list[int]:
    """Lines that compare with a backend name (``== "cpp"``, ``in ("sycl", "cpp")``) or
    dispatch on one (a dict keyed by backend names, a ``case "cuda":``)."""

    def named(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str) and node.value.lower() in names
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(named(e) for e in node.elts)
        return False

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(
                named(x) for x in [node.left, *node.comparators]):
            lines.append(node.lineno)
        elif isinstance(node, ast.Dict) and any(k is not None and named(k) for k in node.keys):
            lines.append(node.lineno)
        elif isinstance(node, ast.MatchValue) and named(node.value):
            lines.append(node.lineno)
    return lines


def _backend_names() -> set[str]:
    from kernelwright.tools.lower.backends import backend_names

    names = set(backend_names())
    assert {"sycl", "cpp", "cuda"} <= names
    return names


def test_backend_name_detector_finds_branches():
    names = _backend_names()
    code = ("if d.name == 'cpp':\n    pass\nok = backend in ('sycl', 'x')\n"
            "run = {'cuda': 1}[b]\nmatch b:\n    case 'SYCL':\n        pass\n"
            "fine = x == 'cppish' or d.get('sycl')\n")
    assert _backend_branches(ast.parse(code), names) == [1, 3, 4, 6]


def test_no_backend_name_branches_outside_lower_backends():
    names = _backend_names()
    bad = []
    for path in sorted(LOWER.rglob("*.py")):
        rel = path.relative_to(LOWER)
        if rel.parts[0] == "backends":
            continue
        for line in _backend_branches(ast.parse(path.read_text(), str(path)), names):
            bad.append(f"tools/lower/{rel}:{line}")
    assert not bad, ("backend names compared outside tools/lower/backends (ask the codegen "
                     "object instead):\n" + "\n".join(bad))


def test_no_lower_module_over_400_lines():
    long = {str(p.relative_to(LOWER)): n for p in sorted(LOWER.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"tools/lower modules over {MAX_LINES} lines (split them by job): {long}"
