"""The worker sandbox: scrubbed environment, no network, CPU and memory limits, the pipe."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from kw_eval_helpers import candidate, task

from kernelwright.tools.evaluate import _protocol
from kernelwright.tools.evaluate.sandbox import network_prefix, scrub_env, worker_env


def test_scrub_env_drops_credentials_and_keeps_the_rest():
    env = {"OPENAI_API_KEY": "x", "GH_TOKEN": "x", "AWS_SECRET": "x", "DB_PASSWORD": "x",
           "PATH": "/bin", "KEYBOARD": "us", "TOKENIZERS_PARALLELISM": "false"}
    assert scrub_env(env) == {"PATH": "/bin", "KEYBOARD": "us", "TOKENIZERS_PARALLELISM": "false"}


def test_worker_env_points_the_sycl_runtime_at_its_icd(settings):
    env = worker_env(settings, {"HOME": "/root", "MY_API_KEY": "s"})
    assert "MY_API_KEY" not in env and env["HOME"] == "/root"
    assert env.get("OCL_ICD_FILENAMES", "").endswith("libintelocl.so")


def test_candidate_sees_no_secrets_and_no_network(pool, monkeypatch):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    monkeypatch.setenv("KERNELWRIGHT_TEST_API_KEY", "do-not-leak")
    monkeypatch.setenv("KW_TEST_PORT", str(listener.getsockname()[1]))
    try:
        # A new task key forces a fresh worker that inherits the patched environment.
        r = pool.evaluate(task("gelu_loose"), candidate("candidates/env_probe"),
                          settings=pool.settings.model_copy(update={"min_time_s": 0.01}))
    finally:
        listener.close()
    if network_prefix():
        assert r.correct, r.error
    else:  # the OS does not allow a private network namespace: only the env part holds
        assert "credentials" not in (r.error or "")


def test_cpu_time_limit_kills_a_busy_process():
    code = ("from kernelwright.tools.evaluate.sandbox import limit_cpu_for_call\n"
            "limit_cpu_for_call(1)\nwhile True: pass\n")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code], timeout=60, check=False)
    assert proc.returncode == -signal.SIGXCPU
    assert time.monotonic() - started < 30


def test_memory_limit_makes_big_allocations_fail():
    code = ("from kernelwright.tools.evaluate.sandbox import limit_memory\n"
            "limit_memory(512)\n"
            "try:\n    bytearray(1 << 30)\nexcept MemoryError:\n    raise SystemExit(7)\n")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 7


def test_protocol_round_trip_and_deadline():
    r, w = os.pipe()
    try:
        _protocol.send(w, {"phase": "build", "data": "x" * 10_000})
        assert _protocol.receive(r, time.monotonic() + 5)["data"] == "x" * 10_000
        with pytest.raises(_protocol.ChannelTimeout):
            _protocol.receive(r, time.monotonic() + 0.05)
        os.close(w)
        with pytest.raises(_protocol.ChannelClosed):
            _protocol.receive(r, time.monotonic() + 5)
    finally:
        os.close(r)
