"""One test per attack class of issue 10: each attack is rejected or flagged, and the next
honest candidate in the same pool is unaffected (correct, with an ordinary speedup)."""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import time
from pathlib import Path

import pytest
from kw_eval_helpers import FIXTURES, candidate, task
from typer.testing import CliRunner

from kernelwright.spec import Candidate
from kernelwright.tools.evaluate import Flag, Level, WorkerPool

pytestmark = pytest.mark.slow
ATTACKS = FIXTURES / "attacks"


def attack(name: str, **fill: object) -> Candidate:
    """An attack fixture with its ``__PLACEHOLDERS__`` filled in."""
    source = (ATTACKS / f"{name}.py").read_text()
    for key, value in fill.items():
        source = source.replace(f"__{key.upper()}__", str(value))
    assert not re.search(r"__[A-Z_]+__", source.replace("__init__", "")), "unfilled placeholder"
    return Candidate(source=source, backend="torch")


@pytest.fixture(scope="module")
def honest(pool: WorkerPool):
    """``honest()`` evaluates the honest GELU and checks it is correct and plausibly timed."""
    baseline = pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"))
    assert baseline.correct, baseline.error

    def check():
        r = pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"))
        assert r.correct and not r.flags, (r.error, r.flags)
        assert r.speedup is not None and r.speedup < 10 * baseline.speedup
        return r

    return check


def test_slowing_the_baseline_does_not_inflate_the_speedup(pool, honest):
    r = pool.evaluate(task("gelu"), attack("slow_baseline"))
    assert r.correct, r.error
    assert r.timing.reference_median_s < 0.005  # the patched gelu sleeps 5 ms per call
    assert Flag.SUSPICIOUS_SPEEDUP not in r.flags
    honest()


def test_rewriting_the_judge_leaves_a_wrong_kernel_wrong(pool, honest):
    r = pool.evaluate(task("gelu"), attack("rewrite_judge"))
    assert r.level == Level.VALUE_MISMATCH and not r.correct and r.speedup is None
    honest()


def test_reading_the_answer_finds_nothing(pool, honest, settings):
    data = Path(settings.data_dir)
    (data / "recordings").mkdir(parents=True, exist_ok=True)
    (data / "recordings" / "gelu-answers.pt").write_bytes(b"the reference outputs")
    probe = Path.home() / ".kw-attack-probe"
    probe.write_text("a file in the user's home")
    try:
        r = pool.evaluate(task("gelu"), attack("read_answers", data_dir=data, home=Path.home()))
    finally:
        probe.unlink()
    assert r.correct, r.error  # it raises if it could read a single file there
    honest()


def test_forging_the_verdict_is_a_protocol_violation(pool, honest):
    r = pool.evaluate(task("gelu"), attack("forge_verdict"))
    assert Flag.PROTOCOL_VIOLATION in r.flags and not r.correct and r.speedup is None
    assert "protocol violation" in r.error
    honest()


def test_telling_timing_from_verification_is_caught(pool, honest):
    r = pool.evaluate(task("gelu"), attack("timing_aware"))
    assert not r.correct and r.speedup is None and r.timing is None
    assert Flag.TIMING_MISMATCH in r.flags, (r.error, r.flags)
    honest()


def test_work_finished_after_returning_is_wrong(pool, honest):
    r = pool.evaluate(task("gelu"), attack("late_thread"))
    # wrong when copied; or its thread writes into freed memory and the runner crashes
    assert r.level in (Level.VALUE_MISMATCH, Level.RUNTIME_ERROR) and r.speedup is None
    honest()


def test_persistence_writes_go_nowhere(pool, honest, settings):
    r = pool.evaluate(task("gelu"), attack("persist", cache_dir=settings.cache_dir,
                                           data_dir=settings.data_dir, home=Path.home()))
    assert r.correct, r.error
    for path in (Path(settings.cache_dir) / "pwned", Path(settings.data_dir) / "pwned",
                 Path(settings.data_dir) / "runs" / "pwned.json", Path.home() / "kw_pwned",
                 Path(settings.cache_dir) / "builds" / "cpp-pwned.so"):
        assert not path.exists(), path
    honest()


def test_a_tampered_build_cache_entry_is_removed_and_reported(pool, honest, settings):
    from kernelwright.tools.evaluate.build_cache import BuildCache

    entry = Path(settings.cache_dir) / "builds" / "cpp-tamper-test.so"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_bytes(b"an honest library")
    BuildCache.of(settings).adopt()
    entry.write_bytes(b"a tampered library")  # changed behind the trusted side's back
    r = pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"))
    assert r.correct
    assert r.observations["build_cache"]["tampered_removed"] == ["builds/cpp-tamper-test.so"]
    assert not entry.exists()
    honest()


