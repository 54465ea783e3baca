"""The trusted builder as a Ray task: shared-cache builds run on any node with a free CPU.

A device worker's pool hands the sources its candidates built to :func:`promote_on_cluster`
instead of compiling them on its own node: a Ray task (one CPU, scheduled wherever the
cluster has one free; with none free, the worker builds on its own node as before) runs the
same sandboxed trusted builder into that node's build cache, records what it added, and
returns those artefacts by relative path through Ray's object store. The worker writes each
into its own node's cache (atomically; an identical file already there, as on the same node,
is left alone) and records its digest. Neither side runs candidate code: the task's builder
is the compiler in its sandbox, and the bytes it returns are what that compiler wrote.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from kernelwright.config import Settings

BUILD_TASK_CPUS = 1
SKIPPED = ("sycl-shim",)  # each node prepares its own shim (built once, by its own builder)


def build_here(requests: list[dict[str, Any]], settings_json: str,
               timeout_s: float) -> dict[str, Any]:
    """Run the trusted builder into this node's build cache; its report, plus ``files`` (the
    recorded cache entries it added: relative path -> bytes), ``host`` and ``pid``."""
    from kernelwright.tools.evaluate import builder, sandbox
    from kernelwright.tools.evaluate.build_cache import BuildCache

    settings = Settings.model_validate_json(settings_json)
    before = set(map(str, BuildCache.of(settings).entries()))
    probe = sandbox.probe_bwrap()
    report = builder.promote(requests, settings, probe.path if probe.available else None,
                             timeout_s)
    cache = BuildCache.of(settings)  # as ``promote`` left it: what the builder wrote, recorded
    added = [rel for rel in map(str, cache.entries()) if rel not in before
             and not rel.startswith(SKIPPED)]
    files = {}
    for rel in added:
        if cache.check(rel):  # what this builder wrote, unaltered since
            files[rel] = (cache.root / rel).read_bytes()
    return {**report, "files": files, "host": socket.gethostname(), "pid": os.getpid()}


def promote_on_cluster(requests: list[dict[str, Any]], settings: Settings, bwrap: str | None,
                       timeout_s: float) -> dict[str, Any]:
    """:func:`kernelwright.tools.evaluate.builder.promote`'s contract, run as a Ray task:
    the artefacts land in ``settings.cache_dir`` here and are recorded."""
    import ray

    from kernelwright.tools.evaluate import builder
    from kernelwright.tools.evaluate.build_cache import BuildCache

    def here(why: str) -> dict[str, Any]:
        return {**builder.promote(requests, settings, bwrap, timeout_s), "where": f"here: {why}"}

    if ray.available_resources().get("CPU", 0.0) < BUILD_TASK_CPUS:
        # every CPU is claimed (device actors hold one each): a task would wait for one that
        # may never come, so this worker builds on its own node, as without a cluster
        return here("the cluster has no free CPU for a build task")
    task = ray.remote(num_cpus=BUILD_TASK_CPUS, max_retries=1)(build_here)
    ref = task.remote(requests, settings.model_dump_json(), timeout_s)
    try:  # Ray's view of free CPUs lags: a task that finds none in time is given up
        report = ray.get(ref, timeout=timeout_s + 60)
    except Exception as exc:  # noqa: BLE001 - a lost node or a timeout: build here instead
        ray.cancel(ref, force=True)
        return here(f"the build task failed ({type(exc).__name__}: {exc})")
    files: dict[str, bytes] = report.pop("files", {})
    root = Path(settings.cache_dir)
    for rel, data in files.items():
        _place(root, rel, data)
    BuildCache.of(settings).adopt(list(files))
    report["placed"] = sorted(files)
    return report


def _place(root: Path, rel: str, data: bytes) -> None:
    """Write ``data`` at ``root/rel`` atomically, unless the same bytes are there."""
    target = (root / rel).resolve()
    if not target.is_relative_to(root.resolve()):
        raise ValueError(f"a build artefact's path {rel!r} leaves the build cache")
    try:
        if target.read_bytes() == data:
            return
    except OSError:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".tmp-{os.getpid()}-{target.name}")
    tmp.write_bytes(data)
    os.replace(tmp, target)
