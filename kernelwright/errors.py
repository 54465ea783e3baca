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


class FrameworkOperatorError(KernelwrightError, RuntimeError):
    """A framework compute operator was called under a custom-kernels-only contract."""


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


class LLMError(KernelwrightError, RuntimeError):
    """The LLM endpoint cannot be used (unreachable, rejected the key, unknown model, ...).

    The message names the endpoint, what it answered, and the flag or variable that fixes it.
    """


class LLMBudgetError(LLMError):
    """A call was attempted after the run's token or cost budget was spent.

    The message names the budget that ran out and the flag that raises it
    (``--max-tokens``/``--max-cost``).
    """


class ReplyFormatError(KernelwrightError, ValueError):
    """An LLM reply does not follow the requested format.

    The message is written to be fed back to the model: it names what is missing and the
    shape the reply must take.
    """


class SpaceExhaustedError(KernelwrightError, LookupError):
    """Every point of a finite search space has been tried: stop the loop.

    Raised by ``Tuner.ask``; the fix is to stop asking (see ``Tuner.exhausted``) or to widen
    the space.
    """


class PtxParseError(KernelwrightError, ValueError):
    """PTX text the front end cannot read; the message names the line and the statement.

    Fix: emit the PTX with ``nvcc -ptx`` (or ``ptxas``-accepted syntax) for a supported arch.
    """


class TraceFormatError(KernelwrightError, ValueError):
    """A trace file does not follow the Accel-Sim syntax; the message names file and line.

    Fix: regenerate the trace with the Accel-Sim tracer or ``kernelwright gpusim trace``.
    """


class EmulatorError(LaunchError):
    """The emulated kernel did something a GPU would fault or hang on (deadlock, runaway loop).

    The message names the kernel, the warp and the instruction; fix the kernel.
    """


class MemoryFault(LaunchError):
    """An emulated access outside every buffer (what compute-sanitizer would report).

    The message names the kernel, the address and the nearest buffer; fix the kernel's indexing.
    """


class UnsupportedInstructionError(LaunchError, NotImplementedError):
    """The emulator cannot execute an instruction; the message names it, the kernel and line.

    Fix: compile without that instruction, or add it to ``tools/gpusim`` (see its docstring).
    """


class RunnerError(KernelwrightError, RuntimeError):
    """Inside an evaluation runner: a candidate (or reference) failure to report as data.

    ``level`` names the ladder rung (``"syntax"``, ``"build"``, ``"runtime"``, ...) and
    ``error`` the message; the runner turns it into ``{"type": "error", ...}`` and the harness
    into a failed ``EvalResult`` — it never reaches a user as an exception.
    """

    def __init__(self, level: str, error: str) -> None:
        super().__init__(error)
        self.level, self.error = level, error
