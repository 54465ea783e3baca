"""Launch configuration that a lowered module's kernel source states, read by the launcher.

A lowered module's editable kernel block may define the work-group size of a kernel (the SYCL
local size, the CUDA block size) as a named constant::

    #define KW_LOCAL_k0_0 128

The constant is real C (kernels may use it, e.g. ``__launch_bounds__(KW_LOCAL_k0_0)`` or a
row loop's stride), and :func:`launch_plans` makes the plans launch with it: ``KW_LOCAL_k0_<g>``
sets kernel ``k<v>_<g>`` of every shape variant ``v`` (a ``KW_LOCAL_k<v>_<g>`` of its own wins).
A value that is not a work-group size, or a name no kernel has, raises ``LaunchError`` naming
the constant and the fix, so the evaluation reports it as the candidate's error.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from kernelwright.errors import LaunchError

MAX_LOCAL = 1024  # CUDA's threads per block; the lowering's own space stops at 512
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+KW_LOCAL_(\w+)[ \t]+([^\n]*?)[ \t]*$", re.M)
_VARIANT = re.compile(r"^k\d+_")


def local_sizes(source: str) -> dict[str, int]:
    """Kernel name -> work-group size, from the ``KW_LOCAL_*`` defines of ``source``."""
    out: dict[str, int] = {}
    for m in _DEFINE.finditer(source):
        name, text = m.group(1), m.group(2).split("//")[0].strip().strip("()")
        try:
            value = int(text, 0)
        except ValueError:
            value = None
        if value is None or not 1 <= value <= MAX_LOCAL:
            raise LaunchError(
                f"launch configuration: KW_LOCAL_{name} is {m.group(2)!r}; a work-group size "
                f"must be a whole number from 1 to {MAX_LOCAL} (a multiple of 8 or 32 is usual)"
            )
        out[name] = value
    return out


def launch_plans(source: str, plans: dict[str, Any]) -> dict[str, Any]:
    """``plans`` with each kernel step's local (and so global) size taken from ``source``'s
    ``KW_LOCAL_*`` defines; ``plans`` itself when there are none."""
    sizes = local_sizes(source)
    if not sizes:
        return plans
    out = copy.deepcopy(plans)
    names = {s["kernel"] for p in out.values() for s in p["steps"] if "kernel" in s}
    nominal = {_VARIANT.sub("k0_", n) for n in names}
    unknown = sorted(set(sizes) - names - nominal)
    if unknown:
        raise LaunchError(
            f"launch configuration: KW_LOCAL_{unknown[0]} names no kernel; the kernels are "
            f"{', '.join(sorted(nominal))} (define KW_LOCAL_<kernel> for one of them)")
    for plan in out.values():
        for step in plan["steps"]:
            name = step.get("kernel")
            local = sizes.get(name) or sizes.get(_VARIANT.sub("k0_", name or ""))
            if local is None or local == step["local"]:
                continue
            step["global"] = _global(step, local)
            step["local"] = local
    return out


def _global(step: dict[str, Any], local: int) -> int:
    """The global size at a new local size: one group per unit for a cooperative kernel (a
    work-group shares one row), else enough items to cover the units."""
    units = step.get("units")
    cooperative = step.get("cooperative", False)
    if units is None:  # a plan written before units were recorded
        units = step["global"] // step["local"] if cooperative else step["global"]
    if cooperative:
        return units * local
    return max(-(-units // local) * local, local)
