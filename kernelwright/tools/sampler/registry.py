"""Name -> "module:Class" for every sampler, imported lazily."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kernelwright.registry import lookup

if TYPE_CHECKING:
    from kernelwright.tools.sampler.base import Sampler

_PKG = "kernelwright.tools.sampler"
SAMPLERS: dict[str, str] = {
    "gcl": f"{_PKG}.gcl:GCLSampler",
    "pka": f"{_PKG}.baselines.pka:PKASampler",
    "sieve": f"{_PKG}.baselines.sieve:SieveSampler",
    "stem": f"{_PKG}.baselines.stem:StemRootSampler",
    "photon": f"{_PKG}.baselines.photon:PhotonSampler",
    "random": f"{_PKG}.baselines.random_sampling:RandomSampler",
}


def get_sampler(name: str, **kwargs: Any) -> Sampler:
    """A sampler by name; kwargs go to its constructor.

    Raises:
        ValueError: unknown name (the message lists the choices).
    """
    return lookup(SAMPLERS, name, "sampling method")(**kwargs)
