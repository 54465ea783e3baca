"""The backends of one process, built from one ``Settings``: name -> instance, made on first use.

Registry entries are ``"module:Class"`` strings (:func:`kernelwright.registry.resolve`), so a
backend whose SDK is missing costs nothing until it is asked for.

Candidate modules reach a backend through module-level helpers (``sycl.load_inline``); those
ask the *active* registry of their process. The evaluation worker activates the registry it
builds from the settings of its start message, and reads from the same registry which backends
a candidate used and which queues to synchronise — nothing is patched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kernelwright.registry import lookup

if TYPE_CHECKING:
    from kernelwright.config import Settings
    from kernelwright.tools.backends.base import Backend

BACKENDS: dict[str, str] = {
    "sycl": "kernelwright.tools.backends.sycl:SyclBackend",
    "cpp": "kernelwright.tools.backends.cpp:CppBackend",
    "cuda": "kernelwright.tools.backends.cuda:CudaBackend",
}


class BackendRegistry:
    """Backends built from ``settings``, one instance per name, plus a record of their use.

    Example:
        >>> registry = BackendRegistry(Settings(backend="cpp"))  # doctest: +SKIP
        >>> registry.get().name, registry.get("cpp") is registry.get()  # doctest: +SKIP
        ('cpp', True)
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._built: dict[str, Backend] = {}
        self._used: set[str] = set()

    def get(self, name: str | None = None) -> Backend:
        """The backend ``name`` (``None``: ``settings.backend``), built on first use.

        Raises:
            ValueError: unknown name; the message lists the registered ones.
        """
        name = name or self.settings.backend
        if name not in self._built:
            self._built[name] = lookup(BACKENDS, name, "backend")(self.settings)
        self._used.add(name)
        return self._built[name]

    def create(self, name: str) -> Backend:
        """A new, unshared instance of backend ``name`` (for probing: ``kernelwright doctor``)."""
        return lookup(BACKENDS, name, "backend")(self.settings)

    def built(self) -> dict[str, Backend]:
        """The backends this registry has built so far, by name."""
        return dict(self._built)

    def used(self) -> list[str]:
        """Names handed out by :meth:`get` since the last :meth:`forget_use`, sorted."""
        return sorted(self._used)

    def forget_use(self) -> None:
        """Start a new record of use (the worker calls it before each candidate)."""
        self._used.clear()

    def __repr__(self) -> str:
        return f"BackendRegistry(backend={self.settings.backend!r}, built={sorted(self._built)})"


_active: BackendRegistry | None = None


def activate(registry: BackendRegistry) -> BackendRegistry:
    """Make ``registry`` the one candidate modules' helpers use in this process."""
    global _active
    _active = registry
    return registry


def active_registry() -> BackendRegistry:
    """The registry activated in this process.

    A process that never activated one (a notebook importing a candidate module directly) gets
    one built from the environment's settings (``KERNELWRIGHT_*``) on first use: the
    candidate's module-level API has no other way to receive settings.
    """
    if _active is None:
        from kernelwright.config import Settings

        activate(BackendRegistry(Settings()))
    assert _active is not None
    return _active
