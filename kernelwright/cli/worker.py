"""`worker`: join this node to a Ray cluster as an evaluation worker, one per device."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from typing import Annotated

import typer

from kernelwright.cli._app import _fail, app

DEVICE = re.compile(r"^(sycl|cpu|cuda:\d+)$")


def default_devices() -> list[str]:
    """Every CUDA device here, else the SYCL CPU device."""
    try:
        import torch

        count = torch.cuda.device_count()
    except Exception:  # noqa: BLE001  (no torch CUDA: the CPU device)
        count = 0
    return [f"cuda:{i}" for i in range(count)] or ["sycl"]


def device_resources(devices: list[str], host: str) -> dict[str, int]:
    """Ray resources naming this node's devices: ``kw_device_<host>_<device>`` -> 1."""
    from kernelwright.tools.cluster.actor import DEVICE_PREFIX

    safe = re.sub(r"[^A-Za-z0-9]", "_", host)
    return {f"{DEVICE_PREFIX}{safe}_{d.replace(':', '')}": 1 for d in devices}


@app.command()
def worker(
    address: Annotated[str, typer.Option("--address", help="the Ray head, HOST:6379")],
    device: Annotated[list[str] | None, typer.Option(
        "--device", help="a device this node evaluates on: sycl, cpu or cuda:N (repeatable)",
        show_default="every CUDA device, else sycl")] = None,
    num_cpus: Annotated[int | None, typer.Option(
        "--num-cpus", help="CPUs this node gives the cluster", show_default="all")] = None,
) -> None:
    """Join the Ray cluster at ADDRESS as an evaluation node: each device becomes a Ray
    resource, and a run with --cluster starts one evaluation actor (a trusted orchestrator and
    its sandbox) per device here. Runs until stopped (Ctrl-C or `ray stop`)."""
    devices = device or default_devices()
    bad = [d for d in devices if not DEVICE.match(d)]
    if bad:
        _fail(ValueError(f"--device {bad[0]!r} is not a device: use sycl, cpu or cuda:N"))
    ray_cli = shutil.which("ray") or os.path.join(os.path.dirname(sys.executable), "ray")
    if not os.path.exists(ray_cli):
        _fail(ImportError("`kernelwright worker` needs Ray: pip install 'kernelwright[cluster]'"))
    cmd = [ray_cli, "start", "--address", address, "--block", "--disable-usage-stats",
           "--resources", json.dumps(device_resources(devices, socket.gethostname()))]
    if num_cpus is not None:
        cmd += ["--num-cpus", str(num_cpus)]
    typer.echo(f"worker: {' '.join(devices)} joining {address}")
    raise typer.Exit(subprocess.call(cmd))
