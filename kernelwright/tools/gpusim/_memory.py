"""Byte-addressed memories for the emulator: global (device pointers -> numpy buffers), and flat
per-CTA / per-thread arenas for shared and local memory. All accesses are vectorised."""

from __future__ import annotations

import bisect

import numpy as np

from kernelwright.errors import MemoryFault
from kernelwright.tools.gpusim.address_space import AddressSpace

SHARED_WINDOW = 0x0000_1000_0000_0000  # generic addresses of shared memory
LOCAL_WINDOW = 0x0000_2000_0000_0000  # generic addresses of local memory
WINDOW_SIZE = 1 << 32


def typed_get(data: np.ndarray, off: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Read ``dt`` values at byte offsets ``off`` of a flat uint8 buffer."""
    w = dt.itemsize
    if w == 1:
        return data[off].view(dt)
    if not (off % w).any():
        return data[: data.size // w * w].view(dt)[off // w]
    return data[off[:, None] + np.arange(w)].view(dt).reshape(-1)


def typed_set(data: np.ndarray, off: np.ndarray, values: np.ndarray) -> None:
    """Write ``values`` at byte offsets ``off`` (the last writer wins, in lane order)."""
    dt = values.dtype
    w = dt.itemsize
    if not (off % w).any():
        data[: data.size // w * w].view(dt)[off // w] = values
    else:
        data[off[:, None] + np.arange(w)] = (
            np.ascontiguousarray(values).view(np.uint8).reshape(-1, w)
        )


class GlobalMemory:
    """Device pointers for numpy buffers; loads/stores are gathers/scatters on those buffers.

    Example:
        >>> mem = GlobalMemory(); base = mem.add(np.zeros(4, np.float32))
        >>> mem.load(np.array([base + 4], np.uint64), np.dtype(np.float32))
        array([0.], dtype=float32)
    """

    def __init__(self, space: AddressSpace | None = None) -> None:
        self.space = space if space is not None else AddressSpace()
        self.bases: list[int] = []  # sorted
        self.buffers: list[np.ndarray] = []
        self.names: list[str] = []
        self._bases_arr = np.zeros(0, np.uint64)

    def add(self, array: np.ndarray, name: str = "") -> int:
        """Register a C-contiguous array (written in place); returns its device address.

        The address comes from the launch's :class:`AddressSpace`: the same buffer passed to
        several launches sharing a space keeps its address.
        """
        flat = array.reshape(-1).view(np.uint8) if array.size else np.zeros(0, np.uint8)
        base = self.space.address_of(flat)
        k = bisect.bisect_right(self.bases, base)
        self.bases.insert(k, base)
        self.buffers.insert(k, flat)
        self.names.insert(k, name)
        self._bases_arr = np.array(self.bases, np.uint64)
        return base

    def _locate(self, addr: np.ndarray, width: int) -> list[tuple[int, np.ndarray | None]]:
        """Split lanes by buffer: [(buffer index, lane selector or None for all)]."""
        lo, hi = int(addr.min()), int(addr.max())
        i = int(np.searchsorted(self._bases_arr, np.uint64(lo), "right")) - 1
        if i >= 0 and hi + width <= self.bases[i] + self.buffers[i].size:
            return [(i, None)]
        which = np.searchsorted(self._bases_arr, addr, "right").astype(np.int64) - 1
        out = []
        for j in np.unique(which):
            sel = np.flatnonzero(which == j)
            end = self.bases[j] + self.buffers[j].size if j >= 0 else 0
            if j < 0 or int(addr[sel].max()) + width > end:
                bad = int(addr[sel].max()) if j >= 0 else int(addr[sel].min())
                raise MemoryFault(self._fault_message(bad, width))
            out.append((int(j), sel))
        return out

    def _fault_message(self, addr: int, width: int) -> str:
        parts = zip(self.names, self.bases, self.buffers, strict=True)
        near = ", ".join(f"{n or 'arg'}@{b:#x}+{buf.size}" for n, b, buf in parts)
        return (f"global access of {width} bytes at {addr:#x} is outside every buffer ({near}); "
                "check the kernel's index arithmetic and bounds guard")  # fmt: skip

    def offsets(self, addr: np.ndarray, width: int):
        """Yield (buffer, byte offsets, lane selector) for each buffer the lanes touch."""
        for i, sel in self._locate(addr, width):
            a = addr if sel is None else addr[sel]
            yield self.buffers[i], (a - np.uint64(self.bases[i])).astype(np.int64), sel

    def load(self, addr: np.ndarray, dt: np.dtype) -> np.ndarray:
        if addr.size == 0:
            return np.zeros(0, dt)
        parts = list(self.offsets(addr, dt.itemsize))
        if len(parts) == 1 and parts[0][2] is None:
            return typed_get(parts[0][0], parts[0][1], dt)
        out = np.empty(addr.size, dt)
        for buf, off, sel in parts:
            out[sel] = typed_get(buf, off, dt)
        return out

    def store(self, addr: np.ndarray, values: np.ndarray) -> None:
        if addr.size == 0:
            return
        values = np.broadcast_to(values, addr.shape)
        for buf, off, sel in self.offsets(addr, values.dtype.itemsize):
            typed_set(buf, off, values if sel is None else values[sel])


class Arena:
    """Shared memory of every CTA in a batch (or local memory of every thread): one slot each."""

    def __init__(self, slots: int, slot_bytes: int, space: str) -> None:
        self.slot_bytes = slot_bytes
        self.data = np.zeros(slots * slot_bytes, np.uint8)
        self.space = space

    def flat(self, slot: np.ndarray, addr: np.ndarray, width: int) -> np.ndarray:
        a = addr.astype(np.int64)
        if a.size and (int(a.min()) < 0 or int(a.max()) + width > self.slot_bytes):
            bad = int(a.max()) if int(a.max()) + width > self.slot_bytes else int(a.min())
            raise MemoryFault(
                f"{self.space} access of {width} bytes at offset {bad} is outside the "
                f"{self.slot_bytes} bytes of {self.space} memory; check the index arithmetic "
                "(or pass shared_bytes for extern __shared__ arrays)"
            )
        return slot * self.slot_bytes + a

    def load(self, slot: np.ndarray, addr: np.ndarray, dt: np.dtype) -> np.ndarray:
        return typed_get(self.data, self.flat(slot, addr, dt.itemsize), dt)

    def store(self, slot: np.ndarray, addr: np.ndarray, values: np.ndarray) -> None:
        values = np.broadcast_to(values, addr.shape)
        typed_set(self.data, self.flat(slot, addr, values.dtype.itemsize), values)
