"""Source-text helpers shared by the backends: content hashes and kernel-name discovery."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRINGS = re.compile(r'"(?:\\.|[^"\\\n])*"')
# Macros whose arguments may hold parentheses, angle brackets and names that are not the
# function's: removed (with their balanced argument list) before matching declarations.
_MACROS = ("SYCL_EXT_ONEAPI_FUNCTION_PROPERTY", "__attribute__", "__launch_bounds__",
           "__declspec", "alignas", "__cluster_dims__")
_EXTERN_C = re.compile(r'extern\s+"C"\s*(\{)?')
_DECL = re.compile(r"([A-Za-z_][\w\s\*&:<>,]*?)\b([A-Za-z_]\w*)\s*\(")
_OPENCL_KERNEL = re.compile(
    r"\b(?:__)?kernel\s+(?:__attribute__\s*\(\(.*?\)\)\s*)?void\s+(\w+)\s*\(", re.S
)


def source_hash(source: str, *parts: Iterable[str] | str) -> str:
    """A short content hash of ``source`` and any options or versions that change the build."""
    h = hashlib.sha256(source.encode())
    for part in parts:
        items = [part] if isinstance(part, str) else list(part)
        h.update(b"\0" + "\0".join(items).encode())
    return h.hexdigest()[:16]


def strip_comments(source: str) -> str:
    """``source`` without C/C++ comments (string literals kept)."""
    return _COMMENTS.sub(" ", source)


def _strip_macro_calls(text: str) -> str:
    for macro in _MACROS:
        while (start := text.find(macro)) >= 0:
            i = text.find("(", start)
            if i < 0:
                break
            depth, j = 0, i
            while j < len(text):
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            text = text[:start] + " " + text[j + 1:]
    return text


def extern_c_functions(source: str) -> list[tuple[str, str]]:
    """``(return-type-and-qualifiers, name)`` of each ``extern "C"`` function declaration.

    Handles ``extern "C" void f(`` and single-declaration ``extern "C" { ... }`` heads, with
    ``SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((...))``, ``__launch_bounds__(...)`` and attributes
    anywhere in the head.
    """
    text = _strip_macro_calls(_STRINGS.sub(_keep_extern_c, strip_comments(source)))
    found: dict[str, str] = {}
    for m in _EXTERN_C.finditer(text):
        start = m.end() + len(text[m.end():]) - len(text[m.end():].lstrip())
        head = _DECL.match(text, start)
        if head:
            found.setdefault(head.group(2), " ".join(head.group(1).split()))
    return [(ret, name) for name, ret in found.items()]


def _keep_extern_c(m: re.Match[str]) -> str:
    return m.group(0) if m.group(0) == '"C"' else '""'


def extern_c_names(source: str) -> list[str]:
    """Names of the ``extern "C"`` functions of a C++/SYCL/CUDA source, in order."""
    return [name for _, name in extern_c_functions(source)]


def opencl_kernel_names(source: str) -> list[str]:
    """Names of the ``__kernel void name(...)`` functions of an OpenCL C source."""
    return list(dict.fromkeys(_OPENCL_KERNEL.findall(strip_comments(source))))


def looks_like_opencl(source: str) -> bool:
    """Whether ``source`` is OpenCL C rather than SYCL C++ (``__kernel`` and no ``sycl``)."""
    text = strip_comments(source)
    return bool(_OPENCL_KERNEL.search(text)) and "sycl" not in text
