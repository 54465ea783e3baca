"""Name -> "module:Class" for every workload, imported lazily."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kernelwright.registry import lookup

if TYPE_CHECKING:
    from kernelwright.tools.gpusim.workloads.base import Workload

_PKG = "kernelwright.tools.gpusim.workloads"
WORKLOADS: dict[str, str] = {
    "bfs": f"{_PKG}.bfs:BfsWorkload",
    "lud": f"{_PKG}.lud:LudWorkload",
    "gaussian": f"{_PKG}.gaussian:GaussianWorkload",
    "3mm": f"{_PKG}.mm3:Mm3Workload",
    "mm3": f"{_PKG}.mm3:Mm3Workload",  # the module's name; "3mm" is what PolyBench calls it
    "cfd": f"{_PKG}.cfd:CfdWorkload",
    "srad": f"{_PKG}.srad:SradWorkload",
    "phi2": f"{_PKG}.llm:Phi2Decode",
    "qwen15": f"{_PKG}.llm:Qwen15Decode",
    "pythia": f"{_PKG}.llm:PythiaDecode",
}


def get_workload(name: str, **kwargs: Any) -> Workload:
    """Instantiate a workload by name (kwargs go to its constructor: ``seed``, ``settings``)."""
    return lookup(WORKLOADS, name.strip().lower(), "workload")(**kwargs)
