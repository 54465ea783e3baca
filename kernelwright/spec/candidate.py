"""A candidate: a Python module defining ``ModelNew`` that builds kernels through kernelwright."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, computed_field

from kernelwright.errors import CandidateError

ParamValue = int | float | str | bool


class Candidate(BaseModel):
    """One kernel implementation of a task, identified by the hash of what it is.

    ``source`` is the text of a Python module defining ``class ModelNew(nn.Module)`` with the
    reference ``Model``'s constructor signature (the KernelBench convention). Its kernels are
    built through kernelwright helpers such as ``kernelwright.tools.backends.sycl.load_inline``.

    Example:
        >>> c = Candidate(source="class ModelNew: ...", backend="sycl")
        >>> len(c.id)
        16
    """

    model_config = ConfigDict(frozen=True)

    source: str
    backend: str = "sycl"
    params: dict[str, ParamValue] = Field(default_factory=dict)
    origin: str = "user"
    parent: str | None = None
    prompt_id: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def id(self) -> str:
        """The hash of what runs: the module text and its backend. ``params`` only label a
        schedule point; they are baked into the text, so two points (or an LLM copy of the
        lowered seed) that emit the same text are one candidate, evaluated once."""
        blob = json.dumps({"source": self.source, "backend": self.backend}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @classmethod
    def from_file(cls, path: str | Path, backend: str | None = None, **kw: object) -> Candidate:
        """Read a candidate module from disk; the backend is guessed from its imports."""
        p = Path(path)
        if not p.is_file():
            what = "is a directory" if p.is_dir() else "does not exist"
            raise CandidateError(
                f"candidate file {p} {what}: pass the path of a Python module that "
                "defines ModelNew"
            )
        source = p.read_text()
        guessed = guess_backend(source)
        if backend is not None:
            backend = backend.strip().lower()
            if guessed != "torch" and backend != guessed:
                raise CandidateError(
                    f"candidate {p} builds its kernels with {guessed}, but backend {backend!r} "
                    f"was asked for: drop the backend option, or pass {guessed!r}"
                )
        return cls(source=source, backend=backend or guessed, origin=str(p), **kw)


def guess_backend(source: str) -> str:
    """Name the backend a candidate module builds its kernels with (``torch`` if none).

    A lowered program (``kernelwright.tools.lower``) names it in its ``BACKEND = '...'`` line.

    Example:
        >>> guess_backend("from kernelwright.tools.backends import cpp")
        'cpp'
        >>> lowered = "from kernelwright.tools.lower.runtime import LoweredModule"
        >>> guess_backend(lowered + chr(10) + "BACKEND = 'cuda'")
        'cuda'
    """
    lowered = re.search(r"^BACKEND = ['\"](sycl|cuda|cpp)['\"]$", source, re.MULTILINE)
    if lowered and "kernelwright.tools.lower" in source:
        return lowered.group(1)
    for name in ("sycl", "cuda", "cpp", "opencl"):
        if f"backends.{name}" in source or f"backends import {name}" in source:
            return "sycl" if name == "opencl" else name
    return "torch"
