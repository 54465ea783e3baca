"""One Settings object; every default can be overridden by flag or ``KERNELWRIGHT_*`` env var.

The LLM endpoint and budget are nested as ``Settings.llm`` (:class:`LLMSettings`, env vars
``KERNELWRIGHT_LLM_*``). Components receive the settings object they need; nothing rebuilds it.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from urllib.parse import urlparse

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from kernelwright.errors import LLMError

BACKENDS = ("sycl", "cpp", "cuda")  # the kernel backends a run can target


def default_data_dir() -> Path:
    """Per-user data directory (``$XDG_DATA_HOME/kernelwright`` or ``~/.local/share/...``)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kernelwright"


def default_cache_dir() -> Path:
    """Per-user cache directory for build artifacts shared across runs."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kernelwright"


class LLMSettings(BaseSettings):
    """How to reach the LLM and how much a run may spend; env vars ``KERNELWRIGHT_LLM_*``.

    Example:
        >>> s = LLMSettings(model="qwen2.5-coder", base_url="http://127.0.0.1:8000/v1")
        >>> s.enabled, s.api_key_env
        (True, 'OPENAI_API_KEY')
    """

    model_config = SettingsConfigDict(env_prefix="KERNELWRIGHT_LLM_", extra="forbid")

    model: str | None = Field(None, description="model name; None = no LLM (offline policies)")
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = Field("OPENAI_API_KEY", description="NAME of the env var with the key")
    temperature: float = Field(0.7, ge=0, le=2, description="the coder's and meta-prompter's")
    temperatures: dict[str, float] = Field(
        default_factory=lambda: {"planner": 0.2, "critic": 0.2, "request_parser": 0.0},
        description="per agent; agents that must return structured replies sample low",
    )
    timeout_s: float = Field(120.0, gt=0, description="per request")
    max_retries: int = Field(4, ge=0, description="on 429/5xx/timeouts, exponential backoff")
    stream: bool = Field(False, description="stream replies (SSE); usage is still reported")
    reply_max_tokens: int | None = Field(8192, ge=1, description="completion cap per reply")
    max_tokens: int | None = Field(None, ge=1, description="token budget of a run")
    max_cost: float | None = Field(None, gt=0, description="cost budget of a run, USD")
    max_requests: int | None = Field(
        None,
        ge=1,
        description="LLM requests per run; None = the run's budget x "
        "Settings.llm_requests_per_eval (a cap always holds, even with no token or cost limit)",
    )
    prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description="model -> (USD per 1M input, per 1M output tokens)"
    )

    @property
    def enabled(self) -> bool:
        return self.model is not None

    def temperature_for(self, agent: str) -> float:
        """The sampling temperature of ``agent`` (``temperatures``, else ``temperature``)."""
        return self.temperatures.get(agent, self.temperature)

    def price_for(self, model: str | None) -> tuple[float, float] | None:
        """The price of ``model``: an exact entry, else the longest entry it starts with."""
        name = model or self.model or ""
        if name in self.prices:
            return self.prices[name]
        prefixes = [k for k in self.prices if name.startswith(k)]
        return self.prices[max(prefixes, key=len)] if prefixes else None

    def api_key(self) -> str:
        """The key from ``$api_key_env``; a loopback server may run without one."""
        key = os.environ.get(self.api_key_env)
        if key:
            return key
        if _is_loopback(self.base_url):
            return "no-key"
        raise LLMError(
            f"no API key for the LLM at {self.base_url}: environment variable "
            f"{self.api_key_env} is not set. Export it, or name another variable with "
            "--llm-api-key-env NAME."
        )

    def __repr__(self) -> str:
        return f"LLMSettings(model={self.model!r}, base_url={self.base_url!r})"


def _is_loopback(url: str) -> bool:
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    cuda_emulator: bool = Field(
        False,
        description="run CUDA kernels on the PTX emulator even where a GPU is present "
        "(to compare the two on the same kernels)",
    )

    # Verification.
    seeds: int = Field(3, ge=1, description="seeds per shape variant when verifying")
    record_replay: bool = Field(
        True,
        description="verify against the reference's recorded inputs/outputs "
        "(data_dir/recordings, recorded once per task) instead of re-running it per candidate",
    )
    # Timing.
    min_time_s: float = Field(0.2, gt=0, description="minimum measured time per side")
    warmup_calls: int = Field(2, ge=0)
    max_repeats: int = Field(1000, ge=3)
    suspicious_speedup: float = Field(10.0, gt=1, description="re-verify and flag above this")
    # Honest figures: torch.compile side by side, and the final re-measurement of the best.
    time_compile: bool = Field(
        False,
        description="also time torch.compile of the reference in every evaluation (the final "
        "re-measurement always does when confirm_compile is on)",
    )
    compile_mode: str = Field(
        "default", description="torch.compile mode: default | reduce-overhead | max-autotune"
    )
    compile_timeout_s: float = Field(
        300.0, gt=0, description="torch.compile's first calls (compiling) in the reference runner"
    )
    confirm_top: int = Field(
        3, ge=0, description="candidates re-measured before the best is named (0: none)"
    )
    confirm_time_factor: float = Field(
        4.0, ge=1, description="the re-measurement measures min_time_s times this per side"
    )
    confirm_compile: bool = Field(True, description="time torch.compile in the re-measurement")
    confirm_rounds: int = Field(
        2, ge=1, description="interleaved rounds of the final re-measurement (A,B,C,ref,A,...); "
        "the confirm_time_factor is split over them"
    )
    reference_candidate: bool = Field(
        True, description="evaluate the reference itself as a candidate when the task allows "
        "the framework space (not counted in the budget)"
    )
    challenge_rounds: int = Field(
        2, ge=0, description="interleaved rounds re-measuring a would-be new best against the "
        "incumbent and the reference during the search (0: decide on first figures)"
    )
    challenge_time_factor: float = Field(
        1.0, gt=0, description="a challenge's measuring time per side: min_time_s times this"
    )

    # Worker sandbox.
    call_timeout_s: float = Field(60.0, gt=0, description="per worker call (build, verify, time)")
    memory_limit_mb: int = Field(16384, ge=256, description="worker address-space limit")
    worker_threads: int = Field(0, ge=0, description="0 = all cores")
    isolate_network: bool = True
    secret_env: list[str] = Field(
        default_factory=list, description="more env var names never passed to candidate code"
    )

    warm_sessions: int = Field(
        4, ge=1, description="task sessions (a reference runner, several hundred MB) a pool "
        "keeps warm; the least recently used idle one is closed when a new task needs one (a "
        "campaign over many tasks stays bounded). Sandboxed fork servers are not per task: the "
        "pool keeps one per evaluation running at once and lends them to every task")
    promote_builds: bool = Field(
        True, description="when a pool closes, the trusted builder compiles the sources "
        "candidates built into the shared build cache (off for throwaway pools, e.g. tests)"
    )

    # Implementation spaces a run may use, narrowing the task's (None = the task's own):
    # "all", "custom", "vendor", "framework" or a comma list (spec.contract.parse_spaces).
    spaces: str | None = None

    # Evaluation workers on Ray (tools/cluster): None evaluates in this process.
    cluster: str | None = Field(None, description="ray://host:10001, host:6379 or auto")
    cluster_deadline_s: float = Field(
        900.0, gt=0, description="a worker silent this long on one evaluation is killed")

    # Search.
    max_concurrent_evals: int = Field(1, ge=1)
    hierarchy: bool = Field(True, description="R^3: archive outside, Optuna tuner inside")
    inner_share: float = Field(0.5, ge=0, le=1, description="budget share of the inner level")
    budget: int = Field(24, ge=1, description="candidate evaluations per task")
    time_limit_s: float | None = Field(None, gt=0, description="wall-clock limit of a run")
    max_idle_rounds: int = Field(
        3, ge=1, description="rounds in a row proposing nothing new before the run stops"
    )
    llm_requests_per_eval: int = Field(
        10, ge=1, description="default LLM request cap of a run, per evaluation of its budget"
    )
    seed: int = 0

    # The LLM team (``llm.model`` None = offline policies only).
    llm: LLMSettings = Field(default_factory=LLMSettings)

    @field_validator("backend", mode="before")
    @classmethod
    def _known_backend(cls, value: object) -> object:
        """Any case is accepted (``SYCL``, ``Cpp``); an unknown name lists the choices."""
        if not isinstance(value, str):
            return value
        name = value.strip().lower()
        if name not in BACKENDS:
            raise ValueError(f"unknown backend; choose one of {', '.join(BACKENDS)}")
        return name

    @property
    def build_cache_dir(self) -> Path:
        return self.cache_dir / "builds"
