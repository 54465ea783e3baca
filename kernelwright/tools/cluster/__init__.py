"""Evaluation workers on Ray: one actor per device, each a trusted orchestrator + sandbox.

``open_pool(settings)`` gives today's in-process :class:`WorkerPool` unless
``settings.cluster`` names a Ray cluster (``ray://host:10001``, ``host:6379`` or ``auto``);
then a :class:`RayPool` with the same ``evaluate``/``contract``/``close`` interface.
"""

from __future__ import annotations

from kernelwright.config import Settings


def open_pool(settings: Settings):
    """The evaluation pool a run uses: in-process, or Ray actors with ``--cluster``."""
    if not settings.cluster:
        from kernelwright.tools.evaluate import WorkerPool

        return WorkerPool(settings)
    from kernelwright.tools.cluster.pool import RayPool

    return RayPool(settings)


__all__ = ["open_pool"]
