"""One function for kernels that differ only in the buffers they are given.

An unrolled recurrence or a stack of alike blocks emits the same kernel many times over
(VanillaRNNHidden of KernelBench level 3: 512 GEMM kernels of one shape, 12 MB of C++ and
90 s of compiling per build). Kernels whose text is the same once their own name and their
parameter names are replaced by positions compute the same function of their arguments, so
each such kernel's launches call the first one, and only that one is emitted. The decision is
made across the shape variants together (a kernel is shared only where it is shared in every
variant), so each variant's kernel block keeps the same structure (``agents/variants.py``
aligns them).
"""

from __future__ import annotations

import re
from typing import Any

from kernelwright.tools.lower.emit.common import KernelSource


def share_identical(variants: list[list[Any]], plans: list[dict[str, Any]]) -> int:
    """Drop the text of every kernel identical to an earlier one of its variant and point its
    launches at that one; ``variants`` are the kernels (and vendor steps) of each variant in
    order, named ``k<variant>_<rest>``; ``plans`` their launch plans (the first gets a
    note). Returns how many kernels of each variant now share another's code."""
    keys: list[dict[str, str]] = [
        {_suffix(k.name): _canonical(k) for k in kernels if _own(k)} for kernels in variants]
    common = set.intersection(*(set(k) for k in keys)) if keys else set()
    first: dict[tuple[str, ...], str] = {}
    alias: dict[str, str] = {}
    for k in variants[0] if variants else []:
        suffix = _suffix(k.name) if _own(k) else None
        if suffix not in common:
            continue
        key = tuple(v[suffix] for v in keys)
        if key in first:
            alias[suffix] = first[key]
        else:
            first[key] = suffix
    if not alias:
        return 0
    plans[0].setdefault("why", []).insert(0, f"{len(alias)} kernel(s) launch the code of an "
                                             "identical one (only their buffers differ)")
    for vi, (kernels, plan) in enumerate(zip(variants, plans, strict=True)):
        for k in kernels:
            if _own(k) and _suffix(k.name) in alias:
                k.text = ""
        for step in plan["steps"]:
            suffix = _suffix(step.get("kernel", ""))
            if suffix in alias:
                step["kernel"] = f"k{vi}_{alias[suffix]}"
    return len(alias)


def _own(k: Any) -> bool:
    return isinstance(k, KernelSource) and bool(k.text)


def _suffix(name: str) -> str:
    return name.split("_", 1)[1] if "_" in name else name


def _canonical(k: KernelSource) -> str:
    """The launch shape and the text with the kernel's name and its parameters' names
    replaced by positions (a shared kernel keeps one work-group size: ``KW_LOCAL_<kernel>``)."""
    names = {k.name: "KW_SELF", **{a: f"KW_ARG{i}" for i, a in enumerate(k.args)}}
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(names, key=len,
                                                                  reverse=True))) + r")\b")
    return f"{k.units} {k.local} {k.cooperative}\n" + pattern.sub(lambda m: names[m.group(1)],
                                                                  k.text)
