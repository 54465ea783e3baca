"""The ops interface the IR computes through.

An IR node's ``compute(ops, idx)`` never builds text on its own: it asks a handler for
named values (``let``), accumulators (``var``), loops and statements, buffer loads, bound
registers and math calls. Code generation's :class:`~kernelwright.tools.lower.codegen.KernelCtx`
is one handler (it writes a kernel body); an analysis may run the same IR under another one
(``vendor.py``'s probe records loads, ``emit.anchor.operand_strides`` records strides). The
IR therefore depends on this protocol only, never on code generation.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kernelwright.tools.lower.index import Ix
    from kernelwright.tools.lower.ir import Node


class Ops(Protocol):
    """What a node's ``compute``/``load`` may ask of the kernel being built."""

    realized: dict[int, str]  # node id -> buffer name of nodes other kernels compute
    simd: bool  # whether the target marks vectorisable loops (``#pragma omp simd``)

    def emit(self, line: str) -> None:
        """Append one statement."""

    def fresh(self, prefix: str = "t") -> str:
        """A new local name."""

    def let(self, expr: str, ctype: str) -> str:
        """Name the value of ``expr`` (the same text in scope gives the same name)."""

    def var(self, ctype: str, init: str, prefix: str = "a") -> str:
        """A mutable local (an accumulator)."""

    def block(self, header: str) -> AbstractContextManager[None]:
        """A ``header { ... }`` scope."""

    def loop(self, name: str, size: int) -> AbstractContextManager[Ix]:
        """``for name in [0, size)``; yields the loop variable as an index."""

    def load_buffer(self, name: str, node: Node, idx: list[Ix]) -> str:
        """The element of a realized node's buffer at ``idx``."""

    def lookup(self, node: Node, key: list[Ix]) -> str | None:
        """The register bound for ``node`` at ``key`` (None: compute it here)."""

    def call(self, name: str, ctype: str, *args: str) -> str:
        """A math function call (``exp``, ``sqrt``...) spelled for the target."""

    def max_nan(self, a: str, b: str) -> str:
        """Maximum that propagates NaN as torch does."""

    def min_nan(self, a: str, b: str) -> str:
        """Minimum that propagates NaN as torch does."""

    def in_simd_loop(self) -> bool:
        """Whether the statement emitted next lies inside a loop marked for SIMD."""
