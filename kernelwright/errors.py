"""One error hierarchy for kernelwright.

Every error names the problem and the fix. Subclasses also inherit the builtin that fits, so
callers can catch ``ValueError`` or ``RuntimeError`` as they would anywhere else.

A candidate that fails to build, is wrong, or times out is *data* (an ``EvalResult``), never an
exception: exceptions mean misconfiguration or a bug.
"""

from __future__ import annotations


class KernelwrightError(Exception):
    """Root of every error kernelwright raises on purpose."""


class ConfigError(KernelwrightError, ValueError):
    """A setting, flag or environment variable has a value that cannot work."""


class TaskError(KernelwrightError, ValueError):
    """A task file cannot be loaded or its reference cannot be turned into a contract."""


class CandidateError(KernelwrightError, ValueError):
    """A candidate module is malformed in a way the caller (not the harness) must fix."""


class BackendUnavailableError(KernelwrightError, RuntimeError):
    """A backend's toolchain or device is missing on this machine."""


class BuildError(KernelwrightError, RuntimeError):
    """A kernel source failed to compile; ``log`` holds the compiler's message."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message if not log else f"{message}\n{log}")
        self.log = log


class LaunchError(KernelwrightError, RuntimeError):
    """A kernel launch was rejected by the runtime (bad arguments, bad range)."""


class WorkerError(KernelwrightError, RuntimeError):
    """The evaluation worker could not be started or talked to."""


class RunStoreError(KernelwrightError, RuntimeError):
    """A run id or store path does not exist or is unreadable."""


class PathNotAllowedError(KernelwrightError, PermissionError):
    """A path given to the MCP server lies outside every root the server was started with."""


class LoweringError(KernelwrightError, NotImplementedError):
    """A PyTorch reference could not be lowered to kernels (an operator or form unsupported)."""


class ChatError(KernelwrightError, ValueError):
    """A chat request or thread cannot be used (no task named, not a chat thread, ...)."""


class CampaignError(KernelwrightError, ValueError):
    """A campaign cannot start or resume (empty task folder, unknown campaign id, ...)."""


class SamplerError(KernelwrightError, ValueError):
    """The workload sampler was given something it cannot sample (empty trace, bad method)."""
