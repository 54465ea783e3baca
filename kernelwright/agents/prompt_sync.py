"""A family's meta-prompt archive shared by concurrent runs: merged under a file lock.

Several runs (or campaign tasks) of one task family may evolve the same archive at once. Each
keeps its own copy in memory; :func:`sync_archive` takes an exclusive ``fcntl.flock`` on a lock
file beside the archive, reads what is on disk, adds what this copy changed since its last sync
(new prompts, and the uses, samples and score totals counted since), writes the merge atomically
and makes it this copy's state. Two runs updating at once therefore lose nothing: every
reported score and every child prompt reaches the file.
"""

from __future__ import annotations

import json
from pathlib import Path

from kernelwright.agents.metaprompter import PromptArchive, PromptStats
from kernelwright.tools.file_lock import file_lock

_BASE = "_synced"  # attribute: the stats as last read from or written to the file


def _locked(path: Path):
    return file_lock(path.with_name(path.name + ".lock"))


def load_archive(path: str | Path) -> PromptArchive:
    """The archive at ``path`` (read under the lock), remembered as the base of later syncs."""
    path = Path(path)
    with _locked(path):
        archive = PromptArchive.load(path)
    _remember(archive)
    return archive


def sync_archive(archive: PromptArchive, path: str | Path) -> PromptArchive:
    """Merge ``archive``'s changes since its last sync into the file at ``path``; ``archive``
    then holds the merged state (the same object, updated in place). Returns it."""
    path = Path(path)
    base: dict[str, PromptStats] = getattr(archive, _BASE, {})
    with _locked(path):
        disk = PromptArchive.load(path) if path.is_file() else None
        if disk is not None:
            _merge_into(disk, archive, base)
            archive.prompts, archive.stats = disk.prompts, disk.stats
            archive.parents = disk.parents
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(archive.to_json(), indent=1))
        tmp.replace(path)
    _remember(archive)
    return archive


def _merge_into(disk: PromptArchive, mine: PromptArchive, base: dict[str, PromptStats]) -> None:
    """Add ``mine``'s counts beyond ``base`` to ``disk`` (prompts new to it are added)."""
    for pid, stats in mine.stats.items():
        before = base.get(pid, PromptStats())
        delta = PromptStats(
            uses=stats.uses - before.uses,
            samples=stats.samples - before.samples,
            total=stats.total - before.total,
            fitness=stats.fitness,
        )
        if pid not in disk.prompts:
            disk.prompts[pid] = mine.prompts[pid]
            disk.stats[pid] = PromptStats()
        into = disk.stats[pid]
        into.uses += max(delta.uses, 0)
        into.samples += max(delta.samples, 0)
        into.total += delta.total if delta.samples > 0 else 0.0
        if delta.samples > 0 and delta.fitness is not None:
            into.fitness = delta.fitness if into.fitness is None else max(into.fitness,
                                                                          delta.fitness)
    for pid, parents in mine.parents.items():
        disk.parents.setdefault(pid, list(parents))
    while len(disk.prompts) > disk.max_prompts:
        disk._evict(keep="")


def _remember(archive: PromptArchive) -> None:
    setattr(archive, _BASE, {k: v.model_copy() for k, v in archive.stats.items()})
