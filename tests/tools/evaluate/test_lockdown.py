"""The custom-kernels-only lockdown (tools/evaluate/lockdown.py), in a fresh interpreter: it
is permanent for the process that applies it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import gc, math, threading, torch
    from kernelwright.tools.evaluate import lockdown
    from kernelwright.tools.evaluate.verify import NON_COMPUTE_OPS
    x = torch.randn(16, 32)
    assert lockdown.lock(NON_COMPUTE_OPS) > 1000
    assert lockdown.lock(NON_COMPUTE_OPS) == 0  # idempotent
    lockdown.refuse_introspection()

    def thread_gelu():
        box = []
        def work():
            try:
                box.append(torch.nn.functional.gelu(x))
            except Exception as exc:
                box.append(exc)
        t = threading.Thread(target=work); t.start(); t.join()
        if isinstance(box[0], Exception):
            raise box[0]

    def no_dispatch():
        with torch._C._DisableTorchDispatch():
            return torch.nn.functional.gelu(x)

    blocked = {
        "gelu": lambda: torch.nn.functional.gelu(x), "mul": lambda: x * 2,
        "sum": lambda: x.sum(), "thread": thread_gelu, "no_dispatch": no_dispatch,
        "fft": lambda: torch.fft.rfft(x), "linalg": lambda: torch.linalg.norm(x),
        "matmul": lambda: x @ x.t(), "prims": lambda: torch.ops.prims.erf.default(x),
        "mkldnn": lambda: torch.ops.mkldnn._linear_pointwise(x, torch.empty(3, 32), None,
                                                              "none", [], ""),
        "sparse": lambda: x.to_sparse(),
        "quantized": lambda: torch.quantize_per_tensor(x, 0.1, 0, torch.qint8),
        "redispatch": lambda: torch.ops.aten.gelu.default.redispatch(
            torch._C.DispatchKeySet("CPU"), x),
        "getter": lambda: torch._C._dispatch_get_computed_kernel_for_dispatch_key(
            "aten::gelu", "CPU").call_boxed(torch._C.DispatchKeySet("CPU"), x),
        "gc": lambda: gc.get_objects(),
    }
    for name, fn in blocked.items():
        try:
            fn()
        except Exception as exc:
            assert "custom kernels only" in str(exc), (name, exc)
        else:
            raise SystemExit(f"{name} was not refused")
    # what a custom-kernel candidate needs still works
    y = torch.empty_like(x); y.copy_(x); z = x.contiguous().clone().reshape(-1)[:5]
    torch.nn.Linear(8, 8); torch.cat([x, x]); torch.zeros(3).fill_(1.5)
    assert z.tolist() == x.reshape(-1)[:5].tolist()
    print("LOCKED")
''')


def test_lockdown_refuses_framework_compute_by_every_route_and_keeps_allocation():
    proc = subprocess.run([sys.executable, "-W", "ignore", "-c", SCRIPT], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and "LOCKED" in proc.stdout, proc.stdout + proc.stderr


def test_lockdown_refuses_a_second_allow_list():
    script = ("import torch\nfrom kernelwright.tools.evaluate import lockdown\n"
              "lockdown.lock({'copy_'})\n"
              "try:\n    lockdown.lock({'copy_', 'mul'})\nexcept RuntimeError as e:\n"
              "    print('REFUSED', e)\n")
    proc = subprocess.run([sys.executable, "-W", "ignore", "-c", script], capture_output=True,
                          text=True, timeout=300)
    assert "REFUSED" in proc.stdout and "another allow-list" in proc.stdout, proc.stderr
