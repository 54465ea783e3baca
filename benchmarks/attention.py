"""Attention: eager PyTorch and torch.compile vs our attention kernel vs torch's fused kernel
as the library option, on the C++ backend, per shape.

Each shape is written as a KernelBench-format task, lowered (``ir.Attention``) and timed in
this process on the nominal inputs in interleaved rounds with eager (median ms per forward of
``--rounds`` rounds). Prints the load average before and after: on a shared machine read the
ratios, not absolute times.

    PYTHONPATH=. .venv/bin/python benchmarks/attention.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

import torch

from benchmarks.vendor_fused import eager_s
from kernelwright.spec import Task
from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.choose import time_program

TASK = '''
import torch
from torch.nn import functional as F

class Model(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal={causal})

def get_inputs():
    return [torch.rand({b}, {h}, {n}, {d}), torch.rand({b}, {h}, {n}, {d}),
            torch.rand({b}, {h}, {n}, {d})]

def get_init_inputs():
    return []
'''

SHAPES = {  # name -> (batch, heads, tokens, width, causal)
    "kernelbench_97_scaled": (32, 32, 32, 32, False),
    "heads16_tokens512_w64": (2, 8, 512, 64, False),
    "heads16_tokens512_w64_causal": (2, 8, 512, 64, True),
    "heads16_tokens128_w128": (4, 4, 128, 128, False),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print(f"{'shape':<30}{'eager ms':>10}{'compile ms':>11}{'ours ms':>10}{'torch ms':>10}"
          f"{'ours x':>8}{'vs compile':>11}{'torch x':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (b, h, n, d, causal) in SHAPES.items():
            path = Path(tmp) / f"{name}.py"
            path.write_text(TASK.format(b=b, h=h, n=n, d=d, causal=causal))
            task = Task.from_path(path)
            prog = lower_task(task, "cpp")
            progs = {"ours": prog.with_params({"g0.impl": "kernel"}),
                     "torch": prog.with_params({"g0.impl": "vendor"})}
            samples: dict[str, list[float]] = {"eager": [], "compile": [], "ours": [],
                                               "torch": []}
            compiled = torch.compile  # one compile per round's fresh model; warmed up first
            for _ in range(args.rounds):
                samples["eager"].append(eager_s(task))
                samples["compile"].append(eager_s(task, wrap=compiled))
                for key, p in progs.items():
                    samples[key].append(time_program(p, rounds=1)[0])
            ms = {key: statistics.median(v) * 1e3 for key, v in samples.items()}
            print(f"{name:<30}{ms['eager']:>10.3f}{ms['compile']:>11.3f}{ms['ours']:>10.3f}"
                  f"{ms['torch']:>10.3f}{ms['eager'] / ms['ours']:>7.2f}x"
                  f"{ms['compile'] / ms['ours']:>10.2f}x{ms['eager'] / ms['torch']:>8.2f}x",
                  flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
