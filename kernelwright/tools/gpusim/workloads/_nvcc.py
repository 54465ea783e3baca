"""Compile CUDA C to PTX with nvcc once per source (cached by content hash)."""

from __future__ import annotations

import hashlib
import logging
import shutil
import subprocess
import tempfile
from pathlib import Path

from kernelwright.config import Settings
from kernelwright.errors import BackendUnavailableError, BuildError

log = logging.getLogger(__name__)


def compile_ptx(source: str, settings: Settings, arch: str | None = None,
                options: tuple[str, ...] = ()) -> str:  # fmt: skip
    """PTX for ``source`` from ``nvcc -arch=<arch> -ptx`` (default ``settings.cuda_arch``),
    cached under ``settings.cache_dir/gpusim-ptx``.

    Raises:
        BackendUnavailableError: nvcc is not on PATH.
        BuildError: nvcc rejected the source (the log is attached).
    """
    arch = arch or settings.cuda_arch
    key = hashlib.sha256("\0".join([source, arch, *options]).encode()).hexdigest()[:32]
    path = Path(settings.cache_dir) / "gpusim-ptx" / f"{key}.ptx"
    if path.exists():
        return path.read_text()
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise BackendUnavailableError(
            "nvcc is not on PATH, so CUDA workloads cannot be compiled to PTX. "
            "Fix: install the CUDA toolkit (nvcc 12+) and put its bin/ on PATH."
        )
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "k.cu", Path(tmp) / "k.ptx"
        src.write_text(source)
        cmd = [nvcc, f"-arch={arch}", "-ptx", *options, str(src), "-o", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise BuildError("nvcc -ptx failed", proc.stderr + proc.stdout)
        ptx = out.read_text()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = path.with_suffix(f".{key[:8]}.tmp")
    tmp_path.write_text(ptx)
    tmp_path.replace(path)
    log.debug("compiled %d bytes of CUDA to %s", len(source), path)
    return ptx