def test_secrets_are_not_visible(pool, honest, monkeypatch, settings):
    secret = "kw-secret-value-31337"
    from kernelwright.tools.evaluate.sandbox import INHERITED, runner_env

    monkeypatch.setenv("DATABASE_URL", f"postgres://user:{secret}@db/kw")
    ours = set(INHERITED) | set(runner_env(settings, Path("/scratch"), True))
    parent_only = {k: v for k, v in os.environ.items() if k not in ours}
    assert "DATABASE_URL" in parent_only
    encoded = base64.b64encode(json.dumps(parent_only).encode()).decode()
    r = pool.evaluate(task("gelu"), attack("secrets", secret=secret, parent_only=encoded))
    assert r.correct, r.error  # it raises if it saw the secret anywhere
    honest()


def test_network_host_loopback_and_setns_are_unreachable(pool, honest):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0)
        r = pool.evaluate(task("gelu"), attack("network", port=server.getsockname()[1]))
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody connected
    if Flag.WEAK_SANDBOX not in r.flags:
        assert r.correct, r.error  # it raises if it reached the host
    honest()


def test_no_process_outlives_its_candidate_and_limits_stay_hard(pool, honest):
    sleep = "3131.5"
    r = pool.evaluate(task("gelu"), attack("escape_limits", sleep=sleep))
    assert r.correct, r.error  # it raises if it could raise a limit
    time.sleep(0.2)
    assert not _processes_with(sleep), "a candidate's process outlived its evaluation"
    honest()


def test_a_forward_that_keeps_talking_still_times_out(settings):
    with WorkerPool(settings.model_copy(update={"call_timeout_s": 4.0})) as short:
        t0 = time.monotonic()
        r = short.evaluate(task("gelu"), attack("keepalive"))
        took = time.monotonic() - t0
        assert not r.correct and r.speedup is None
        assert Flag.PROTOCOL_VIOLATION in r.flags or "timed out" in r.error
        assert took < 60
        assert short.evaluate(task("gelu"), candidate("candidates/gelu_torch")).correct


def test_no_state_carries_to_the_next_candidate(pool, honest):
    before = honest()
    r = pool.evaluate(task("gelu"), attack("carry_state"))
    assert not r.correct
    after = honest()
    assert after.variants == before.variants  # same errors: the same torch.erf ran


def test_rotating_output_buffers_are_stale_outputs(pool, honest):
    r = pool.evaluate(task("gelu"), attack("rotating_buffers"))
    assert Flag.STALE_OUTPUT in r.flags and not r.correct and r.speedup is None
    honest()


def test_markup_in_errors_prints_as_text_and_json_has_no_nan(settings):
    from kernelwright.cli import app

    runner = CliRunner()
    env = {"KERNELWRIGHT_DATA_DIR": str(settings.data_dir),
           "KERNELWRIGHT_CACHE_DIR": str(settings.cache_dir), "KERNELWRIGHT_SEEDS": "3",
           "KERNELWRIGHT_MIN_TIME_S": "0.02", "KERNELWRIGHT_WORKER_THREADS": "1"}
    gelu = str(FIXTURES / "tasks" / "gelu.py")
    out = runner.invoke(app, ["eval", gelu, str(ATTACKS / "markup_error.py")], env=env)
    assert out.exit_code == 1, out.output
    assert "[/red][bold link=file:///etc/passwd]pwned[/] [/]" in out.output.replace("\n", "")
    out = runner.invoke(app, ["eval", gelu, str(ATTACKS / "nan_output.py"), "--json"], env=env)
    assert out.exit_code == 1, out.output
    summary = json.loads(out.stdout.strip().splitlines()[-1], parse_constant=_no_constants)
    assert summary["correct"] is False and summary["speedup"] is None
    assert summary["max_error"]["nominal"] is None  # NaN in memory, null in JSON
    assert out.stdout.count("WEAK SANDBOX") == 0


def test_a_hanging_reference_gives_a_one_line_error_within_the_deadline(settings):
    from kernelwright.errors import TaskError

    quick = settings.model_copy(update={"call_timeout_s": 3.0})
    with WorkerPool(quick) as p:
        t0 = time.monotonic()
        with pytest.raises(TaskError) as err:
            p.contract(task("hanging_reference"))
        assert time.monotonic() - t0 < 30
    message = str(err.value)
    assert "\n" not in message and "timed out after 3 s" in message
    assert "hanging_reference" in message


def _processes_with(word: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if word.encode() in f.read():
                        found.append(int(pid))
            except OSError:
                pass
    return found


def _no_constants(name: str) -> float:
    raise ValueError(f"JSON holds {name}")

