"""The evaluator's own start-up, tried once: what ``kernelwright doctor`` runs to say whether
candidates can be evaluated here at all.

Finding ``bwrap`` on the PATH is not enough: the sandboxed runner must also find its
interpreter, kernelwright and torch at the paths the sandbox binds (a virtual environment
reached through a symlink, a moved checkout or a half-installed environment all fail there
and nowhere else). So the check starts the real sandboxed fork server, with the same command
and environment an evaluation uses, waits for its ``ready`` and closes it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kernelwright.tools.evaluate import sandbox
from kernelwright.tools.evaluate.orchestrator import ForkServer

if TYPE_CHECKING:
    from kernelwright.config import Settings

RUNNER_FIX = ("recreate the environment the runner starts from (`make setup`, or `pip install "
              "-e .` in the virtual environment), then rerun `kernelwright doctor`; the runner's "
              "interpreter is {python}")

SELF_REFERENCE = " Run `kernelwright doctor` to check the sandbox."  # we are doctor


@dataclass(frozen=True)
class RunnerProbe:
    """Whether the candidate runner starts, in which sandbox, how fast, and the fix if not."""

    works: bool
    sandboxed: bool
    seconds: float
    detail: str
    fix: str | None


def probe_runner(settings: Settings, bwrap: str | None) -> RunnerProbe:
    """Start the candidate runner's fork server once (in bubblewrap when ``bwrap`` is given)
    and close it; never raises."""
    where = "in bubblewrap" if bwrap else "WITHOUT a sandbox (no working bubblewrap)"
    start = time.monotonic()
    try:
        server = ForkServer(settings, bwrap)
    except Exception as exc:  # any failure to start is the answer, not an error of doctor
        detail = " ".join(f"{type(exc).__name__}: {exc}".split()).replace(SELF_REFERENCE, "")
        return RunnerProbe(False, bwrap is not None, time.monotonic() - start,
                           f"the candidate runner did not start {where}: {detail[-600:]}",
                           RUNNER_FIX.format(python=sandbox.interpreter()))
    server.close()
    seconds = time.monotonic() - start
    return RunnerProbe(True, bwrap is not None, seconds,
                       f"the candidate runner started {where} in {seconds:.1f} s", None)
