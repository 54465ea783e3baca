"""The live SYCL runtime of one process: dpctl's queue plus the loaded shim.

Kept apart from ``sycl.py`` so the backend class reads as build/load/launch logic only.
"""

from __future__ import annotations

import ctypes
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kernelwright.errors import BackendUnavailableError, LaunchError
from kernelwright.tools.backends._shim import load_shim, take_string
from kernelwright.tools.backends.sycl_env import INSTALL_FIX, apply_runtime_env

if TYPE_CHECKING:
    from kernelwright.config import Settings

log = logging.getLogger(__name__)

DEVICE_FILTER = "opencl:cpu"
LANGUAGE_IDS = {"sycl": 0, "opencl": 1}


@dataclass
class SyclRuntime:
    """A profiling, in-order queue on the Intel CPU device and the shim bound to it."""

    queue: Any  # dpctl.SyclQueue
    lib: ctypes.CDLL
    system_usm: bool
    queues: list[Any] = field(default_factory=list)

    @property
    def queue_ptr(self) -> int:
        return int(self.queue.addressof_ref())

    @property
    def device(self) -> Any:
        return self.queue.sycl_device

    def can_compile(self, language: str) -> bool:
        return bool(self.lib.kw_can_compile(self.queue_ptr, LANGUAGE_IDS[language]))

    def build(self, language: str, source: str, options: list[str]) -> tuple[int | None, str]:
        """Build ``source``; return (bundle handle or None, log or error text)."""
        opts = (ctypes.c_char_p * max(len(options), 1))(*[o.encode() for o in options])
        handle, text = ctypes.c_void_p(), ctypes.c_void_p()
        rc = self.lib.kw_build(self.queue_ptr, LANGUAGE_IDS[language], source.encode(), opts,
                               len(options), ctypes.byref(handle), ctypes.byref(text))
        return (handle.value if rc == 0 else None), take_string(self.lib, text)

    def build_opencl(self, source: str, options: list[str]) -> tuple[Any, str]:
        """Build OpenCL C through dpctl; return (program or None, build log or error text)."""
        import dpctl.program

        copts = " ".join(options)
        try:
            return dpctl.program.create_program_from_source(self.queue, source, copts), ""
        except dpctl.program.SyclProgramCompilationError as exc:
            return None, self.opencl_log(source, copts) or str(exc) or "OpenCL build failed"

    def opencl_log(self, source: str, copts: str) -> str:
        """The OpenCL compiler's log for ``source`` (dpctl's error carries none)."""
        text = ctypes.c_void_p()
        self.lib.kw_opencl_build_log(self.queue_ptr, source.encode(), copts.encode(),
                                     ctypes.byref(text))
        return take_string(self.lib, text).strip()

    def get_kernel(self, bundle: int, name: str) -> int | None:
        return self.lib.kw_get_kernel(bundle, name.encode()) or None

    def wait(self) -> None:
        for q in self.queues:
            err = ctypes.c_void_p()
            if self.lib.kw_wait(int(q.addressof_ref()), ctypes.byref(err)) != 0:
                raise LaunchError(f"SYCL queue reported an error: {take_string(self.lib, err)}")


def _import_dpctl(settings: Settings) -> Any:
    apply_runtime_env(settings)
    try:
        import dpctl
    except ImportError as exc:
        raise BackendUnavailableError(
            f"dpctl is not installed ({exc}). Fix: {INSTALL_FIX}"
        ) from exc
    return dpctl


def _make_queue(dpctl: Any) -> Any:
    try:
        return dpctl.SyclQueue(DEVICE_FILTER, property=["in_order", "enable_profiling"])
    except Exception as exc:  # dpctl raises its own SyclQueueCreationError
        raise BackendUnavailableError(
            f"no Intel OpenCL CPU device ({exc}); devices seen: {dpctl.get_devices()}. "
            f"Fix: {INSTALL_FIX} (and do not import dpctl before kernelwright's sycl backend)."
        ) from exc


def open_runtime(settings: Settings) -> SyclRuntime:
    """Import dpctl with the right environment, make the queue, build and load the shim."""
    dpctl = _import_dpctl(settings)
    queue = _make_queue(dpctl)
    lib = load_shim(settings)
    system_usm = bool(queue.sycl_device.has_aspect_usm_system_allocations)
    if not system_usm:
        log.warning("device lacks usm_system_allocations: arrays are copied through shared USM")
    return SyclRuntime(queue=queue, lib=lib, system_usm=system_usm, queues=[queue])
