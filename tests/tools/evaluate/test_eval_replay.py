"""Record-replay: recorded once per task, reused by new workers, never trusted blindly, and
verifying against it gives the same verdicts as running the reference live."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from kw_eval_helpers import FIXTURES, candidate, task

from kernelwright.spec import derive_contract
from kernelwright.tools.evaluate import Level, WorkerPool
from kernelwright.tools.evaluate._loader import import_candidate
from kernelwright.tools.evaluate.guards import ThreadGuard
from kernelwright.tools.evaluate.replay import RECHECK_SEED, Replay, checksum, entries_of
from kernelwright.tools.evaluate.verify import Verifier

SEEDS = 3


@pytest.fixture(scope="module")
def gelu():
    t = task("gelu")
    return t.load_module(), derive_contract(t)


def _obtain(gelu, root: Path) -> Replay:
    module, contract = gelu
    return Replay.obtain(module, contract, SEEDS, root)


def _verdict(gelu, rel: str, replay: Replay | None, tmp_path: Path):
    module, contract = gelu
    source = (FIXTURES / f"{rel}.py").read_text()
    cls = import_candidate(source, tmp_path, rel.replace("/", "_")).ModelNew
    v = Verifier(module, contract, SEEDS, lambda: None, ThreadGuard(), replay).run(cls)
    return v.level, v.flags, [(c.variant, c.ok, repr(c.max_abs_error), repr(c.max_rel_error))
                              for c in v.variants]  # repr: NaN errors compare equal


def test_recording_covers_every_seed_variant_fp64_and_the_recheck(gelu, tmp_path):
    rec = _obtain(gelu, tmp_path)
    _, contract = gelu
    assert rec.source == "recorded" and rec.path.is_file()
    for v in contract.variants:
        for seed in range(SEEDS):
            entry = rec.get(v.name, seed)
            assert entry is not None and list(entry.outputs[0].shape) == list(v.outputs[0].shape)
    fp64 = [e for e in rec.entries.values() if e.fp64 is not None]
    assert len(fp64) == 1 and fp64[0].fp64[0].dtype == torch.float64
    assert rec.get("nominal", RECHECK_SEED) is not None


@pytest.mark.parametrize("rel", ["candidates/gelu_torch", "candidates/wrong_values",
                                 "candidates/wrong_shape", "exploits/input_mutation",
                                 "exploits/uninitialised", "exploits/persistent_buffer",
                                 "exploits/tensor_subclass"])
def test_replayed_verdict_equals_the_live_one(gelu, tmp_path, rel):
    rec = _obtain(gelu, tmp_path)
    assert _verdict(gelu, rel, rec, tmp_path) == _verdict(gelu, rel, None, tmp_path)


def test_mutating_candidate_cannot_poison_the_recording(gelu, tmp_path):
    rec = _obtain(gelu, tmp_path)
    before = checksum(rec.entries)
    level, flags, _ = _verdict(gelu, "exploits/input_mutation", rec, tmp_path)
    assert level == Level.CORRECT and "input_mutation" in flags
    assert checksum(rec.entries) == before  # the candidate only ever saw clones
    assert _verdict(gelu, "candidates/gelu_torch", rec, tmp_path)[0] == Level.CORRECT


def test_second_obtain_loads_without_rewriting(gelu, tmp_path):
    first = _obtain(gelu, tmp_path)
    mtime = first.path.stat().st_mtime_ns
    second = _obtain(gelu, tmp_path)
    assert second.source == "loaded" and second.path == first.path
    assert second.path.stat().st_mtime_ns == mtime
    assert checksum(second.entries) == checksum(first.entries)


def _rewrite(path: Path, edit) -> None:
    data = torch.load(path, weights_only=True)
    edit(data)
    torch.save(data, path)


@pytest.mark.parametrize("tamper", ["garbage", "value", "value_and_checksum", "shape",
                                    "torch_version"])
def test_tampered_or_mismatched_recording_is_re_recorded(gelu, tmp_path, tamper, caplog):
    rec = _obtain(gelu, tmp_path)
    good = checksum(rec.entries)
    small = min(rec.entries.items(), key=lambda kv: kv[1].inputs[0].numel())[0]
    row = next(i for i, r in enumerate(torch.load(rec.path, weights_only=True)["entries"])
               if (r["variant"], r["seed"]) == small)
    if tamper == "garbage":
        rec.path.write_bytes(rec.path.read_bytes()[:1000])
    elif tamper == "value":
        _rewrite(rec.path, lambda d: d["entries"][row]["outputs"][0].add_(1.0))
    elif tamper == "value_and_checksum":  # consistent checksum: caught by the live spot check
        def edit(d):
            d["entries"][row]["outputs"][0].add_(1.0)
            d["checksum"] = checksum(entries_of(d))
        _rewrite(rec.path, edit)
    elif tamper == "shape":
        _rewrite(rec.path, lambda d: d["entries"][0]["outputs"].__setitem__(
            0, d["entries"][0]["outputs"][0][:-1]))
    else:
        _rewrite(rec.path, lambda d: d["header"].__setitem__("torch", "1.0.0"))
    again = _obtain(gelu, tmp_path)
    assert again.source == "recorded", tamper
    assert checksum(again.entries) == good
    assert "not trusted" in caplog.text
    assert _obtain(gelu, tmp_path).source == "loaded"  # the rewrite is trusted again


def test_new_pool_loads_the_recording_and_replay_off_writes_none(settings, tmp_path):
    s = settings.model_copy(update={"data_dir": tmp_path})
    off = s.model_copy(update={"record_replay": False, "data_dir": tmp_path / "off"})
    sources, mtimes, results = [], [], []
    for _ in range(2):
        with WorkerPool(s) as pool:  # a new pool: a new worker process
            for _ in range(2):
                r = pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"))
                assert r.correct, r.error
                sources.append(r.observations["replay"]["source"])
                results.append(r)
            r = pool.evaluate(task("gelu"), candidate("candidates/gelu_torch"), settings=off)
            assert r.correct and "replay" not in r.observations and "replay" not in r.phases_s
        files = list((tmp_path / "recordings").glob("gelu-*.pt"))
        assert len(files) == 1
        mtimes.append(files[0].stat().st_mtime_ns)
    assert sources == ["recorded", "memory", "loaded", "memory"]
    assert mtimes[0] == mtimes[1]
    assert ["replay" in r.phases_s for r in results] == [True, False, True, False]
    assert not os.path.exists(tmp_path / "off")


def test_unwritable_recordings_dir_keeps_the_recording_in_memory(gelu, tmp_path, caplog):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("")
    rec = _obtain(gelu, blocker / "recordings")
    assert rec.source == "recorded" and not rec.path.exists()
    assert "could not write the recording" in caplog.text
    assert _verdict(gelu, "candidates/gelu_torch", rec, tmp_path)[0] == Level.CORRECT


def test_forged_entry_with_a_consistent_checksum_is_caught_by_the_random_spot_check(
        gelu, tmp_path, monkeypatch):
    from kernelwright.tools.evaluate import replay

    rec = _obtain(gelu, tmp_path)

    def forge(d):
        row = next(r for r in d["entries"] if (r["variant"], r["seed"]) == ("nominal", 2))
        row["outputs"][0].mul_(0.5)
        d["checksum"] = checksum(entries_of(d))

    _rewrite(rec.path, forge)

    class Pick:  # the "random" entry is the forged one
        def choice(self, items):
            return next(i for i in items if (i.variant.name, i.seed) == ("nominal", 2))

    monkeypatch.setattr(replay.random, "SystemRandom", Pick)
    assert _obtain(gelu, tmp_path).source == "recorded"
