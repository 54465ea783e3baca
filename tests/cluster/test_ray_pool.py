"""Evaluation workers on Ray: one actor per declared device; a worker killed or hung
mid-evaluation loses nothing and counts nothing twice."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from kernelwright.spec import Candidate, Task
from kernelwright.testing.harness_check import quick_settings, task_path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = (ROOT / "examples" / "candidates" / "l1_gelu_naive_sycl.py").read_text()

pytestmark = [pytest.mark.requires_sycl, pytest.mark.slow]


@pytest.fixture(scope="module")
def two_devices(ray_head):
    import ray

    names = [k for k in ray.cluster_resources() if k.startswith("kw_device_")]
    assert len(names) == 2, names
    return names


def _pool(tmp_path, **overrides):
    from kernelwright.tools.cluster.pool import RayPool

    settings = quick_settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache",
                              cluster="auto", **overrides)
    return RayPool(settings)


def _pid_in_flight(pool, timeout_s: float = 300.0) -> int:
    import ray

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        actors = list(pool.in_flight.values())
        if actors:
            return ray.get(actors[0].where.remote(), timeout=30)["pid"]
        time.sleep(0.05)
    raise AssertionError("no evaluation started")


def _where(actor, timeout_s: float = 300.0) -> dict:
    """The actor's ``where``, waiting while Ray restarts it (a killed actor answers
    ``ActorUnavailableError`` until its new process is up)."""
    import ray
    from ray.exceptions import ActorUnavailableError

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return ray.get(actor.where.remote(), timeout=timeout_s)
        except ActorUnavailableError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _evaluate_in_thread(pool, task, candidate):
    out: dict = {}
    thread = threading.Thread(target=lambda: out.update(r=pool.evaluate(task, candidate)))
    thread.start()
    return thread, out


def _interrupt(pool, task, candidate, sig, settle_s: float = 3.0):
    """Evaluate in a thread; send ``sig`` to the worker mid-evaluation. Returns the result
    and the worker's pid."""
    import ray

    # Warm both workers (their sessions and the SYCL shim) so the signal lands mid-evaluation.
    ray.get([a.where.remote() for a in pool.actors], timeout=300)
    thread, out = _evaluate_in_thread(pool, task, candidate)
    pid = _pid_in_flight(pool)
    time.sleep(settle_s)
    os.kill(pid, sig)
    thread.join(timeout=900)
    assert not thread.is_alive(), "the evaluation never returned"
    return out["r"], pid


def test_worker_killed_mid_evaluation_requeued_once(two_devices, tmp_path):
    task, cand = Task.from_path(task_path("l1_gelu")), Candidate(source=SOURCE, backend="sycl")
    with _pool(tmp_path) as pool:
        assert len(pool.actors) == 2
        result, pid = _interrupt(pool, task, cand, signal.SIGKILL)
        assert result.correct, result.error
        assert pool.requeued == 1 and pool.killed == 0
        done = [_where(a) for a in pool.actors]
        assert pid not in [d["pid"] for d in done]  # the killed worker was restarted
        assert sum(d["done"] for d in done) == 1  # one finished evaluation, not two


def test_hung_worker_killed_at_the_deadline(two_devices, tmp_path):
    task, cand = Task.from_path(task_path("l1_gelu")), Candidate(source=SOURCE, backend="sycl")
    with _pool(tmp_path, cluster_deadline_s=60.0) as pool:
        # Warm both workers' sessions first: the deadline is for a warm evaluation.
        warm = [_evaluate_in_thread(pool, task, cand) for _ in pool.actors]
        for thread, out in warm:
            thread.join(timeout=900)
            assert out["r"].correct, out["r"].error
        t0 = time.monotonic()
        result, pid = _interrupt(pool, task, cand, signal.SIGSTOP, settle_s=1.0)
        assert result.correct, result.error
        assert pool.killed == 1 and pool.requeued == 1
        assert time.monotonic() - t0 >= 60.0
        with pytest.raises(ProcessLookupError):
            for _ in range(100):  # the stopped process is gone after the kill
                os.kill(pid, 0)
                time.sleep(0.1)


