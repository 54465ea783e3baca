"""Probe every registered backend; what ``kernelwright doctor`` prints."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from kernelwright.tools.backends.base import BackendStatus
from kernelwright.tools.backends.registry import BACKENDS, BackendRegistry

if TYPE_CHECKING:
    from kernelwright.config import Settings

log = logging.getLogger(__name__)


def probe(name: str, settings: Settings) -> BackendStatus:
    """The status of backend ``name`` built with ``settings``; never raises."""
    try:
        return BackendRegistry(settings).create(name).status()
    except Exception as exc:  # a broken backend is reported, not raised
        log.debug("probing backend %s failed", name, exc_info=True)
        return BackendStatus(
            name=name, can_compile=False, can_run=False,
            detail=f"probing failed: {type(exc).__name__}: {exc}",
            fix="reinstall kernelwright with its dependencies (pip install -e .), then rerun "
                "`kernelwright doctor`",
        )


def doctor(settings: Settings) -> list[BackendStatus]:
    """One :class:`BackendStatus` per registered backend, in registry order."""
    return [probe(name, settings) for name in BACKENDS]
