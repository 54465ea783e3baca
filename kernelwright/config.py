"""One Settings object; every default can be overridden by flag or ``KERNELWRIGHT_*`` env var."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_data_dir() -> Path:
    """Per-user data directory (``$XDG_DATA_HOME/kernelwright`` or ``~/.local/share/...``)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kernelwright"


def default_cache_dir() -> Path:
    """Per-user cache directory for build artifacts shared across runs."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kernelwright"


class Settings(BaseSettings):
    """Every knob of kernelwright, read from ``KERNELWRIGHT_<NAME>`` env vars or given directly.

    Example:
        >>> Settings(backend="cpp", seeds=5).seeds
        5
    """

    model_config = SettingsConfigDict(env_prefix="KERNELWRIGHT_", extra="forbid")

    # Where things live.
    data_dir: Path = Field(default_factory=default_data_dir)
    cache_dir: Path = Field(default_factory=default_cache_dir)

    # Backends.
    backend: str = "sycl"
    cuda_arch: str = "sm_90"

    # Verification.
    seeds: int = Field(3, ge=1, description="seeds per shape variant when verifying")
    record_replay: bool = Field(
        True, description="verify against the reference's recorded inputs/outputs "
        "(data_dir/recordings, recorded once per task) instead of re-running it per candidate"
    )
    # Timing.
    min_time_s: float = Field(0.2, gt=0, description="minimum measured time per side")
    warmup_calls: int = Field(2, ge=0)
    max_repeats: int = Field(1000, ge=3)
    suspicious_speedup: float = Field(10.0, gt=1, description="re-verify and flag above this")

    # Worker sandbox.
    call_timeout_s: float = Field(60.0, gt=0, description="per worker call (build, verify, time)")
    memory_limit_mb: int = Field(16384, ge=256, description="worker address-space limit")
    worker_threads: int = Field(0, ge=0, description="0 = all cores")
    isolate_network: bool = True
    secret_env: list[str] = Field(
        default_factory=list, description="more env var names never passed to candidate code"
    )

    # Search.
    max_concurrent_evals: int = Field(1, ge=1)
    hierarchy: bool = Field(True, description="R^3: archive outside, Optuna tuner inside")
    inner_share: float = Field(0.5, ge=0, le=1, description="budget share of the inner level")
    budget: int = Field(24, ge=1, description="candidate evaluations per task")
    time_limit_s: float | None = None
    seed: int = 0

    @property
    def build_cache_dir(self) -> Path:
        return self.cache_dir / "builds"

    @property
    def runs_dir(self) -> Path:
        return self.data_dir / "runs"
