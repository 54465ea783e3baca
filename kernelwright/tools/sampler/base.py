"""The sampler family: pick a few representative invocations of a workload and weight them.

Every sampler sees a :class:`~.invocations.WorkloadTraces` (headers, profiles, graphs - never
cycles) and returns a :class:`Selection`: representatives ``s`` with weights ``w_s`` (how many
invocations each stands for). Projected whole-workload time from the representatives' times:

    T_hat = sum_s w_s * t_s

Scoring against the reference timing model lives in :mod:`.score`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kernelwright.errors import SamplerError
from kernelwright.tools.sampler.invocations import WorkloadTraces


@dataclass(frozen=True)
class Sample:
    """One representative: invocation index (launch order) and the weight it carries."""

    index: int
    weight: float


@dataclass(frozen=True)
class Selection:
    """What a sampler chose for one workload.

    Attributes:
        method: sampler name.
        workload: workload name.
        samples: representatives with weights (weights sum to the invocation count, except
            for STEM's and random's unbiased estimators, which also do up to rounding).
        labels: cluster (or group) of every invocation, when the method has one.
        info: method-specific facts (chosen k, thresholds, times).
    """

    method: str
    workload: str
    samples: tuple[Sample, ...]
    labels: tuple[int, ...] = ()
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def indices(self) -> list[int]:
        return [s.index for s in self.samples]

    def projected(self, times: Sequence[float]) -> float:
        """sum_s w_s * t_s for per-invocation ``times`` (only representatives are read)."""
        return float(sum(s.weight * times[s.index] for s in self.samples))


class Sampler(ABC):
    """Base class: ``select(traces) -> Selection``. Subclasses set ``name``."""

    name: str = "sampler"

    @abstractmethod
    def select(self, traces: WorkloadTraces) -> Selection:
        """Choose representatives of ``traces`` (never reads cycles: it has none)."""

    def _check(self, traces: WorkloadTraces) -> None:
        if not len(traces):
            raise SamplerError(
                f"workload {traces.name!r} has no kernel invocations to sample. "
                "Fix: point the sampler at a trace folder whose kernelslist names kernel files."
            )

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


def group_weights(labels: Sequence[int], reps: dict[int, int]) -> tuple[Sample, ...]:
    """One sample per group: ``reps[label] = index``, weight = group size."""
    sizes: dict[int, int] = {}
    for lab in labels:
        sizes[lab] = sizes.get(lab, 0) + 1
    return tuple(Sample(reps[lab], float(sizes[lab])) for lab in sorted(reps))
