"""Tiny trace folders for the sampler: three kernels, some repeated, one with a growing loop."""

from __future__ import annotations

import pytest

from kernelwright.tools.gpusim.records import KernelInfo, TraceInstruction, WarpStream
from kernelwright.tools.gpusim.traces import TraceDirWriter, TraceSampling

FULL = 0xFFFFFFFF


def _loop_body(trips: int, base: int) -> list[TraceInstruction]:
    """A load/add/store loop of ``trips`` iterations, then exit (SASS-style names)."""
    out = [TraceInstruction(0x00, FULL, "S2R", ("R0",), ())]
    for t in range(trips):
        addrs = tuple(base + 4 * (32 * t + lane) for lane in range(32))
        out += [
            TraceInstruction(0x10, FULL, "LDG.E", ("R4",), ("R2",), 4, addrs),
            TraceInstruction(0x20, FULL, "FFMA", ("R5",), ("R4", "R5")),
            TraceInstruction(0x30, FULL, "IADD3", ("R2",), ("R2",)),
            TraceInstruction(0x40, FULL, "ISETP.GE.AND", ("P0",), ("R2",)),
            TraceInstruction(0x50, FULL, "BRA", (), ()),
        ]
    out += [TraceInstruction(0x60, FULL, "STG.E", (), ("R2", "R5"), 4,
                             tuple(base + 4 * lane for lane in range(32))),
            TraceInstruction(0x70, FULL, "EXIT", (), ())]  # fmt: skip
    return out


def _elementwise(base: int) -> list[TraceInstruction]:
    a = tuple(base + 4 * lane for lane in range(32))
    return [TraceInstruction(0x00, FULL, "LDG.E", ("R1",), ("R0",), 4, a),
            TraceInstruction(0x10, FULL, "FMUL", ("R2",), ("R1",)),
            TraceInstruction(0x20, FULL, "STG.E", (), ("R0", "R2"), 4, a),
            TraceInstruction(0x30, FULL, "EXIT", (), ())]  # fmt: skip


def kernel_plan() -> list[tuple[str, int]]:
    """(kernel, parameter) per launch: 'scale' repeats, 'reduce' grows, 'big' is rare."""
    plan: list[tuple[str, int]] = []
    for step in range(12):
        plan += [("scale", 0), ("reduce", 2 + step // 3)]
    plan += [("big", 16), ("big", 16)]
    return plan


def write_tiny_trace(path, plan=None) -> list[tuple[str, int]]:
    plan = plan or kernel_plan()
    with TraceDirWriter(path, sampling=TraceSampling(max_ctas=4)) as w:
        w.record_memcpy(0x7F0000000000, 4096)
        for kid, (name, param) in enumerate(plan, 1):
            ctas = 4 if name != "big" else 64
            w.begin_kernel(KernelInfo(kid, name, (ctas, 1, 1), (64, 1, 1), nregs=24))
            for cta in range(min(ctas, 4)):
                for warp in range(2):
                    base = 0x7F0000000000 + 0x10000 * (2 * cta + warp)
                    body = _elementwise(base) if name == "scale" else _loop_body(param, base)
                    w.warp(WarpStream((cta, 0, 0), warp, tuple(body)))
            w.end_kernel()
    return plan


@pytest.fixture
def tiny_trace(tmp_path):
    """A trace folder of 26 launches (see :func:`kernel_plan`)."""
    path = tmp_path / "tiny"
    write_tiny_trace(path)
    return path


@pytest.fixture
def tiny_traces(tiny_trace, tmp_settings):
    """The scanned tiny folder (no cycles)."""
    from kernelwright.tools.sampler import scan_trace_dir

    return scan_trace_dir(tiny_trace, settings=tmp_settings)
