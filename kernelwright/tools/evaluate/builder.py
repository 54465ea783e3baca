"""The trusted builder: adds kernel sources a candidate built to the shared build cache.

A candidate's runner builds into its private cache view (its binaries are never shared: it
could have altered them). Afterwards it reports the *sources* it built; this builder, a
separate sandboxed process that runs no candidate code and whose only writable directory is
the build cache, compiles them again with the backends' own ``build``, so every shared entry
was produced by a compiler from its source. The orchestrator then records the new entries'
digests (:mod:`build_cache`).

Run as ``python -m kernelwright.tools.evaluate.builder`` with a JSON list of
``{"backend", "language", "source", "options"}`` on stdin; prints one JSON line of outcomes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kernelwright.config import Settings
from kernelwright.errors import WorkerError
from kernelwright.tools.backends.cache_record import cache_writes
from kernelwright.tools.backends.sycl_env import sycl_cache_name
from kernelwright.tools.evaluate import sandbox
from kernelwright.tools.evaluate.build_cache import BuildCache
from kernelwright.tools.evaluate.build_options import allowed_builds
from kernelwright.tools.file_lock import file_lock

MAX_REQUESTS = 32
CANDIDATE_S = 60.0  # the trusted builder's time for one candidate's sources


def promote(requests: list[dict[str, Any]], settings: Settings, bwrap: str | None,
            timeout_s: float) -> dict[str, Any]:
    """Build ``requests`` into ``settings.cache_dir`` in the builder sandbox and record what
    it wrote (both under :func:`cache_writes`); its report."""
    dicts = [r for r in requests if isinstance(r, dict)]
    prep = [r for r in dicts if "prepare" in r][:1]
    requests = prep + allowed_builds([r for r in dicts if "prepare" not in r])[:MAX_REQUESTS]
    if not requests:
        return {"built": 0}
    with tempfile.TemporaryDirectory(prefix="kw-builder-") as tmp:
        scratch = Path(tmp)
        (scratch / "tmp").mkdir()
        env = sandbox.runner_env(settings, scratch, bwrap is not None)
        cache = str(Path(settings.cache_dir).resolve())
        env.update({"KERNELWRIGHT_CACHE_DIR": cache,
                    "SYCL_CACHE_DIR": f"{cache}/{sycl_cache_name()}"})
        inner = sandbox.python_module("kernelwright.tools.evaluate.builder")
        cmd = (sandbox.bwrap_command(bwrap, settings, scratch, env, inner, cache_writable=True)
               if bwrap else inner)
        t0 = time.monotonic()
        with cache_writes(settings):
            try:
                proc = subprocess.run(cmd, input=json.dumps(requests), capture_output=True,
                                      text=True, timeout=timeout_s, env=env, cwd=scratch,
                                      start_new_session=True, check=False)
            except subprocess.TimeoutExpired:
                proc = None
            BuildCache.of(settings).adopt()  # before any sealer may see them unrecorded
        if proc is None:
            return {"built": 0, "error": f"the builder timed out after {timeout_s:g} s"}
        lines = proc.stdout.strip().splitlines()
        try:
            report = json.loads(lines[-1]) if lines else {}
        except ValueError:
            report = {}
        report["seconds"] = time.monotonic() - t0
        if proc.returncode != 0:
            report["error"] = proc.stderr[-500:]
        return report


def prepare(settings: Settings, bwrap: str | None, timeout_s: float) -> dict[str, Any]:
    """Build what the backends build once per machine (the SYCL shim) into the shared cache,
    so no candidate runner has to.

    The entry is looked up by its full key (shim source, runtime version, venv) and checked
    against the integrity record; a missing, stale, foreign or altered entry is removed and
    rebuilt here by the trusted builder.

    Raises:
        WorkerError: the shim could not be built: an environment problem, named with its fix
            (never blamed on a candidate).
    """
    from kernelwright.tools.backends.sycl import shim_file

    target = shim_file(settings)
    cache = BuildCache.of(settings)
    rel = str(target.relative_to(Path(settings.cache_dir)))
    # one preparer at a time per cache: a second process (another Ray worker's pool) waits,
    # then finds the entry recorded, instead of removing the library the first just built
    with file_lock(cache.index_path.with_suffix(".prepare.lock")):
        if target.is_file() and BuildCache.of(settings).check(rel):
            return {"built": 0}
        target.unlink(missing_ok=True)
        report = promote([{"prepare": ["sycl"]}], settings, bwrap, timeout_s)
        if not target.is_file():
            detail = str(report.get("error") or report.get("detail") or "no library was written")
            raise WorkerError(
                "environment error: the trusted builder could not build the SYCL shim "
                f"({target}): {' '.join(detail.split())[-400:]}. Fix: run `kernelwright "
                "doctor` and follow its advice for the sycl backend (g++ and the SYCL runtime "
                "headers are needed once).")
        cache.adopt([rel])
    return report


def main() -> int:
    from kernelwright.tools.backends import active_registry

    requests = json.loads(sys.stdin.read())
    built, failed, detail = 0, 0, ""
    if requests and requests[0].get("prepare"):  # open each runtime once (builds the shims)
        for name in requests[0]["prepare"]:
            try:
                status = active_registry().get(str(name)).status()
                built += int(status.usable)
                if not status.usable:
                    detail = f"{status.detail} {status.fix or ''}"
            except Exception as exc:
                failed += 1
                detail = f"{type(exc).__name__}: {exc}"
        requests = requests[1:]
    for request in allowed_builds(requests)[:MAX_REQUESTS]:  # again, in the builder itself
        try:
            backend = active_registry().get(str(request["backend"]))
            result = backend.build(str(request["source"]), language=request.get("language"),
                                   options=[str(o) for o in request.get("options", [])])
            built += int(result.ok)
            failed += int(not result.ok)
        except Exception:  # a source that no longer builds: nothing to share
            failed += 1
    print(json.dumps({"built": built, "failed": failed, "detail": detail[-1000:]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
