"""Published workload samplers, reimplemented; each reads traces or profiles only."""

from kernelwright.tools.sampler.baselines.photon import PhotonSampler
from kernelwright.tools.sampler.baselines.pka import PKASampler
from kernelwright.tools.sampler.baselines.random_sampling import RandomSampler
from kernelwright.tools.sampler.baselines.sieve import SieveSampler
from kernelwright.tools.sampler.baselines.stem import StemRootSampler

__all__ = ["PKASampler", "PhotonSampler", "RandomSampler", "SieveSampler", "StemRootSampler"]