CPP_SOURCE = 'extern "C" void triple(float* x, int n) { for (int i = 0; i < n; ++i) x[i] *= 3; }\n'


def test_shared_cache_builds_run_as_ray_tasks(ray_head, tmp_path):
    """The trusted builder's work runs as a Ray task; its artefact comes back through the
    object store into the asking worker's cache, recorded."""
    from kernelwright.tools.cluster.builds import promote_on_cluster
    from kernelwright.tools.evaluate.build_cache import BuildCache

    settings = quick_settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")
    request = {"backend": "cpp", "language": "cpp", "source": CPP_SOURCE, "options": []}
    _wait_for_free_cpus(1)  # actors of earlier tests are gone (Ray frees them lazily)
    report = promote_on_cluster([request], settings, None, 120.0)
    assert report.get("where") is None, report
    assert report["pid"] != os.getpid() and not report.get("error"), report
    placed = [rel for rel in report["placed"] if rel.endswith(".so")]
    assert len(placed) == 1 and placed[0].startswith("builds/cpp-"), report["placed"]
    assert BuildCache.of(settings).check(placed[0])  # recorded by the asking side
    from kernelwright.tools.backends.cpp import CppBackend

    again = CppBackend(settings).build(CPP_SOURCE)
    assert again.ok and again.cached  # the next trusted build is served from the cache


def test_a_build_artefact_is_placed_once_and_never_outside_the_cache(tmp_path):
    from kernelwright.tools.cluster.builds import _place

    _place(tmp_path, "builds/a.so", b"one")
    mtime = (tmp_path / "builds" / "a.so").stat().st_mtime_ns
    _place(tmp_path, "builds/a.so", b"one")  # the same bytes already there: untouched
    assert (tmp_path / "builds" / "a.so").stat().st_mtime_ns == mtime
    _place(tmp_path, "builds/a.so", b"two")
    assert (tmp_path / "builds" / "a.so").read_bytes() == b"two"
    with pytest.raises(ValueError, match="leaves the build cache"):
        _place(tmp_path / "builds", "../../escape.so", b"x")


def test_with_every_cpu_claimed_the_worker_builds_on_its_own_node(ray_head, tmp_path):
    import ray

    from kernelwright.tools.cluster.builds import promote_on_cluster

    class Idle:  # defined here, so Ray ships it by value (the test module is not importable)
        def ready(self) -> bool:
            return True

    _wait_for_free_cpus(2)
    hog = ray.remote(num_cpus=2)(Idle).remote()  # holds the head's two CPUs
    try:
        ray.get(hog.ready.remote(), timeout=60)
        _wait_for_free_cpus_below(1)  # Ray's resource view lags the actor's start
        settings = quick_settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")
        request = {"backend": "cpp", "language": "cpp", "source": CPP_SOURCE, "options": []}
        report = promote_on_cluster([request], settings, None, 120.0)
    finally:
        ray.kill(hog)
    assert "no free CPU" in report["where"] and report["built"] == 1, report
    built = [p for p in (tmp_path / "cache" / "builds").iterdir() if p.suffix == ".so"]
    assert len(built) == 1  # in this node's cache (the pool records it, as without Ray)


def _wait_for_free_cpus_below(n: float, timeout_s: float = 60.0) -> None:
    import ray

    deadline = time.monotonic() + timeout_s
    while ray.available_resources().get("CPU", 0.0) >= n:
        assert time.monotonic() < deadline, ray.available_resources()
        time.sleep(0.2)


def _wait_for_free_cpus(n: float, timeout_s: float = 60.0) -> None:
    import ray

    deadline = time.monotonic() + timeout_s
    while ray.available_resources().get("CPU", 0.0) < n:
        assert time.monotonic() < deadline, ray.available_resources()
        time.sleep(0.2)
