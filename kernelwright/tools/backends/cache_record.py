"""The shared build cache's integrity record, kept outside every mount a sandbox can write.

Candidates see the build cache read-only; the trusted builder (a sandboxed compiler run) may
write it. Neither sees the *record*: it lives in the data directory
(``<data_dir>/build-cache/<hash of the cache path>.json``), which no sandbox mounts, so nothing
that writes a cache entry can also rewrite its digest.

The record maps every build entry's relative path (files in the cache's subdirectories;
top-level files such as ``machine_peaks.json`` are data that trusted commands rewrite, never
code) to ``[size, mtime_ns, inode, sha256]``. :meth:`BuildCache.verify` (the orchestrator,
before every candidate) checks every recorded entry: an unchanged ``stat`` is trusted, a
changed one is hashed again, and an entry whose bytes no longer match is removed (the next
build rebuilds it) and reported. :meth:`BuildCache.adopt` records entries trusted processes
added. :func:`trusted_file` is the check a trusted process makes before it loads a cached
binary itself (the SYCL shim in ``doctor`` or an in-process tuner); :func:`seal_tree` is the
one it makes before a runtime reads a folder of the cache on its own (SYCL's kernel cache).

Several trusted processes share one record (a campaign's Ray workers, each with its own
pool): every change is a read-modify-write under an exclusive ``fcntl.flock`` on
``<record>.lock``, so no process overwrites entries another one just added.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from kernelwright.tools.file_lock import file_lock

if TYPE_CHECKING:
    from kernelwright.config import Settings

log = logging.getLogger(__name__)

SKIP_SUFFIXES = ("_access_time.txt", ".tmp", ".lock")
# Set in every sandbox's environment: there the record is out of reach by design (the
# orchestrator verified the read-only cache before the sandboxed process started).
SANDBOXED_ENV = "KERNELWRIGHT_SANDBOXED"


def record_path(cache_dir: Path, data_dir: Path) -> Path:
    """Where the record of ``cache_dir`` is kept (one per cache, in the data directory)."""
    key = hashlib.sha256(str(Path(cache_dir).resolve()).encode()).hexdigest()[:16]
    return Path(data_dir) / "build-cache" / f"{key}.json"


class BuildCache:
    """The integrity record of one cache directory.

    Example:
        >>> cache = BuildCache.of(Settings())  # doctest: +SKIP
        >>> cache.verify()  # doctest: +SKIP
        []
    """

    def __init__(self, root: Path, record: Path) -> None:
        self.root = Path(root)
        self.index_path = Path(record)
        if self.index_path.resolve().is_relative_to(self.root.resolve()):
            raise ValueError(f"the integrity record {record} must not live inside the cache "
                             f"{root} (the builder can write there)")
        self.index: dict[str, list] = self._load()

    @classmethod
    def of(cls, settings: Settings) -> BuildCache:
        return cls(settings.cache_dir, record_path(settings.cache_dir, settings.data_dir))

    @contextmanager
    def locked(self) -> Iterator[BuildCache]:
        """Hold the record's lock and re-read it: changes made inside are saved on top of
        every other process's, never over them."""
        with file_lock(self.index_path.with_suffix(".lock")):
            self.index = self._load()
            yield self

    def _load(self) -> dict[str, list]:
        try:
            data = json.loads(self.index_path.read_text())
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _save(self) -> None:
        self.index_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.index_path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.index, sort_keys=True))
        os.replace(tmp, self.index_path)

    def entries(self, under: Path | None = None) -> list[Path]:
        """Every recordable file of the cache (relative paths, in subdirectories only), or
        of its folder ``under``."""
        if not self.root.is_dir():
            return []
        found = []
        for dirpath, _, files in os.walk(self.root / under if under else self.root):
            if Path(dirpath) == self.root:
                continue  # top-level files are data (peaks), never loaded as code
            for name in files:
                if name.endswith(SKIP_SUFFIXES) or name.startswith(".tmp"):
                    continue
                found.append(Path(dirpath, name).relative_to(self.root))
        return found

    def check(self, rel: str) -> bool | None:
        """Whether entry ``rel`` matches its digest (``None``: not recorded)."""
        held = self.index.get(rel)
        if held is None:
            return None
        size, mtime, inode, digest = held
        try:
            st = (self.root / rel).stat()
        except OSError:
            return False
        if (st.st_size, st.st_mtime_ns, st.st_ino) == (size, mtime, inode):
            return True
        return _sha256(self.root / rel) == digest

    def verify(self) -> list[str]:
        """Check every recorded entry; remove and return those whose bytes changed."""
        with self.locked():
            return self._verify()

    def _verify(self) -> list[str]:
        tampered: list[str] = []
        changed = False
        for rel in list(self.index):
            path = self.root / rel
            if not path.exists():
                del self.index[rel]
                changed = True
                continue
            if self.check(rel):
                st = path.stat()
                if self.index[rel][:3] != [st.st_size, st.st_mtime_ns, st.st_ino]:
                    self.index[rel][:3] = [st.st_size, st.st_mtime_ns, st.st_ino]
                    changed = True
                continue
            log.warning("build cache entry %s does not match its digest; removed (it will be "
                        "rebuilt)", rel)
            path.unlink(missing_ok=True)
            del self.index[rel]
            tampered.append(rel)
        if tampered or changed:
            self._save()
        return tampered

    def adopt(self, only: list[str] | None = None) -> int:
        """Record entries written since the last call (by trusted builds); return how many.
        Entries are made readable to the sandbox's user (compilers write them 0600)."""
        with self.locked():
            return self._adopt(only)

    def _adopt(self, only: list[str] | None) -> int:
        added = 0
        for rel in only if only is not None else map(str, self.entries()):
            if rel in self.index:
                continue
            path = self.root / rel
            try:
                path.chmod(path.stat().st_mode | 0o444)
                st = path.stat()
                self.index[rel] = [st.st_size, st.st_mtime_ns, st.st_ino, _sha256(path)]
            except OSError:
                continue
            added += 1
        if added:
            self._save()
        return added

    def __repr__(self) -> str:
        return f"BuildCache({str(self.root)!r}, entries={len(self.index)})"


