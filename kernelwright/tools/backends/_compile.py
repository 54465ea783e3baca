"""Run a compiler into an on-disk cache atomically (temporary file, then rename)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path


@dataclass(frozen=True)
class CompileOutcome:
    """What one compiler run produced: the artifact (if any), its log, and the exit status."""

    path: Path | None
    log: str
    returncode: int


def compile_atomically(
    target: Path, command: Callable[[Path], list[str]], timeout_s: float = 300.0
) -> CompileOutcome:
    """Run ``command(tmp_output)`` and rename the output onto ``target`` when it succeeds.

    Concurrent processes building the same target each write their own temporary file; the
    last rename wins and every reader sees a complete file.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(suffix=target.suffix, dir=target.parent, prefix=".tmp-")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        proc = subprocess.run(command(tmp), capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        tmp.unlink(missing_ok=True)
        return CompileOutcome(None, f"compiler timed out after {timeout_s:.0f}s: {exc.cmd}", -1)
    log = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0 or tmp.stat().st_size == 0:
        tmp.unlink(missing_ok=True)
        return CompileOutcome(None, log, proc.returncode)
    os.replace(tmp, target)
    return CompileOutcome(target, log, 0)


def write_atomically(path: Path, text: str | bytes) -> None:
    """Write ``text`` to ``path`` so that concurrent readers never see a partial file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as f:
        f.write(text)
    os.replace(tmp, path)


@cache
def tool_version(tool: str) -> str:
    """First line of ``tool --version`` (part of build-cache keys), or ``"missing"``."""
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "missing"
    lines = [ln.strip() for ln in out.stdout.splitlines() if ln.strip()]
    release = [ln for ln in lines if "release" in ln]  # nvcc: "Cuda ... release 13.0, V13.0.88"
    return (release or lines or ["?"])[0]


