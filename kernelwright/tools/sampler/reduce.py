"""A reduced trace folder: only the representatives, plus the weights that scale them back.

Layout (Accel-Sim runs it as is: plain ``kernelslist.g`` and uncompressed ``.traceg`` files)::

    out/kernelslist.g          the folder's memcpy commands, then the representatives' kernel
                               files in launch order
    out/kernel-N.traceg        copies (decompressed) of the representatives' kernel files
    out/sample_weights.csv     kernel_file,kernel_id,invocation,weight  (one row per kernel)

Whole-workload time from a simulation of the reduced folder: ``sum_s weight_s * t_s``.
"""

from __future__ import annotations

import csv
import shutil
from dataclasses import dataclass
from pathlib import Path

from kernelwright.errors import SamplerError
from kernelwright.tools.gpusim.traces import MemcpyCommand, read_trace_dir
from kernelwright.tools.sampler.base import Selection

WEIGHTS_FILE = "sample_weights.csv"


@dataclass(frozen=True)
class WeightRow:
    """One line of ``sample_weights.csv``."""

    kernel_file: str
    kernel_id: int
    invocation: int
    weight: float


def write_reduced_trace(trace_dir: str | Path, selection: Selection, out: str | Path) -> Path:
    """Write the reduced folder for ``selection`` of the kernels in ``trace_dir``.

    Raises:
        SamplerError: ``out`` is the source folder, or a representative is missing from it.
    """
    src, dst = Path(trace_dir).resolve(), Path(out)
    if dst.resolve() == src:
        raise SamplerError(f"--out {dst} is the trace folder itself; choose another folder")
    dst.mkdir(parents=True, exist_ok=True)
    weights = {s.index: s.weight for s in selection.samples}
    listing, rows, index = [], [], 0
    for item in read_trace_dir(src):
        if isinstance(item, MemcpyCommand):
            listing.append(f"{item.kind},0x{item.addr:016x},{item.nbytes}")
            continue
        if index in weights:
            name = item.path.name.removesuffix(".xz")
            _copy_plain(item.path, dst / name)
            listing.append(name)
            rows.append(WeightRow(name, item.info.kernel_id, index, weights[index]))
        index += 1
    missing = set(weights) - {r.invocation for r in rows}
    if missing:
        raise SamplerError(f"invocations {sorted(missing)} are not in {src} (it has {index} "
                           "kernels); sample the same folder you reduce")  # fmt: skip
    (dst / "kernelslist.g").write_text("".join(line + "\n" for line in listing))
    with open(dst / WEIGHTS_FILE, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["kernel_file", "kernel_id", "invocation", "weight"])
        w.writerows([r.kernel_file, r.kernel_id, r.invocation, repr(r.weight)] for r in rows)
    return dst


def read_weights(reduced_dir: str | Path) -> list[WeightRow]:
    """The rows of a reduced folder's ``sample_weights.csv``."""
    with open(Path(reduced_dir) / WEIGHTS_FILE, newline="") as fh:
        return [WeightRow(r["kernel_file"], int(r["kernel_id"]), int(r["invocation"]),
                          float(r["weight"])) for r in csv.DictReader(fh)]  # fmt: skip


def _copy_plain(src: Path, dst: Path) -> None:
    if src.suffix == ".xz":
        import lzma

        with lzma.open(src, "rb") as fi, open(dst, "wb") as fo:
            shutil.copyfileobj(fi, fo)
    else:
        shutil.copyfile(src, dst)
