"""The outside functions a built C++ library imports, and those a custom-kernels-only contract
refuses.

A C++ kernel is native code in the candidate's process: through its imports it could call
the framework (libtorch's ``at::``/``c10::`` functions, the Python C API and so numpy),
a vendor library (BLAS, oneDNN, MKL), load either at run time (``dlopen``/``dlsym``), or start
another process to compute for it. Under a custom-kernels-only contract the candidate runner
calls :func:`refuse_outside_compute` before it imports the candidate; from then on every C++
library this process loads is read first (``nm -D --undefined-only``), and one importing a
refused symbol is not loaded: the build fails with the symbols and the reason.

This narrows the native route; it does not close it. Native code can still find a function
without importing it (by reading the process's memory maps and ELF tables by hand); see
docs/SECURITY.md.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from kernelwright.errors import BuildError

# (pattern on the undefined symbol's name, what it reaches)
REFUSED: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), why) for p, why in (
        (r"^_ZN(K)?(2at|3c10|5torch|3aten)", "the framework (libtorch)"),
        (r"^_?Py|^_Py", "the Python C API (and through it numpy and torch)"),
        (r"^(cblas_|LAPACKE_|[sdcz](gemm|gemv|syrk|trsm)_?$|mkl_|MKL_|dnnl_|mkldnn_|"
         r"openblas_|cublas|cudnn)", "a vendor library"),
        (r"^(dlopen|dlsym|dlvsym|dlmopen|__libc_dlopen_mode|__libc_dlsym|_dl_)",
         "loading code at run time"),
        (r"^(system|popen|execl|execle|execlp|execv|execve|execvp|execvpe|fexecve|fork|vfork|"
         r"posix_spawn|posix_spawnp|clone|clone3)$", "starting another process"),
    )
)
NM_FIX = "install binutils (Debian/Ubuntu: apt-get install binutils)"
# the words every custom-only refusal carries (the harness flags ``framework_operator`` on them)
MARKER = "is not available: this task's contract allows custom kernels only"

_refusing: list[bool] = []


def refuse_outside_compute() -> None:
    """From now on, in this process, load no C++ library that imports a refused symbol."""
    if not _refusing:
        _refusing.append(True)


def refusing() -> bool:
    return bool(_refusing)


def imported_symbols(library: Path) -> list[str]:
    """The undefined dynamic symbols of ``library`` (versions stripped)."""
    nm = shutil.which("nm")
    if nm is None:
        raise BuildError(f"cannot read the imports of {Path(library).name}: nm is missing. "
                         f"Fix: {NM_FIX}")
    out = subprocess.run([nm, "-D", "--undefined-only", "--format=posix", str(library)],
                         capture_output=True, text=True, timeout=60, check=False)
    if out.returncode != 0:
        raise BuildError(f"cannot read the imports of {Path(library).name}: "
                         f"{out.stderr.strip()[:300]}")
    return sorted({line.split()[0].split("@")[0] for line in out.stdout.splitlines()
                   if line.strip()})


def refused_imports(symbols: list[str]) -> dict[str, str]:
    """The refused ones among ``symbols``, each with what it reaches."""
    found: dict[str, str] = {}
    for name in symbols:
        for pattern, why in REFUSED:
            if pattern.search(name):
                found[name] = why
                break
    return found


def check_library(library: Path) -> None:
    """Raise :class:`BuildError` when ``library`` imports a refused symbol (only while
    :func:`refuse_outside_compute` is in force)."""
    if not _refusing:
        return
    refused = refused_imports(imported_symbols(library))
    if refused:
        listed = "; ".join(f"{name} ({why})" for name, why in list(refused.items())[:8])
        raise BuildError(f"calling outside code from a C++ kernel {MARKER}: the library "
                         f"imports {listed}. Compute everything in your own code (allowed: "
                         "libc, libm, libstdc++, OpenMP)")
