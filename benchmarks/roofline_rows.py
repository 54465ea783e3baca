"""Memory-bound families on the C++ lowering: GB/s achieved against the measured stream triad.

For each family (pointwise chain, softmax, log-softmax, layer norm, RMS norm, sums over rows
and over everything, argmax, cumsum; softmax, sum and argmax over dim 0, whose rows lie side by
side in memory as a channel softmax's do) at inputs of 4 MB or more, the lowered C++ program
(custom kernels only) is timed interleaved with eager PyTorch, under its default schedule and under
named schedule points (``passes=one``: online softmax / one-pass norm statistics; ``lanes``;
``column``: 0 walks one row per unit instead of a block of neighbouring rows).
Times are the fastest call of alternating rounds (see ``fastest``), the triad's too.
GB/s counts each input read once and each output written once (the least traffic the
operator needs), so it is directly comparable with the triad's.

    PYTHONPATH=. .venv/bin/python benchmarks/roofline.py --rows [--rows-only] [--mb 8]
"""

from __future__ import annotations

import tempfile
import time
import types
from pathlib import Path

import torch

from kernelwright.spec import Task
from kernelwright.tools.lower import lower_task

# name -> (forward body, input shapes as (rows, cols) of float32, schedule points)
FAMILIES: dict[str, tuple[str, str, list[dict]]] = {
    "pointwise": ("torch.relu(x * 2.0 + 1.0) - 0.5", "rc", [{}]),
    "softmax": ("torch.softmax(x, dim=-1)", "rc",
                [{}, {"passes": "one"}, {"passes": "one", "block": 4096}]),
    "softmax_long": ("torch.softmax(x, dim=-1)", "long", [{}, {"passes": "one"}]),
    "log_softmax": ("torch.log_softmax(x, dim=-1)", "rc", [{}, {"passes": "one"}]),
    "layer_norm": ("torch.nn.functional.layer_norm(x, x.shape[-1:])", "rc",
                   [{}, {"passes": "one"}]),
    "rms_norm": ("torch.nn.functional.rms_norm(x, x.shape[-1:])", "rc", [{}, {"lanes": 16}]),
    "sum_rows": ("x.sum(dim=-1)", "rc", [{}, {"lanes": 16}]),
    "sum_all": ("x.sum()", "rc", [{}, {"threads": "one"}]),
    "argmax_rows": ("torch.argmax(x, dim=-1)", "rc", [{}, {"lanes": 16}]),
    "cumsum": ("torch.cumsum(x, dim=-1)", "rc", [{}]),
    # rows side by side in memory (the reduced dim is not the last), as over NCHW's channels:
    # column blocks (the default) against one row per unit (column=0)
    "softmax_dim0": ("torch.softmax(x, dim=0)", "rc", [{}, {"column": 0}, {"column": 32}]),
    "softmax_c16": ("torch.softmax(x, dim=0)", "c16", [{}, {"column": 0}, {"column": 32}]),
    "sum_dim0": ("x.sum(dim=0)", "rc", [{}, {"column": 0}, {"column": 32}]),
    "argmax_c16": ("torch.argmax(x, dim=0)", "c16", [{}, {"column": 0}]),
}


def _shape(kind: str, mb: int) -> tuple[int, int]:
    n = mb * 2**20 // 4
    return {"long": (n // 65536, 65536), "c16": (16, n // 16)}.get(kind, (n // 4096, 4096))


def _program(body: str, shape: tuple[int, int]):
    folder = Path(tempfile.mkdtemp())
    path = folder / "t.py"
    path.write_text("import torch\nfrom torch import nn\n\n\nclass Model(nn.Module):\n"
                    f"    def forward(self, x):\n        return {body}\n\n\n"
                    f"def get_inputs():\n    return [torch.randn{shape}]\n\n\n"
                    "def get_init_inputs():\n    return []\n")
    return lower_task(Task.from_path(path), "cpp")


def _callable(prog):
    mod = types.ModuleType("lowered_rows")
    exec(compile(prog.candidate.source, "lowered_rows", "exec"), mod.__dict__)
    return mod.ModelNew()


def fastest(fns: list, seconds: float) -> list[float]:
    """The fastest call of each function, timed in alternating rounds: on a shared machine
    the minimum is the estimate least disturbed by other processes (a median there measures
    the load)."""
    for f in fns:
        f()
    best = [float("inf")] * len(fns)
    end, rounds = time.perf_counter() + seconds, 0
    while time.perf_counter() < end or rounds < 5:
        for i, f in enumerate(fns):
            t = time.perf_counter()
            f()
            best[i] = min(best[i], time.perf_counter() - t)
        rounds += 1
    return best


def _on_groups(prog, point: dict) -> dict:
    return {k: v for k in prog.space for p, v in point.items() if k.endswith("." + p)}


def rows_rows(mb: int, seconds: float, triad_gbs: float) -> list[str]:
    out = []
    for name, (body, kind, points) in FAMILIES.items():
        shape = _shape(kind, mb)
        x = torch.randn(*shape)
        prog = _program(body, shape)
        ref = eval(f"lambda x: {body}", {"torch": torch})  # noqa: S307 - our own text
        want = ref(x)
        outs = want if isinstance(want, tuple) else (want,)
        moved = x.numel() * 4 + sum(o.numel() * o.element_size() for o in outs)
        fns, labels = [lambda f=ref, x=x: f(x)], ["eager"]
        for point in points:
            p = prog.with_params(_on_groups(prog, point))
            model = _callable(p)
            got = model(x)
            torch.testing.assert_close(got, want, atol=1e-3, rtol=1e-3)
            fns.append(lambda m=model, x=x: m(x))
            labels.append(",".join(f"{k}={v}" for k, v in point.items()) or "default")
        times = fastest(fns, seconds)
        cells = [f"{lb} {t * 1e3:7.3f} ms {moved / t / 1e9:5.1f} GB/s "
                 f"({moved / t / 1e9 / triad_gbs:4.0%})" for lb, t in zip(labels, times,
                                                                        strict=True)]
        out.append(f"{name:<12} {shape[0]}x{shape[1]} ({moved / 2**20:.0f} MB moved): "
                   + " | ".join(cells))
        print(out[-1], flush=True)
    return out
