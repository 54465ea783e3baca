"""Confine the paths a remote caller names to the directories the server was started with."""

from __future__ import annotations

from pathlib import Path

from kernelwright.errors import ConfigError, PathNotAllowedError


class Roots:
    """The directories a caller may name files in (symlinks resolved before the check).

    Example:
        >>> Roots([Path("/data/tasks")]).check("/etc/passwd")  # doctest: +SKIP
        Traceback (most recent call last):
        PathNotAllowedError: ...
    """

    def __init__(self, roots: list[Path]) -> None:
        if not roots:
            raise ValueError("give at least one root directory (--root DIR)")
        self.roots = [Path(r).expanduser().resolve() for r in roots]

    def __repr__(self) -> str:
        return f"Roots({[str(r) for r in self.roots]})"

    def check(self, path: str | Path, what: str = "path", suffix: str | None = ".py") -> Path:
        """The resolved ``path`` if it is an existing file under a root; else a clear error."""
        resolved = Path(path).expanduser().resolve()
        if not any(resolved.is_relative_to(root) for root in self.roots):
            allowed = ", ".join(str(r) for r in self.roots)
            raise PathNotAllowedError(
                f"{what} {str(path)!r} is outside the directories this server may read "
                f"({allowed}): pass a file under one of them, or restart the server with "
                "--root naming its directory"
            )
        if suffix is not None and not resolved.is_file():
            raise ConfigError(f"{what} {str(path)!r} is not a file: pass an existing "
                                      f"{suffix} file under {self.roots[0]}")  # fmt: skip
        if suffix is not None and resolved.suffix != suffix:
            raise ConfigError(f"{what} {str(path)!r} is not a {suffix} file: pass the "
                                      f"{suffix} file itself")  # fmt: skip
        return resolved

    def check_dir(self, path: str | Path, what: str = "directory") -> Path:
        """The resolved ``path`` if it is an existing directory under a root."""
        resolved = self.check(path, what, suffix=None)
        if not resolved.is_dir():
            raise ConfigError(f"{what} {str(path)!r} is not a directory: pass an "
                                      "existing directory")  # fmt: skip
        return resolved
