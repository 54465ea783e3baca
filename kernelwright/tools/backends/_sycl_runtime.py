"""The live SYCL runtime of one process: the shim, loaded, and the queue it made.

Kept apart from ``sycl.py`` so the backend class reads as build/load/launch logic only. The
queue, OpenCL C programs and shared USM all come from the shim: no Python package of the
runtime (dpctl, which needs numpy) is imported, so SYCL candidates can run in a process with
no numeric package (:mod:`kernelwright.tools.no_numeric`).
"""

from __future__ import annotations

import ctypes
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kernelwright.errors import BackendUnavailableError, LaunchError
from kernelwright.tools.backends._shim import load_shim, take_string
from kernelwright.tools.backends.sycl_env import INSTALL_FIX, apply_runtime_env

if TYPE_CHECKING:
    from kernelwright.config import Settings

log = logging.getLogger(__name__)

LANGUAGE_IDS = {"sycl": 0, "opencl": 1}
_INFO = {"name": 0, "driver_version": 1, "system_usm": 2}


@dataclass(frozen=True)
class DeviceInfo:
    """What ``doctor`` and the backend's status say about the queue's device."""

    name: str
    driver_version: str
    backend: str = "opencl"


@dataclass
class SyclRuntime:
    """A profiling, in-order queue on the Intel CPU device and the shim that made it."""

    queue: int  # a sycl::queue*, owned by the shim
    lib: ctypes.CDLL
    system_usm: bool
    device: DeviceInfo
    queues: list[int] = field(default_factory=list)

    @property
    def queue_ptr(self) -> int:
        return self.queue

    def can_compile(self, language: str) -> bool:
        return bool(self.lib.kw_can_compile(self.queue_ptr, LANGUAGE_IDS[language]))

    def build(self, language: str, source: str, options: list[str]) -> tuple[int | None, str]:
        """Build ``source``; return (bundle handle or None, log or error text)."""
        opts = (ctypes.c_char_p * max(len(options), 1))(*[o.encode() for o in options])
        handle, text = ctypes.c_void_p(), ctypes.c_void_p()
        rc = self.lib.kw_build(self.queue_ptr, LANGUAGE_IDS[language], source.encode(), opts,
                               len(options), ctypes.byref(handle), ctypes.byref(text))
        return (handle.value if rc == 0 else None), take_string(self.lib, text)

    def build_opencl(self, source: str, options: list[str]) -> tuple[OpenCLProgram | None, str]:
        """Build OpenCL C; return (program or None, build log or error text)."""
        handle, text = ctypes.c_void_p(), ctypes.c_void_p()
        rc = self.lib.kw_build_opencl(self.queue_ptr, source.encode(),
                                      " ".join(options).encode(), ctypes.byref(handle),
                                      ctypes.byref(text))
        message = take_string(self.lib, text)
        if rc != 0 or not handle.value:
            return None, message or "OpenCL build failed"
        return OpenCLProgram(self.lib, handle.value), message

    def bundle_binary(self, bundle: int, names: list[str]) -> tuple[bytes, list[str]] | None:
        """The device binary of a built bundle and the OpenCL names of its kernels ``names``;
        ``None`` when the runtime cannot give them (logged)."""
        array = (ctypes.c_char_p * max(len(names), 1))(*[n.encode() for n in names])
        binary, size = ctypes.c_void_p(), ctypes.c_size_t()
        cl_names, err = ctypes.c_void_p(), ctypes.c_void_p()
        rc = self.lib.kw_bundle_binary(bundle, array, len(names), ctypes.byref(binary),
                                       ctypes.byref(size), ctypes.byref(cl_names),
                                       ctypes.byref(err))
        if rc != 0 or not binary.value:
            log.debug("no device binary from the bundle: %s", take_string(self.lib, err))
            return None
        data = ctypes.string_at(binary.value, size.value)
        self.lib.kw_free_str(binary)
        return data, take_string(self.lib, cl_names).split("\n")[:len(names)]

    def load_binary(self, binary: bytes) -> tuple[OpenCLProgram | None, str]:
        """A program from a device binary of :meth:`bundle_binary`; (None, why) if refused."""
        handle, text = ctypes.c_void_p(), ctypes.c_void_p()
        rc = self.lib.kw_load_binary(self.queue_ptr, binary, len(binary), ctypes.byref(handle),
                                     ctypes.byref(text))
        message = take_string(self.lib, text)
        if rc != 0 or not handle.value:
            return None, message or "the device binary was refused"
        return OpenCLProgram(self.lib, handle.value), message

    def get_kernel(self, bundle: int, name: str) -> int | None:
        return self.lib.kw_get_kernel(bundle, name.encode()) or None

    def wait(self) -> None:
        for q in self.queues:
            err = ctypes.c_void_p()
            if self.lib.kw_wait(q, ctypes.byref(err)) != 0:
                raise LaunchError(f"SYCL queue reported an error: {take_string(self.lib, err)}")


class OpenCLProgram:
    """An OpenCL C program built by the shim; freed with the last reference."""

    def __init__(self, lib: ctypes.CDLL, handle: int) -> None:
        self._lib, self.handle = lib, handle

    def kernel(self, name: str) -> int | None:
        """A ``sycl::kernel*`` for ``name``, or ``None`` when the program has no such kernel."""
        return self._lib.kw_opencl_kernel(self.handle, name.encode()) or None

    def __del__(self) -> None:
        try:
            self._lib.kw_free_program(self.handle)
        except (AttributeError, TypeError):  # interpreter shutdown
            pass


def _device_text(lib: ctypes.CDLL, queue: int, what: str) -> str:
    return take_string(lib, ctypes.c_void_p(lib.kw_device_info(queue, _INFO[what])))


def open_runtime(settings: Settings) -> SyclRuntime:
    """Set the runtime's environment, build (once) and load the shim, make the queue."""
    apply_runtime_env(settings)
    lib = load_shim(settings)
    err = ctypes.c_void_p()
    queue = lib.kw_make_queue(ctypes.byref(err))
    if not queue:
        raise BackendUnavailableError(
            f"no Intel OpenCL CPU device ({take_string(lib, err) or 'no reason given'}). "
            f"Fix: {INSTALL_FIX} (and start Python without the runtime's variables overridden: "
            "kernelwright sets OCL_ICD_FILENAMES itself).")
    device = DeviceInfo(name=_device_text(lib, queue, "name"),
                        driver_version=_device_text(lib, queue, "driver_version"))
    system_usm = _device_text(lib, queue, "system_usm") == "1"
    if not system_usm:
        log.warning("device lacks usm_system_allocations: arrays are copied through shared USM")
    return SyclRuntime(queue=queue, lib=lib, system_usm=system_usm, device=device,
                       queues=[queue])