def trusted_file(path: Path, settings: Settings) -> bool:
    """Whether a trusted process may load the cached binary ``path``.

    Inside a sandbox (``KERNELWRIGHT_SANDBOXED``) the record is out of reach and the
    orchestrator checked the read-only cache before this process started: ``True``.
    Elsewhere the entry must be recorded and match its digest; a mismatching entry is removed.
    """
    if os.environ.get(SANDBOXED_ENV) == "1":
        return True
    cache = BuildCache.of(settings)
    try:
        rel = str(Path(path).resolve().relative_to(Path(settings.cache_dir).resolve()))
    except ValueError:
        return False
    ok = cache.check(rel)
    if ok is False:
        with cache.locked():
            if cache.check(rel) is False:  # still: no other process recorded a rebuild since
                log.warning("build cache entry %s does not match its digest; removed (it will "
                            "be rebuilt)", rel)
                Path(path).unlink(missing_ok=True)
                cache.index.pop(rel, None)
                cache._save()
    return bool(ok)


def record_file(path: Path, settings: Settings) -> None:
    """Record ``path`` (just built by this trusted process) in the cache's record."""
    if os.environ.get(SANDBOXED_ENV) == "1":
        return
    try:
        rel = str(Path(path).resolve().relative_to(Path(settings.cache_dir).resolve()))
        cache = BuildCache.of(settings)
        with cache.locked():
            cache.index.pop(rel, None)
            cache._adopt([rel])
    except (OSError, ValueError) as exc:  # unrecorded: rebuilt before a trusted load
        log.debug("could not record %s: %s", path, exc)


def seal_tree(folder: Path, settings: Settings) -> list[str]:
    """Before a trusted process lets a runtime read cached binaries in ``folder`` by itself
    (the SYCL runtime's kernel cache, which no :func:`trusted_file` call guards): remove every
    file there that is unrecorded or no longer matches its digest, and return their relative
    paths; the runtime rebuilds what it then misses. Inside a sandbox, or for a folder outside
    the cache, nothing is done."""
    if os.environ.get(SANDBOXED_ENV) == "1":
        return []
    cache = BuildCache.of(settings)
    with cache.locked():
        removed = [rel for rel in _files_under(cache, folder) if not cache.check(rel)]
        for rel in removed:
            (cache.root / rel).unlink(missing_ok=True)
            cache.index.pop(rel, None)
        if removed:
            cache._save()
    if removed:
        log.warning("%d SYCL runtime cache entries were not recorded or did not match their "
                    "digests; removed (they will be rebuilt): %s", len(removed),
                    ", ".join(removed[:4]))
    return removed


@contextmanager
def cache_writes(settings: Settings) -> Iterator[None]:
    """Held by a trusted process from writing cache entries until it has recorded them (the
    trusted builder's run; an in-process SYCL build from its seal to its record), so that no
    other trusted process seals a folder in between and removes fresh, not yet recorded
    entries as if they were planted (they would only be rebuilt, but every time, with a
    warning). Inside a sandbox there is nothing to hold: the record is out of reach."""
    if os.environ.get(SANDBOXED_ENV) == "1":
        yield
        return
    with file_lock(record_path(settings.cache_dir, settings.data_dir).with_suffix(".writes.lock")):
        yield


def record_tree(folder: Path, settings: Settings) -> int:
    """Record the files a trusted process's runtime just wrote in ``folder``; how many."""
    if os.environ.get(SANDBOXED_ENV) == "1":
        return 0
    cache = BuildCache.of(settings)
    with cache.locked():
        return cache._adopt([rel for rel in _files_under(cache, folder) if rel not in cache.index])


def _files_under(cache: BuildCache, folder: Path) -> list[str]:
    try:
        sub = Path(folder).resolve().relative_to(cache.root.resolve())
    except (OSError, ValueError):
        return []
    if not sub.parts:
        return []  # the whole cache: verify() is the check for that
    return [str(rel) for rel in cache.entries(sub)]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
