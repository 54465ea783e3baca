"""One function for kernels that differ only in the buffers they are given.

An unrolled recurrence or a stack of alike blocks emits the same kernel many times over
(VanillaRNNHidden of KernelBench level 3: 512 GEMM kernels of one shape, 12 MB of C++ and
90 s of compiling per build). Kernels whose text is the same once their own name and their
parameter names are replaced by positions compute the same function of their arguments, so
each such kernel's launches call the first one, and only that one is emitted. Where the shape
variants have the same kernels, the decision is made across them together (a kernel is shared
only where it is shared in every variant), so each variant's kernel block keeps the same
structure (``agents/variants.py`` aligns them). Kernels that differ only in a constant offset
into a buffer share too where the launcher can move pointers (``kernel_offsets.py``).
"""

from __future__ import annotations

import re
from typing import Any

from kernelwright.tools.lower.emit.common import KernelSource
from kernelwright.tools.lower.kernel_offsets import rebased


def share_identical(variants: list[list[Any]], plans: list[dict[str, Any]],
                    hoist: bool = False) -> int:
    """Drop the text of every kernel identical to an earlier one of its variant and point its
    launches at that one; ``variants`` are the kernels (and vendor steps) of each variant in
    order, named ``k<variant>_<rest>``; ``plans`` their launch plans (the first gets a
    note). With ``hoist``, kernels that differ only in constant buffer offsets are shared too:
    the offsets move to their launches (``offsets``: bytes per argument,
    ``kernel_offsets.py``). Variants with the same kernels decide together (the coder's view
    aligns them); variants of different structure (an RNN's variants with fewer steps)
    decide each alone. Returns how many kernels of the first variant share another's code."""
    forms = [{_suffix(k.name): _forms(k, hoist) for k in kernels if _own(k)}
             for kernels in variants]
    alike = len({tuple(f) for f in forms}) == 1
    together = [list(range(len(variants)))] if alike else [[vi] for vi in range(len(variants))]
    shared = [_share(variants, plans, forms, vis) for vis in together]
    if shared and shared[0]:
        plans[0].setdefault("why", []).insert(0, f"{shared[0]} kernel(s) launch the code of "
                                                 "an identical one (only their buffers differ)")
    return shared[0] if shared else 0


def _share(variants, plans, forms, vis: list[int]) -> int:
    classes: dict[tuple[str, ...], list[str]] = {}
    for suffix in forms[vis[0]]:
        classes.setdefault(tuple(forms[vi][suffix][1] for vi in vis), []).append(suffix)
    alias = {s: members[0] for members in classes.values() if len(members) > 1
             for s in members[1:]}
    moved = {s for members in classes.values() if len(members) > 1
             and len({tuple(forms[vi][m][0] for vi in vis) for m in members}) > 1
             for s in members}
    for vi in vis:
        for k in variants[vi]:
            suffix = _suffix(k.name) if _own(k) else None
            if suffix in alias:
                k.text = ""
            elif suffix in moved:
                k.text = forms[vi][suffix][2]
        for step in plans[vi]["steps"]:
            suffix = _suffix(step.get("kernel", ""))
            if suffix in moved and any(forms[vi][suffix][3]):
                step["offsets"] = forms[vi][suffix][3]
            if suffix in alias:
                step["kernel"] = f"k{vi}_{alias[suffix]}"
    return len(alias)


def _forms(k: KernelSource, hoist: bool) -> tuple[str, str, str, list[int]]:
    """``(key as written, key to share by, text to emit when shared, byte offsets)``."""
    plain = _canonical(k, k.text)
    moved = rebased(k.text, k.args) if hoist else None
    if moved is None:
        return plain, plain, k.text, [0] * len(k.args)
    return plain, _canonical(k, moved[0]), moved[0], moved[1]


def _own(k: Any) -> bool:
    return isinstance(k, KernelSource) and bool(k.text)


def _suffix(name: str) -> str:
    return name.split("_", 1)[1] if "_" in name else name


def _canonical(k: KernelSource, text: str) -> str:
    """The launch shape and ``text`` with the kernel's name and its parameters' names replaced
    by positions (a shared kernel keeps one work-group size: ``KW_LOCAL_<kernel>``)."""
    names = {k.name: "KW_SELF", **{a: f"KW_ARG{i}" for i, a in enumerate(k.args)}}
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(names, key=len,
                                                                  reverse=True))) + r")\b")
    return f"{k.units} {k.local} {k.cooperative}\n" + pattern.sub(lambda m: names[m.group(1)],
                                                                  text)
