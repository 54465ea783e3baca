"""Run a module with the numeric packages unimportable: ``python -m kernelwright.tools.no_numeric
MODULE ARGS...``.

A custom-kernels-only candidate on a backend whose runtime needs no numpy (C++) runs in such a
process. The refusal is installed before anything imports torch, so torch starts without numpy
(it supports that) and no numpy, scipy, numba or other array library is ever loaded: the
candidate has no framework outside torch to compute with, and torch's own operators are
refused by the lockdown. In the bubblewrap sandbox these packages' directories are also
hidden (:func:`kernelwright.tools.evaluate.sandbox.numeric_package_dirs`), so removing this
finder finds nothing to load; without bubblewrap the finder is the only guard (weak sandbox).
"""

from __future__ import annotations

import importlib.abc
import runpy
import sys
import warnings

# Array and compute libraries: their own loops, BLAS or JIT compilers would compute for a
# candidate outside its kernels (top-level import names; ``<name>.libs`` directories go too).
NUMERIC_PACKAGES = frozenset({
    "numpy", "scipy", "numba", "llvmlite", "numexpr", "sklearn", "scikit_learn", "pandas",
    "jax", "jaxlib", "cupy", "tensorflow", "dpnp", "mkl", "mkl_fft", "mkl_random",
    "bottleneck", "pythran", "cython", "Cython",
})


class RefuseNumeric(importlib.abc.MetaPathFinder):
    """Refuses the numeric packages with a ``ModuleNotFoundError`` (what torch expects of a
    missing numpy) that says why."""

    def find_spec(self, fullname, path, target=None):  # noqa: ANN001 - the finder protocol
        if fullname.partition(".")[0] in NUMERIC_PACKAGES:
            raise ModuleNotFoundError(
                f"{fullname} is not available to a custom-kernels-only candidate: compute in "
                "your own kernels (the contract allows no framework), or ask for a contract "
                "that allows the framework", name=fullname)
        return None


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: python -m kernelwright.tools.no_numeric MODULE [ARGS...]")
    sys.meta_path.insert(0, RefuseNumeric())
    # torch says once that it starts without numpy; expected here, not worth a log line
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    module, sys.argv = sys.argv[1], sys.argv[1:]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
