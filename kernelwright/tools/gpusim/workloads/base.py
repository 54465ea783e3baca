"""The Workload family: our own CUDA C programs replayed launch by launch on the PTX emulator.

A workload owns one ``.cu`` file (package data), a host-side launch sequence in Python and a
numpy reference. ``run()`` compiles the source once (cached by hash), replays every launch
through :func:`kernelwright.tools.gpusim.launch`, optionally streaming traces to a sink.

Example:
    >>> from kernelwright.tools.gpusim.workloads import get_workload
    >>> result = get_workload("mm3", settings=Settings()).run(size=32)
    >>> result.n_launches, result.max_error < 1e-4
    (3, True)
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, ClassVar

import numpy as np

from kernelwright.config import Settings
from kernelwright.tools.gpusim._trace import TraceSampling
from kernelwright.tools.gpusim.address_space import AddressSpace
from kernelwright.tools.gpusim.emulator import LaunchStats
from kernelwright.tools.gpusim.launch import launch
from kernelwright.tools.gpusim.records import TraceSink
from kernelwright.tools.gpusim.workloads._nvcc import compile_ptx


def max_error(outputs: dict[str, np.ndarray], reference: dict[str, np.ndarray]) -> float:
    """Largest |output - reference| / (1 + |reference|) over the reference's names."""
    return max((float(np.max(np.abs(np.asarray(outputs[k], np.float64) - r) / (1 + np.abs(r)),
                             initial=0.0)) for k, r in reference.items()), default=0.0)


@dataclass(frozen=True)
class WorkloadRun:
    """The outcome of one workload run.

    Attributes:
        name: workload name.
        params: the parameters it ran with (defaults filled in).
        outputs: named result arrays from the emulated run.
        reference: the same names computed by numpy.
        launches: one LaunchStats per kernel launch, in order.
        seconds: wall time of the emulated launches (compilation excluded).
    """

    name: str
    params: dict[str, Any]
    outputs: dict[str, np.ndarray]
    reference: dict[str, np.ndarray]
    launches: list[LaunchStats] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def n_launches(self) -> int:
        return len(self.launches)

    @property
    def max_error(self) -> float:
        """Largest |emulated - reference| / (1 + |reference|) over every output."""
        return max_error(self.outputs, self.reference)

    @property
    def warp_instructions(self) -> int:
        return sum(s.warp_instructions for s in self.launches)

    @property
    def thread_instructions(self) -> int:
        return sum(s.thread_instructions for s in self.launches)


class Launcher:
    """Replays launches of one PTX module, collecting stats and forwarding traces.

    Every launch of one run shares one :class:`AddressSpace`, as one host program shares its
    ``cudaMalloc`` pointers: a buffer keeps its device address from kernel to kernel, so the
    traces show inter-kernel reuse (what ``warm_l2`` simulation needs).
    """

    def __init__(self, ptx: str, sink: TraceSink | None, sampling: TraceSampling | None):
        self.ptx, self.sink, self.sampling = ptx, sink, sampling
        self.stats: list[LaunchStats] = []
        self.address_space = AddressSpace()

    def __call__(self, kernel: str, grid, block, *args: Any, shared: int = 0) -> LaunchStats:
        st = launch(self.ptx, kernel, grid, block, list(args), shared, self.sink,
                    sampling=self.sampling, kernel_id=len(self.stats) + 1,
                    address_space=self.address_space)  # fmt: skip
        self.stats.append(st)
        return st


class Workload(ABC):
    """One workload: a CUDA source, a launch sequence and a numpy reference.

    Subclasses set ``name``, ``source`` (a ``.cu`` file in this package) and ``defaults``, and
    implement ``_execute`` (the host program) and ``reference``.
    """

    name: ClassVar[str]
    source: ClassVar[str]
    defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, settings: Settings, seed: int = 0) -> None:
        self.seed = seed
        self.settings = settings

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seed={self.seed})"

    def ptx(self) -> str:
        """PTX of the workload's CUDA source (compiled once, cached by content hash)."""
        text = resources.files(__package__).joinpath(self.source).read_text()
        return compile_ptx(text, self.settings)

    def params(self, **overrides: Any) -> dict[str, Any]:
        unknown = set(overrides) - set(self.defaults)
        if unknown:
            raise ValueError(f"{self.name} has no parameter(s) {sorted(unknown)}; "
                             f"choose from {sorted(self.defaults)}")  # fmt: skip
        return {**self.defaults, **overrides}

    def run(self, sink: TraceSink | None = None, sampling: TraceSampling | None = None,
            **overrides: Any) -> WorkloadRun:  # fmt: skip
        """Replay every launch on the emulator; ``overrides`` change ``defaults``."""
        p = self.params(**overrides)
        launcher = Launcher(self.ptx(), sink, sampling)
        rng = np.random.default_rng(self.seed)
        inputs = self.inputs(rng, p)
        t0 = time.perf_counter()
        outputs = self._execute(launcher, p, {k: v.copy() for k, v in inputs.items()})
        seconds = time.perf_counter() - t0
        return WorkloadRun(self.name, p, outputs, self.reference(p, inputs), launcher.stats,
                           seconds)  # fmt: skip

    def replay(self, launch: Any, **overrides: Any
               ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:  # fmt: skip
        """The host program through another launcher on the inputs :meth:`run` uses.

        ``launch(kernel, grid, block, *args, shared=0)`` runs one kernel of :meth:`ptx` and
        leaves its results in the numpy arguments (a real GPU's launcher copies them back):
        the same program and data as the emulated run, for comparing the two.

        Returns:
            the outputs, and the same names computed by numpy.
        """
        p = self.params(**overrides)
        inputs = self.inputs(np.random.default_rng(self.seed), p)
        outputs = self._execute(launch, p, {k: v.copy() for k, v in inputs.items()})
        return outputs, self.reference(p, inputs)

    @abstractmethod
    def inputs(self, rng: np.random.Generator, p: dict[str, Any]) -> dict[str, np.ndarray]:
        """Random inputs for parameters ``p``."""

    @abstractmethod
    def _execute(self, launch: Launcher, p: dict[str, Any], data: dict[str, np.ndarray]
                 ) -> dict[str, np.ndarray]:  # fmt: skip
        """The host program: launch kernels on ``data`` and return named outputs."""

    @abstractmethod
    def reference(self, p: dict[str, Any], data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The same outputs computed with numpy."""


def blocks(n: int, per: int) -> int:
    """Number of blocks of ``per`` covering ``n``."""
    return max(1, -(-n // per))
