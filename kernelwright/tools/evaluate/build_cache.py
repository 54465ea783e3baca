"""The shared build cache's integrity record, kept by the trusted side.

Candidates see the cache read-only (their runners link its entries into a private, writable
cache view, so their own builds never reach the shared one). Only trusted processes write it:
the orchestrator's own builds (lowering, the tuner building in-process) and
kernelwright's commands outside the sandbox.

``digests.json`` (in the cache directory, written only here) maps every entry's relative path
to ``[size, mtime_ns, inode, sha256]``. Before every candidate, :meth:`BuildCache.verify`
checks every recorded entry: an unchanged ``stat`` is trusted, a changed one is hashed again,
and an entry whose bytes no longer match its digest is removed (so the next build of that
source rebuilds it) and reported. After every candidate, :meth:`BuildCache.adopt` records the
entries trusted processes added meanwhile. Files that change by design (the SYCL runtime's
``*_access_time.txt``) are not recorded.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

INDEX = "digests.json"
SKIP_SUFFIXES = ("_access_time.txt",)


class BuildCache:
    """The integrity record of one cache directory.

    Example:
        >>> cache = BuildCache(Path("~/.cache/kernelwright").expanduser())  # doctest: +SKIP
        >>> cache.verify()  # doctest: +SKIP
        []
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.index_path = self.root / INDEX
        self.index: dict[str, list] = self._load()

    def _load(self) -> dict[str, list]:
        try:
            data = json.loads(self.index_path.read_text())
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _save(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.index_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.index, sort_keys=True))
        os.replace(tmp, self.index_path)

    def entries(self) -> list[Path]:
        """Every recordable file of the cache (relative paths)."""
        if not self.root.is_dir():
            return []
        found = []
        for dirpath, _, files in os.walk(self.root):
            for name in files:
                if name == INDEX or name.endswith(SKIP_SUFFIXES) or name.startswith(".tmp"):
                    continue
                found.append(Path(dirpath, name).relative_to(self.root))
        return found

    def verify(self) -> list[str]:
        """Check every recorded entry; remove and return those whose bytes changed."""
        tampered: list[str] = []
        for rel, (size, mtime, inode, digest) in list(self.index.items()):
            path = self.root / rel
            try:
                st = path.stat()
            except OSError:
                del self.index[rel]
                continue
            if (st.st_size, st.st_mtime_ns, st.st_ino) == (size, mtime, inode):
                continue
            if _sha256(path) == digest:
                self.index[rel] = [st.st_size, st.st_mtime_ns, st.st_ino, digest]
                continue
            log.warning("build cache entry %s does not match its digest; removed (it will be "
                        "rebuilt)", rel)
            path.unlink(missing_ok=True)
            del self.index[rel]
            tampered.append(rel)
        if tampered:
            self._save()
        return tampered

    def adopt(self) -> int:
        """Record entries written since the last call (by trusted builds); return how many.
        Entries are made readable to the sandbox's user (compilers write them 0600)."""
        added = 0
        for rel in map(str, self.entries()):
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


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
