"""A family's meta-prompt archive updated by two processes at once loses nothing."""

from __future__ import annotations

import multiprocessing as mp

import pytest

from kernelwright.agents.metaprompter import MetaPrompt, PromptArchive
from kernelwright.agents.prompt_sync import load_archive, sync_archive

ROUNDS = 25


def child_of(parent: MetaPrompt, tag: str) -> MetaPrompt:
    sections = {**parent.sections, "common_pitfalls": parent.sections["common_pitfalls"] + tag}
    return MetaPrompt.create(sections, [parent.id], parent.generation + 1)


def _run(path: str, tag: str, score: float, start) -> None:
    archive = load_archive(path)
    seed = MetaPrompt.seed()
    start.wait()  # both processes update from here on, interleaved
    for i in range(ROUNDS):
        archive.report(seed.id, score)
        if i % 5 == 0:
            archive.add(child_of(seed, f"{tag}{i}"))
        sync_archive(archive, path)


def test_two_processes_updating_one_family_archive_lose_nothing(tmp_path):
    path = tmp_path / "meta_prompts" / "cpp-elementwise.json"
    first = PromptArchive(seed=0)
    seed = first.select()
    first.report(seed.id, 2.0)
    sync_archive(first, path)
    ctx = mp.get_context("fork")
    start = ctx.Barrier(2)
    procs = [ctx.Process(target=_run, args=(str(path), tag, score, start))
             for tag, score in (("a", 3.0), ("b", 5.0))]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    merged = PromptArchive.load(path)
    stats = merged.stats[seed.id]
    assert stats.samples == 1 + 2 * ROUNDS  # every score from both runs
    assert stats.total == pytest.approx(2.0 + ROUNDS * 3.0 + ROUNDS * 5.0)
    assert stats.fitness == 5.0 and stats.uses == 1
    kids = {child_of(seed, f"{t}{i}").id for t in "ab" for i in range(0, ROUNDS, 5)}
    assert kids <= set(merged.prompts)
    assert all(merged.parents[k] == [seed.id] for k in kids)


def test_sync_adds_only_what_changed_since_the_last_sync(tmp_path):
    path = tmp_path / "f.json"
    archive = PromptArchive(seed=0)
    seed = archive.select()
    archive.report(seed.id, 4.0)
    sync_archive(archive, path)
    sync_archive(archive, path)  # nothing new: nothing counted twice
    other = load_archive(path)
    other.report(seed.id, 6.0)
    sync_archive(other, path)
    archive.report(seed.id, 8.0)
    sync_archive(archive, path)  # merges with the other copy's score, keeps its own
    assert archive.stats[seed.id].samples == 3
    assert archive.mean_of(seed.id) == pytest.approx(6.0)
    assert PromptArchive.load(path).stats[seed.id].samples == 3
