"""The lowering's backends as registered code generators (``codegen_for(name)``).

Importing this package registers SYCL, C++/OpenMP and CUDA; ``base.Codegen`` is the
interface, ``base.register`` adds another backend.
"""

from kernelwright.tools.lower.backends import cpp, cuda, sycl  # noqa: F401  (registers them)
from kernelwright.tools.lower.backends.base import (
    Codegen,
    backend_names,
    codegen_for,
    register,
)

__all__ = ["Codegen", "backend_names", "codegen_for", "register"]
