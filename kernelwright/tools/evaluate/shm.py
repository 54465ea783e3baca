"""Shared-memory arenas: tensors pass between processes as views of one memfd, never pickled.

An arena is an anonymous ``memfd`` that the orchestrator creates and sizes, maps, and hands to
one runner over the socket (``SCM_RIGHTS``). Both sides see the same pages: the orchestrator
writes inputs and reads outputs, the runner's kernels read and write through zero-copy
``torch`` views. Each side gets its own arenas (the candidate never maps the reference's
outputs or the orchestrator's pristine copies). What a candidate only reads (the model
weights) comes as a sealed, read-only copy (:meth:`Arena.sealed_copy`), so it cannot change
what the next candidate receives.

Layout: ``slots`` copies of one tensor list (a :class:`SlotLayout`), each tensor at an offset
aligned to :data:`ALIGN` bytes, slot after slot. A ``None`` spec (a scalar argument) takes no
space.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import warnings
from dataclasses import dataclass
from typing import Any

import torch

ALIGN = 64


@dataclass(frozen=True)
class SlotLayout:
    """Shapes and dtypes of one slot: ``specs[i]`` is ``(shape, dtype_name)`` or ``None``."""

    specs: tuple[tuple[tuple[int, ...], str] | None, ...]

    @classmethod
    def of(cls, specs: list[Any]) -> SlotLayout:
        """From contract ``TensorSpec``s (or ``None``) or ``[shape, dtype]`` pairs."""
        out = []
        for s in specs:
            if s is None:
                out.append(None)
            elif isinstance(s, list | tuple):
                out.append((tuple(s[0]), str(s[1])))
            else:
                out.append((tuple(s.shape), str(s.dtype)))
        return cls(tuple(out))

    def to_json(self) -> list[Any]:
        return [None if s is None else [list(s[0]), s[1]] for s in self.specs]

    def offsets(self) -> tuple[list[int | None], int]:
        """Byte offset of each tensor within a slot, and the slot's aligned size."""
        offsets: list[int | None] = []
        at = 0
        for spec in self.specs:
            if spec is None:
                offsets.append(None)
                continue
            offsets.append(at)
            at += _aligned(_nbytes(spec))
        return offsets, max(at, ALIGN)


class Arena:
    """A memfd of ``slots`` slots of ``layout``, mapped here.

    Example:
        >>> arena = Arena.create(SlotLayout.of([((4,), "float32")]), slots=2)
        >>> arena.views(0)[0].shape
        torch.Size([4])
    """

    def __init__(self, fd: int, layout: SlotLayout, slots: int, readonly: bool = False) -> None:
        self.fd, self.layout, self.slots = fd, layout, slots
        self._offsets, self.slot_bytes = layout.offsets()
        self.size = self.slot_bytes * slots
        prot = mmap.PROT_READ if readonly else mmap.PROT_READ | mmap.PROT_WRITE
        self._map = mmap.mmap(fd, self.size, mmap.MAP_SHARED, prot)
        self.readonly = readonly
        with warnings.catch_warnings():  # views of read-only pages are read by copying only
            warnings.filterwarnings("ignore", message="The given buffer is not writable")
            self._views = [self._slot_views(i) for i in range(slots)]

    @classmethod
    def create(cls, layout: SlotLayout, slots: int, name: str = "kw-arena") -> Arena:
        fd = os.memfd_create(name, os.MFD_CLOEXEC)
        _, slot_bytes = layout.offsets()
        os.ftruncate(fd, slot_bytes * slots)
        return cls(fd, layout, slots)

    def sealed_copy(self, name: str = "kw-sealed") -> Arena:
        """A read-only copy: a new memfd holding these bytes, sealed against writing, growing
        and shrinking (``F_SEAL_WRITE`` etc.), mapped read-only here. No process it is passed
        to can change it: ``mmap(PROT_WRITE, MAP_SHARED)``, ``write`` and ``ftruncate`` fail."""
        fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        view = memoryview(self._map)
        try:
            at = 0
            while at < self.size:
                at += os.pwrite(fd, view[at:], at)
        finally:
            view.release()
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW
                    | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
        return Arena(fd, self.layout, self.slots, readonly=True)

    def _slot_views(self, slot: int) -> list[torch.Tensor | None]:
        views: list[torch.Tensor | None] = []
        for spec, off in zip(self.layout.specs, self._offsets, strict=True):
            if spec is None:
                views.append(None)
                continue
            shape, dtype = spec
            dt = getattr(torch, dtype)
            count = _count(shape)
            if count == 0:
                views.append(torch.empty(shape, dtype=dt))
                continue
            flat = torch.frombuffer(self._map, dtype=dt, count=count,
                                    offset=slot * self.slot_bytes + off)
            views.append(flat.view(shape))
        return views

    def views(self, slot: int) -> list[torch.Tensor | None]:
        """The tensors of ``slot`` (views of the shared pages; writes are seen by both sides)."""
        return self._views[slot]

    def poison(self, slots: list[int] | None = None) -> None:
        """Fill ``slots`` (default: all) with NaN (floats) or the minimum (integers), so a
        runner that answers without writing its outputs leaves them plainly wrong."""
        for slot in range(self.slots) if slots is None else slots:
            for view in self._views[slot]:
                if view is not None and view.numel():
                    view.fill_(poison_value(view.dtype))

    def close(self) -> None:
        self._views = []
        try:
            self._map.close()
        except BufferError:  # a view still exported: the mapping goes with the process
            pass
        try:
            os.close(self.fd)
        except OSError:
            pass

    def __repr__(self) -> str:
        return f"Arena(slots={self.slots}, slot_bytes={self.slot_bytes})"


def poison_value(dtype: torch.dtype) -> float | int | bool:
    if dtype == torch.bool:
        return True
    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    return torch.iinfo(dtype).min


def _count(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _nbytes(spec: tuple[tuple[int, ...], str]) -> int:
    shape, dtype = spec
    return _count(shape) * torch.empty((), dtype=getattr(torch, dtype)).element_size()


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN
