"""In-process units: poisoning, operator recording, the precision rule, timing statistics."""

from __future__ import annotations

import math
import os

import pytest
import torch

from kernelwright.tools.evaluate.precision import downgrade_message
from kernelwright.tools.evaluate.timing import summarise


def test_precision_rule_flags_bf16_but_not_fp32_reordering():
    torch.manual_seed(0)
    a, b = torch.randn(64, 256), torch.randn(256, 64)
    ref64 = [a.double() @ b.double()]
    ref32 = [a @ b]
    reordered = [(a[:, :128] @ b[:128]) + (a[:, 128:] @ b[128:])]  # honest fp32, other order
    bf16 = [(a.bfloat16() @ b.bfloat16()).float()]
    assert downgrade_message(reordered, ref32, ref64) is None
    assert "lower precision" in downgrade_message(bf16, ref32, ref64)


def test_speedup_bounds_come_from_quartiles():
    t = summarise([2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0])
    assert t.speedup == 2.0 and t.speedup_low == 2.0 and t.speedup_high == 2.0
    t = summarise([1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 1.0, 1.0, 1.0, 1.0])
    assert t.speedup == 3.0 and t.speedup_low == 2.0 and t.speedup_high == 4.0
    assert math.isclose(t.reference_iqr_s, 2.0)


def test_all_close_matches_torch_allclose():
    from kernelwright.tools.evaluate._compare import all_close

    nan, inf = float("nan"), float("inf")
    r = torch.tensor([1.0, nan, inf, -inf, 0.0])
    cases = [r.clone(), torch.tensor([1.0 + 2e-4, nan, inf, -inf, 0.0]),
             torch.tensor([1.0, 0.0, inf, -inf, 0.0]), torch.tensor([1.0, nan, -inf, -inf, 0.0]),
             torch.tensor([1.00005, nan, inf, -inf, 5e-5])]
    for c in cases:
        assert all_close(c, r, 1e-4, 1e-4) == torch.allclose(c, r, 1e-4, 1e-4, equal_nan=True)
    big = torch.randn(3, 40_000)  # several chunks; the offending element in the last one
    for value, same in ((float("nan"), True), (float("inf"), True), (5.0, False)):
        c, r = big.clone(), big.clone()
        r[-1, -1], c[-1, -1] = value, value if same else 0.0
        assert all_close(c, r, 1e-4, 1e-4) == torch.allclose(c, r, 1e-4, 1e-4, equal_nan=True)
        c[-1, -2] += 1.0
        assert not all_close(c, r, 1e-4, 1e-4)


def test_all_close_quick_path_agrees_with_torch_allclose_past_its_chunks():
    """The two-pass test (every difference within atol) answers only when that suffices; an
    element within rtol but not atol, a NaN or an infinity in the third chunk falls through
    to the full test, which decides as torch.allclose does."""
    from kernelwright.tools.evaluate._compare import QUICK_CHUNK, all_close, within_atol

    r = torch.randn(2 * QUICK_CHUNK + 1000) * 10
    near = r + 1e-5 * torch.randn_like(r)
    assert within_atol(near, r, 1e-4) and all_close(near, r, 1e-4, 1e-4)
    at = 2 * QUICK_CHUNK + 10
    for value_c, value_r in ((r[at] * (1 + 5e-5), r[at]), (float("nan"), float("nan")),
                             (float("inf"), float("inf")), (float("nan"), 1.0),
                             (float("-inf"), float("inf")), (r[at] + 1e-3, r[at])):
        c, ref = near.clone(), r.clone()
        c[at], ref[at] = value_c, value_r
        assert not within_atol(c, ref, 1e-4)
        assert all_close(c, ref, 1e-4, 1e-4) == torch.allclose(c, ref, 1e-4, 1e-4,
                                                                equal_nan=True)
    assert not within_atol(near.double(), r, 1e-4)  # mixed dtypes: the full test decides


def test_batch_size_keeps_the_round_trip_under_one_percent():
    from kernelwright.tools.evaluate.timing import MAX_SLOTS, MIN_BATCH, batch_size

    n = batch_size(rtt=1e-4, fast=1e-4, slow=2e-4, slot_bytes=1024)
    assert n == 100 and 1e-4 / (n * 1e-4) <= 0.01
    assert batch_size(rtt=1e-4, fast=1.0, slow=1.0, slot_bytes=1024) == 1
    assert batch_size(rtt=1e-3, fast=1e-7, slow=1e-7, slot_bytes=1024) == MAX_SLOTS
    assert batch_size(rtt=1e-4, fast=1e-6, slow=1e-6, slot_bytes=200 << 20) == 1
    # a 5 ms call: the round trip alone asks for 2, but a round's two checks would then
    # cover every call; the time cap (50 ms a batch) still holds
    assert batch_size(rtt=1e-4, fast=5e-3, slow=5e-3, slot_bytes=1024) == MIN_BATCH
    assert batch_size(rtt=1e-4, fast=5e-3, slow=2e-2, slot_bytes=1024) == 2


def test_protocol_frames_reject_unknown_types_and_honour_deadlines():
    import socket
    import time

    import pytest

    from kernelwright.tools.evaluate import protocol

    a, b = socket.socketpair()
    protocol.send(a, {"type": "done", "n": 1})
    msg = protocol.receive(b, time.monotonic() + 1)
    assert protocol.check_runner_message(msg, frozenset({"done"})) == "done"
    with pytest.raises(protocol.ProtocolViolation):
        protocol.check_runner_message({"type": "verdict", "correct": True},
                                      frozenset({"done"}))
    with pytest.raises(protocol.ProtocolViolation):
        protocol.check_runner_message({"type": "status"}, frozenset({"done"}))
    t0 = time.monotonic()
    with pytest.raises(protocol.ChannelTimeout):
        protocol.receive(b, time.monotonic() + 0.2)
    assert time.monotonic() - t0 < 1.0
    with pytest.raises(ValueError):
        protocol.send(a, {"x": float("nan")})  # never NaN on the wire


def test_arena_views_are_shared_between_two_mappings():
    from kernelwright.tools.evaluate.shm import Arena, SlotLayout

    layout = SlotLayout.of([((3, 4), "float32"), None, ((5,), "int64")])
    mine = Arena.create(layout, slots=2)
    theirs = Arena(os.dup(mine.fd), layout, 2)  # as a runner maps the descriptor it got
    theirs.views(1)[0].fill_(2.5)
    theirs.views(1)[2].copy_(torch.arange(5))
    assert float(mine.views(1)[0].sum()) == 30.0 and mine.views(1)[1] is None
    assert mine.views(1)[2].tolist() == [0, 1, 2, 3, 4] and float(mine.views(0)[0].sum()) == 0
    mine.close()
    theirs.close()


def test_build_cache_removes_and_reports_a_tampered_entry(tmp_path):
    from kernelwright.tools.evaluate.build_cache import BuildCache

    (tmp_path / "builds").mkdir()
    lib = tmp_path / "builds" / "cpp-abc.so"
    lib.write_bytes(b"honest library")
    record = tmp_path.parent / f"{tmp_path.name}-record.json"
    cache = BuildCache(tmp_path, record)
    assert cache.adopt() == 1 and cache.verify() == []
    lib.write_bytes(b"evil library!!")
    assert BuildCache(tmp_path, record).verify() == ["builds/cpp-abc.so"]
    assert not lib.exists()


def test_the_integrity_record_is_never_inside_the_cache(tmp_path):
    from kernelwright.config import Settings
    from kernelwright.tools.evaluate.build_cache import BuildCache, record_path

    with pytest.raises(ValueError, match="must not live inside the cache"):
        BuildCache(tmp_path, tmp_path / "digests.json")
    s = Settings(cache_dir=tmp_path / "cache", data_dir=tmp_path / "data")
    assert BuildCache.of(s).index_path == record_path(s.cache_dir, s.data_dir)
    assert BuildCache.of(s).index_path.is_relative_to(s.data_dir)


def test_data_files_rewritten_by_trusted_commands_are_not_tampering(tmp_path, caplog):
    """A second checkout rewrites machine_peaks.json: no warning, nothing removed."""
    from kernelwright.tools.evaluate.build_cache import BuildCache

    (tmp_path / "c" / "builds").mkdir(parents=True)
    peaks = tmp_path / "c" / "machine_peaks.json"
    peaks.write_text('{"bandwidth_gbps": 10}')
    (tmp_path / "c" / "builds" / "k.so").write_bytes(b"lib")
    cache = BuildCache(tmp_path / "c", tmp_path / "record.json")
    assert cache.adopt() == 1  # the library only
    peaks.write_text('{"bandwidth_gbps": 12}')
    with caplog.at_level("WARNING"):
        assert BuildCache(tmp_path / "c", tmp_path / "record.json").verify() == []
    assert peaks.exists() and "does not match" not in caplog.text


def test_trusted_loaders_refuse_unrecorded_or_altered_binaries(tmp_path, monkeypatch):
    from kernelwright.config import Settings
    from kernelwright.tools.backends.cache_record import SANDBOXED_ENV, record_file, trusted_file

    monkeypatch.delenv(SANDBOXED_ENV, raising=False)
    s = Settings(cache_dir=tmp_path / "cache", data_dir=tmp_path / "data")
    lib = s.cache_dir / "sycl-shim" / "key" / "libkwsycl.so"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(b"planted")
    assert not trusted_file(lib, s)  # not recorded: never loaded
    record_file(lib, s)
    assert trusted_file(lib, s)
    lib.write_bytes(b"altered")
    assert not trusted_file(lib, s) and not lib.exists()


@pytest.mark.parametrize(("backend", "options", "ok"), [
    ("cpp", ["-O3", "-march=native", "-fopenmp", "-DTILE=16"], True),
    ("cuda", ["--use_fast_math", "--maxrregcount=64"], True),
    ("sycl", ["-cl-fast-relaxed-math"], True),
    ("cpp", ["-wrapper", "/bin/sh,-c,id"], False),
    ("cpp", ["-fplugin=/tmp/evil.so"], False),
    ("cpp", ["-specs=/tmp/x"], False),
    ("cpp", ["@/tmp/options"], False),
    ("cpp", ["-DX=$(id)"], False),
    ("cpp", ["-O3 -wrapper /bin/sh"], False),
    ("cuda", ["-ccbin", "/tmp/sh"], False),
    ("cuda", ["--compiler-bindir=/tmp"], False),
    ("nope", ["-O3"], False),
])
def test_build_options_pass_a_fixed_allow_list(backend, options, ok):
    from kernelwright.tools.evaluate.build_options import check_builds

    problem = check_builds([{"backend": backend, "source": "", "options": options}])
    assert (problem is None) == ok, problem
    if not ok:
        assert "is not allowed" in problem and "Fix:" in problem


def test_protocol_reads_work_on_descriptors_past_1024():
    """A long-lived process (a campaign, a test session) may hold more than 1024 descriptors;
    the deadline wait must not depend on select()'s FD_SETSIZE."""
    import resource
    import socket
    import time

    import pytest

    from kernelwright.tools.evaluate import protocol

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1100:
        pytest.skip(f"the hard descriptor limit ({hard}) is below 1100")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1100), hard))
    try:
        filler = [os.dup(0) for _ in range(1030)]
        try:
            a, b = socket.socketpair()
            assert b.fileno() > 1024
            protocol.send(a, {"type": "done"})
            assert protocol.receive(b, time.monotonic() + 1)["type"] == "done"
            with pytest.raises(protocol.ChannelTimeout):
                protocol.receive(b, time.monotonic() + 0.1)
            a.close()
            b.close()
        finally:
            for fd in filler:
                os.close(fd)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_float64_arbitrates_a_mismatch_where_the_float32_reference_is_itself_off():
    """Ill-conditioned elements (the float32 reference 6e-5 off, the kernel 6e-5 off the other
    way: 1.2e-4 apart, past atol 1e-4) pass; a kernel far from float64 where the reference is
    not, or a NaN the reference does not have, does not."""
    import torch

    from kernelwright.spec import Contract, ShapeVariant, TensorSpec
    from kernelwright.spec.contract import Tolerance
    from kernelwright.tools.evaluate import _compare as cmp

    spec = TensorSpec(shape=(1000,), dtype="float32")
    contract = Contract(task_name="t", task_hash="h", tolerances={
        "float32": Tolerance(atol=1e-4, rtol=1e-4)}, variants=[ShapeVariant(
            name="nominal", kind="nominal", inputs=[spec], outputs=[spec])])
    truth = torch.randn(1000, dtype=torch.float64)
    truth[7] = 2e-3  # a group-norm output near zero: the rtol share of the bound is tiny
    ref = truth.float()
    ref[7] += 6e-5
    kernel = truth.float()
    kernel[7] -= 6e-5
    assert not cmp.all_close(kernel, ref, 1e-4, 1e-4)
    assert cmp.as_close_as_reference([kernel], [ref], [truth], contract)
    wrong = kernel.clone()
    wrong[100] += 1e-2
    assert not cmp.as_close_as_reference([wrong], [ref], [truth], contract)
    nan = kernel.clone()
    nan[3] = float("nan")
    assert not cmp.as_close_as_reference([nan], [ref], [truth], contract)
    ref[3] = kernel[3] = float("nan")
    assert cmp.as_close_as_reference([kernel], [ref], [truth], contract)


def test_normwise_error_catches_zeros_that_pass_a_loose_atol():
    import torch

    from kernelwright.tools.evaluate import _compare as cmp

    ref = torch.randn(1000) * 1e-3
    assert cmp.all_close(torch.zeros_like(ref), ref, 1e-2, 1e-2)  # elementwise: passes
    assert cmp.normwise_error(torch.zeros_like(ref), ref) == pytest.approx(1.0)
    assert cmp.normwise_error(ref * (1 + 1e-6), ref) < 1e-5
    assert cmp.normwise_error(torch.zeros(3), torch.zeros(3)) == 0.0


def test_timed_inputs_change_unpredictably_each_round():
    """No common scale between rounds (a linear kernel could undo one) and values stay near
    the drawn ones, signs kept."""
    import random

    import torch

    from kernelwright.tools.evaluate import freshness

    base = torch.randn(2, 4096)
    ref = [[base[0].clone()], [base[1].clone()]]
    cand = [[torch.empty(4096)], [torch.empty(4096)]]
    pristine = [[base[0]], [base[1]]]
    rng = random.Random(1)
    freshness.refresh(ref, cand, pristine, rng)
    first = ref[0][0].clone()
    assert torch.equal(cand[0][0], ref[0][0])
    freshness.refresh(ref, cand, pristine, rng)
    ratio = ref[0][0] / first
    assert float(ratio.std()) > 1e-3  # per-element factors: not one scale
    rel = (ref[0][0] / base[0] - 1).abs()
    assert float(rel.max()) <= freshness.SPAN * 1.001 and bool((ref[0][0] * base[0] >= 0).all())


def test_fresh_factors_are_independent_per_element_and_fill_the_span():
    """A byte per element: every level used, no pattern between neighbours, odd sizes kept."""
    import torch

    from kernelwright.tools.evaluate import freshness

    gen = torch.Generator().manual_seed(7)
    f = freshness.factors(torch.Size([3, 21845]), gen)  # 65535 elements: not a multiple of 8
    assert f.shape == (3, 21845) and f.dtype == torch.float32
    assert float(f.min()) >= 1 - freshness.SPAN and float(f.max()) <= 1 + freshness.SPAN
    assert f.unique().numel() == freshness.LEVELS
    flat = f.reshape(-1) - 1
    for lag in (1, 8):  # neighbours, and the same byte of the next 64-bit word
        corr = torch.corrcoef(torch.stack([flat[:-lag], flat[lag:]]))[0, 1]
        assert abs(float(corr)) < 0.02
    again = freshness.factors(torch.Size([3, 21845]), gen)
    assert not torch.equal(f, again)


def test_the_compiled_refresh_draws_the_same_levels_independently_per_element():
    """float64 slots take the one-pass numba kernel: every factor is one of the LEVELS values
    (so base * factor / base recovers it), every level is used, neighbours and rounds are
    unrelated; a half-precision and a strided slot take the torch passes, same span."""
    import random

    import torch

    from kernelwright.tools.evaluate import freshness

    base = torch.rand(65535, dtype=torch.float64) + 0.5  # odd size, no zeros
    ref, cand = torch.empty_like(base), torch.empty_like(base)
    rng = random.Random(5)
    freshness.refresh([[ref]], [[cand]], [[base]], rng)
    assert torch.equal(ref, cand)
    levels = ((ref / base - (1 - freshness.SPAN)) / (2 * freshness.SPAN / (freshness.LEVELS - 1)))
    assert float((levels - levels.round()).abs().max()) < 1e-6
    assert levels.round().unique().numel() == freshness.LEVELS
    flat = levels - levels.mean()
    for lag in (1, 4, 256):
        corr = torch.corrcoef(torch.stack([flat[:-lag], flat[lag:]]))[0, 1]
        assert abs(float(corr)) < 0.02
    first = ref.clone()
    freshness.refresh([[ref]], [[cand]], [[base]], rng)
    corr = torch.corrcoef(torch.stack([first / base, ref / base]))[0, 1]
    assert abs(float(corr)) < 0.02  # a new seed: nothing carried over between rounds

    for other in (base.to(torch.float16), base.reshape(-1, 5)[:, :3]):
        ref, cand = torch.empty_like(other), torch.empty_like(other)
        freshness.refresh([[ref]], [[cand]], [[other]], rng)
        assert torch.equal(ref, cand)
        rel = (ref.double() / other.double() - 1).abs()
        assert float(rel.max()) <= freshness.SPAN + 2.0**-10 and float(rel.std()) > 1e-3  # fp16


def test_a_timing_below_the_physical_floor_is_capped(tmp_path):
    import json

    import torch

    from kernelwright.spec.result import Timing
    from kernelwright.tools.evaluate import freshness

    (tmp_path / "machine_peaks.json").write_text(json.dumps({"bandwidth_gbps": 10.0}))
    views = [torch.empty(1 << 20)]  # 4 MiB in, nothing out: floor 4 MiB / 160 GB/s = 26 us
    floor = freshness.floor_seconds(views, [], tmp_path)
    assert floor == pytest.approx((4 << 20) / (16 * 10e9))
    fake = Timing(reference_median_s=1e-3, reference_iqr_s=0, candidate_median_s=1e-9,
                  candidate_iqr_s=0, repeats=5, speedup=1e6, speedup_low=1e6, speedup_high=1e6)
    capped = freshness.capped(fake, floor)
    assert capped.candidate_median_s == floor and capped.speedup == pytest.approx(1e-3 / floor)
    honest = fake.model_copy(update={"candidate_median_s": 5e-4, "speedup": 2.0})
    assert freshness.capped(honest, floor) is None


def test_a_huge_log_is_read_from_its_tail_only():
    import socket
    import tempfile
    import time

    from kernelwright.tools.evaluate.orchestrator import LOG_TAIL_CHARS, Channel

    log = tempfile.TemporaryFile()
    a, b = socket.socketpair()
    channel = Channel(a, 0, log)
    log.write(b"x" * (200 << 20) + b"\nthe last line")
    t0 = time.monotonic()
    tail = channel.log_tail()
    assert tail.endswith("the last line") and len(tail) <= LOG_TAIL_CHARS
    assert time.monotonic() - t0 < 0.5
    a.close(), b.close(), log.close()


def test_the_tree_watchdog_counts_forked_children_together():
    """Three children of 120 MB each stay under a 200 MB per-process limit but not together."""
    import subprocess
    import sys
    import time

    from kernelwright.tools.evaluate.watchdog import TreeWatchdog

    code = "b = bytearray(120 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nimport time\n" \
           "time.sleep(60)"
    kids = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(3)]
    try:
        dog = TreeWatchdog(lambda: [k.pid for k in kids if k.poll() is None], 200).start()
        deadline = time.monotonic() + 30
        while dog.tripped is None and time.monotonic() < deadline:
            time.sleep(0.05)
        dog.stop()
        assert dog.tripped and "together exceeded the memory limit" in dog.tripped
        assert all(k.wait(timeout=10) == -9 for k in kids)
        alone = TreeWatchdog(lambda: [os.getpid()], 100_000)
        assert alone.check() is None
    finally:
        for k in kids:
            k.kill()


def test_the_runner_starts_through_the_environment_the_sandbox_binds(tmp_path, monkeypatch):
    """A checkout whose ``.venv`` is a symlink to another directory: the sandbox binds the
    resolved environment only, so the runner's interpreter must be named there (it was named
    at the symlink: "bwrap: execvp .../.venv/bin/python: No such file or directory")."""
    import sys

    from kernelwright.tools.evaluate import sandbox

    real = tmp_path / "envs" / "kw"
    (real / "bin").mkdir(parents=True)
    (real / "bin" / "python").touch()
    link = tmp_path / "checkout" / ".venv"
    link.parent.mkdir()
    link.symlink_to(real)
    monkeypatch.setattr(sys, "prefix", str(link))
    monkeypatch.setattr(sys, "executable", str(link / "bin" / "python"))
    named = sandbox.python_module("kernelwright.tools.evaluate.candidate_runner")[0]
    assert named == str(real.resolve() / "bin" / "python")
    assert any(real.resolve().is_relative_to(p) for p in sandbox.python_paths())
    monkeypatch.setattr(sys, "executable", "/usr/bin/python3")  # outside the environment
    assert sandbox.python_module("m", numeric=False)[0] == "/usr/bin/python3"


def test_a_relative_pythonpath_names_the_checkout_not_the_runner_scratch(tmp_path,
                                                                         monkeypatch):
    from kernelwright.config import Settings
    from kernelwright.tools.evaluate import sandbox

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([".", "", "/opt/x"]))
    env = sandbox.runner_env(Settings(), tmp_path / "scratch", True)
    assert env["PYTHONPATH"].split(os.pathsep) == [str(tmp_path.resolve()), "/opt/x"]
