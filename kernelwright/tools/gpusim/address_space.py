"""Device addresses for host buffers, kept across kernel launches.

A real program allocates each buffer once (``cudaMalloc``) and passes the same pointer to every
kernel that uses it, so kernel B can hit in L2 on what kernel A wrote. An :class:`AddressSpace`
gives the emulator that: each distinct host buffer gets its own device range, aligned to
``granularity`` bytes with at least one empty granule after it (ranges never overlap), and every
later launch that passes the same buffer - or a view into it - sees the same address.

Ranges are handed out in first-seen order from ``base``, so a program that allocates in the same
order gets the same addresses on every run (the timing model's caches see the same sets). The
space keeps the buffers it has seen alive, so a host pointer cannot be reused by another buffer
while the space lives: use one space per workload run.

Example:
    >>> space = AddressSpace()
    >>> a, b = np.zeros(1000, np.float32), np.zeros(10, np.float32)
    >>> space.address_of(a) == space.address_of(a), space.address_of(b) - space.address_of(a)
    (True, 2097152)
    >>> space.address_of(a[10:]) - space.address_of(a)  # a view: same allocation, offset
    40
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GLOBAL_BASE = 0x7F00_0000_0000
GRANULE = 1 << 20


@dataclass(frozen=True, slots=True)
class _Allocation:
    host_start: int
    host_end: int
    device: int
    owner: np.ndarray  # keeps the host memory alive (and its address unique)


class AddressSpace:
    """Hands out aligned, non-overlapping device ranges, one per distinct host buffer.

    Args:
        base: first device address.
        granularity: alignment of every range; each range also leaves one empty granule after
            its end (an out-of-bounds access lands in no buffer and is reported).
    """

    def __init__(self, base: int = GLOBAL_BASE, granularity: int = GRANULE) -> None:
        if granularity <= 0 or granularity & (granularity - 1):
            raise ValueError(f"granularity={granularity}: give a power of two, e.g. {GRANULE}")
        self.base, self.granularity = base, granularity
        self._next = base
        self._allocations: list[_Allocation] = []

    def __repr__(self) -> str:
        return (f"AddressSpace(base={self.base:#x}, buffers={len(self._allocations)}, "
                f"next={self._next:#x})")

    def __len__(self) -> int:
        return len(self._allocations)

    def address_of(self, array: np.ndarray) -> int:
        """The device address of ``array``'s first byte (allocating a range on first sight).

        An array inside a buffer seen before (a view or slice of it) maps into that buffer's
        range at the same offset.
        """
        start = int(array.__array_interface__["data"][0])
        end = start + array.nbytes
        if array.nbytes:
            for a in reversed(self._allocations):
                if a.host_start <= start and end <= a.host_end:
                    return a.device + (start - a.host_start)
        return self._allocate(array, start, end)

    def _allocate(self, array: np.ndarray, start: int, end: int) -> int:
        device, g = self._next, self.granularity
        self._next = device + (end - start + 2 * g) // g * g
        if end > start:
            self._allocations.append(_Allocation(start, end, device, array))
        return device
