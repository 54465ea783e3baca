"""The Backend family: build kernel sources, load them, launch them, synchronise the device.

One ABC here and one module per backend (``sycl.py``, ``cpp.py``, ``cuda.py``), as in
Kernel Tuner's backends. A backend that cannot work on this machine still constructs; its
``status()`` says why and how to fix it, and ``build``/``load`` raise
``BackendUnavailableError`` with the same fix.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kernelwright.errors import BuildError
from kernelwright.spec.result import KernelStats
from kernelwright.tools.backends.registry import active_registry


class BackendStatus(BaseModel):
    """What ``kernelwright doctor`` prints for one backend."""

    model_config = ConfigDict(frozen=True)
    name: str
    can_compile: bool
    can_run: bool
    device: str | None = None
    version: str | None = None
    detail: str = ""
    fix: str | None = None

    @property
    def usable(self) -> bool:
        return self.can_compile and self.can_run


class BuildResult(BaseModel):
    """The outcome of one compilation; a failed build is data, with the compiler's log."""

    model_config = ConfigDict(frozen=True)
    backend: str
    language: str
    ok: bool
    source_hash: str
    options: list[str] = Field(default_factory=list)
    log: str = ""
    seconds: float = 0.0
    cached: bool = False
    artifact: str | None = None  # path of the built artifact on disk, when there is one
    kernels: list[str] = Field(default_factory=list)
    stats: dict[str, KernelStats] = Field(default_factory=dict)


class Kernel(ABC):
    """A launchable kernel. Tensor and array arguments pass as device pointers (no copies)."""

    name: str

    @abstractmethod
    def __call__(self, *args: Any, **launch: Any) -> Any:
        """Launch with ``args`` and backend-specific launch keywords; see each backend."""


class KernelModule:
    """The kernels of one build, reachable as attributes: ``mod.softmax(x, y, ...)``."""

    def __init__(self, build: BuildResult, kernels: dict[str, Kernel]) -> None:
        self.build = build
        self._kernels = kernels

    def __getattr__(self, name: str) -> Kernel:
        kernels = self.__dict__.get("_kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(
            f"kernel {name!r} is not in this build; it has: {', '.join(sorted(kernels)) or 'none'}"
        )

    def __getitem__(self, name: str) -> Kernel:
        return getattr(self, name)

    def __repr__(self) -> str:
        return f"KernelModule({self.build.backend}, kernels={sorted(self._kernels)})"


class Backend(ABC):
    """Build and run kernels of one toolchain.

    Example:
        >>> from kernelwright.tools.backends import BackendRegistry
        >>> backend = BackendRegistry(Settings()).get("cpp")  # doctest: +SKIP
        >>> mod = backend.load_inline(SOURCE)  # doctest: +SKIP
    """

    name: str = ""
    languages: tuple[str, ...] = ()
    # Whether this backend's runtime works in a process without numpy: custom-kernels-only
    # candidates of such a backend run with no numeric package importable
    # (:mod:`kernelwright.tools.no_numeric`), so none can compute for them.
    runs_without_numpy: bool = False

    @abstractmethod
    def status(self) -> BackendStatus:
        """Probe the toolchain and device without raising."""

    @abstractmethod
    def build(
        self, source: str, *, language: str | None = None, options: Sequence[str] = ()
    ) -> BuildResult:
        """Compile ``source`` (cached on disk by source hash + options); never raises on a
        compile error: the result has ``ok=False`` and the compiler's log."""

    @abstractmethod
    def load(self, build: BuildResult) -> KernelModule:
        """Make the kernels of a successful build launchable here."""

    @property
    def emulated(self) -> bool:
        """True when kernels run on an emulator, so their timings say nothing about speed."""
        return False

    @abstractmethod
    def synchronize(self) -> None:
        """Wait until all work this backend submitted (every queue/stream) has finished."""

    def load_inline(
        self, source: str, *, language: str | None = None, options: Sequence[str] = ()
    ) -> KernelModule:
        """Build and load in one call; raise ``BuildError`` with the log if it fails.

        A build that was not served from the cache is noted in ``fresh_builds`` (what the
        evaluation harness asks its trusted builder to add to the shared cache)."""
        result = self.build(source, language=language, options=options)
        if not result.ok:
            raise BuildError(f"{self.name} build failed", result.log)
        if not result.cached:
            self.__dict__.setdefault("fresh_builds", []).append(
                {"backend": self.name, "language": result.language, "source": source,
                 "options": list(options)})
        return self.load(result)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def module_functions(name: str):
    """``load_inline`` and ``synchronize`` bound to backend ``name`` of the process's active
    registry, for the module-level API candidates use
    (``from kernelwright.tools.backends import sycl``)."""

    def load_inline(
        source: str, *, language: str | None = None, options: Sequence[str] = ()
    ) -> KernelModule:
        """Build and load ``source`` with the active registry's backend (raises ``BuildError``)."""
        return active_registry().get(name).load_inline(source, language=language, options=options)

    def synchronize() -> None:
        """Wait for every kernel the active registry's backend launched."""
        active_registry().get(name).synchronize()

    return load_inline, synchronize
