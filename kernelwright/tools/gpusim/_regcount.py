"""Hardware register counts for trace headers: ``ptxas -v`` on the PTX, once per module.

PTX declares virtual registers (often hundreds); occupancy needs what ptxas allocates. Without
ptxas the count is 0, which readers treat as unknown.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

log = logging.getLogger(__name__)


@lru_cache(maxsize=64)
def register_counts(ptx_hash: str, ptx: str, target: str) -> dict[str, int]:
    """Registers per entry from ``ptxas -arch=<target> -v`` ({} when ptxas is unavailable)."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return {}
    from kernelwright.tools.backends._ptxas import parse_ptxas

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / f"{ptx_hash[:16]}.ptx"
        src.write_text(ptx)
        cmd = [ptxas, f"-arch={target or 'sm_90'}", "-v", str(src), "-o", str(Path(tmp) / "o")]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        log.debug("ptxas failed, trace headers get nregs = 0: %s", proc.stderr[:200])
        return {}
    return {k: s.registers or 0 for k, s in parse_ptxas(proc.stderr + proc.stdout).items()}
