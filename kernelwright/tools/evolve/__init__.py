"""Quality-diversity search: MAP-Elites archive, behaviour descriptors, parent selection."""

from kernelwright.tools.evolve.archive import MapElitesArchive
from kernelwright.tools.evolve.descriptors import (
    AXES,
    Descriptor,
    describe,
    measured_bound,
)
from kernelwright.tools.evolve.islands import Elite
from kernelwright.tools.evolve.selection import Mode, ParentSelector, Selection

__all__ = [
    "AXES",
    "Descriptor",
    "Elite",
    "MapElitesArchive",
    "Mode",
    "ParentSelector",
    "Selection",
    "describe",
    "measured_bound",
]
