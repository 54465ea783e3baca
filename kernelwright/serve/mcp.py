"""kernelwright as an MCP server (``mcp`` 2.x ``MCPServer``): other agents call it as tools.

Tools: ``optimize_kernel`` (starts a run in the background and returns its id at once),
``run_status``, ``best_kernel``, ``evaluate_kernel``, ``list_runs``, ``cancel_run`` and
``sample_workload``. Inputs and outputs are typed (pydantic), so clients get JSON schemas and
structured results. Every path a caller names must lie under one of the server's roots
(:class:`~kernelwright.serve.roots.Roots`); a bad argument comes back as a tool error
(``is_error``) whose text names the problem and the fix, never as a crashed server.

Example:
    >>> server = build_server(Settings(), roots=[Path("examples")])  # doctest: +SKIP
    >>> server.run("stdio")  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import BaseModel, BeforeValidator, Field, ValidationError

from kernelwright.config import Settings
from kernelwright.errors import ConfigError, KernelwrightError
from kernelwright.graphs.run_summary import build_report_data
from kernelwright.graphs.store import RunStore, new_run_id
from kernelwright.serve.background import BackgroundRuns, check_run_id
from kernelwright.serve.roots import Roots

Backend = Annotated[
    Literal["sycl", "cpp", "cuda"],
    BeforeValidator(lambda v: v.strip().lower() if isinstance(v, str) else v),  # any case
]
RunIdArg = Annotated[str, Field(description="a run id from optimize_kernel or list_runs")]


class OptimizeStarted(BaseModel):
    run_id: str
    task: str
    backend: str
    budget: int
    store: str
    status: str = "running"
    next_step: str = "poll run_status with this run_id; fetch the result with best_kernel"


class RunStatus(BaseModel):
    run_id: str
    task: str
    status: str  # from the run store: created, running, done, failed, interrupted, cancelled
    process: str  # running, finished, failed, cancelled, or "not started by this server"
    evaluations: int = 0
    budget: int | None = None
    best_speedup: float | None = None
    started: float | None = None
    updated: float | None = None
    log_tail: str | None = None  # the run's output when its process failed
    reason: str | None = None  # why a finished run stopped (and why it has no kernel, if so)


class RunList(BaseModel):
    runs: list[RunStatus]


class BestKernel(BaseModel):
    run_id: str
    task: str
    candidate_id: str
    speedup: float | None
    speedup_low: float | None
    speedup_high: float | None
    roofline_fraction: float | None
    variants_checked: int
    seeds_checked: int
    max_abs_error: float | None
    device: str | None
    source: str
    # "faster": use this kernel; "keep_pytorch": it is the fastest correct kernel found but
    # not faster than PyTorch eager, so the caller should keep the PyTorch reference.
    verdict: str
    verdict_text: str  # the verdict with the medians, e.g. "keep PyTorch (0.38x): ..."
    reference_ms: float | None = None
    candidate_ms: float | None = None
    compile_ms: float | None = None  # torch.compile of the reference (None: not timed)
    remeasured: bool = False


class Evaluation(BaseModel):
    task: str
    candidate: str
    backend: str
    correct: bool
    level: int
    level_name: str
    error: str | None
    speedup: float | None
    speedup_low: float | None
    speedup_high: float | None
    max_error: dict[str, float | None]
    flags: list[str]
    device: str | None
    verdict: str = "no_correct_kernel"  # faster | keep_pytorch | no_correct_kernel
    reference_ms: float | None = None  # the medians behind ``speedup``
    candidate_ms: float | None = None


class SampledInvocation(BaseModel):
    invocation: int
    kernel: str
    weight: float
    cycles: float


class KernelShare(BaseModel):
    kernel: str
    share: float


class WorkloadSample(BaseModel):
    """What the agents' ``sample_workload`` tool returns, typed."""

    workload: str
    method: str
    gpu: str
    invocations: int
    representatives: list[SampledInvocation]
    projected_cycles: float
    top_kernels: list[KernelShare]
    note: str


def _verdict_text(run) -> str:
    from kernelwright.spec.figures import compile_sentence, verdict_sentence

    b = run.best
    text = verdict_sentence(run.verdict or "keep_pytorch", b.speedup, ref_ms=b.reference_ms,
                            cand_ms=b.candidate_ms, low=b.speedup_low, high=b.speedup_high)
    comp = compile_sentence(b.compile_ms, b.candidate_ms)
    return f"{text}; {comp}" if comp else text


@contextlib.contextmanager
def tool_errors() -> Iterator[None]:
    """Turn our own errors (and bad values) into tool errors carrying their message."""
    try:
        yield
    except ToolError:
        raise
    except (KernelwrightError, ValueError, FileNotFoundError) as exc:
        raise ToolError(str(exc)) from exc


def arguments_error(tool: str, exc: ValidationError) -> str:
    """Pydantic's report on a tool's arguments as one line per bad argument: the argument, the
    value, the rule and the fix (never pydantic's own text with its links)."""
    lines = []
    for err in exc.errors():
        name = ".".join(str(part) for part in err.get("loc", ())) or "arguments"
        if err.get("type") == "missing":
            lines.append(f"{tool}: argument {name} is required: pass it (see the tool's schema)")
            continue
        rule = str(err.get("msg", "is not valid")).removeprefix("Value error, ")
        lines.append(f"{tool}: argument {name}={err.get('input')!r} is not valid: "
                     f"{rule[:1].lower() + rule[1:]}; fix the value (see the tool's schema)")
    return "\n".join(lines) or f"{tool}: the arguments are not valid (see the tool's schema)"


class _Server(MCPServer):
    """An MCP server whose argument errors read as one plain line per argument."""

    async def call_tool(self, name, arguments, context=None):  # type: ignore[override]
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError) and not isinstance(
                exc, UnexpectedToolError
            ):
                raise ToolError(arguments_error(name, exc.__cause__)) from None
            raise


class KernelwrightTools:
    """The tools' logic, bound to one settings object, one run store and the allowed roots."""

    def __init__(self, settings: Settings, roots: Roots, store_root: Path) -> None:
        self.settings, self.roots = settings, roots
        self.store = RunStore(store_root)
        self.background = BackgroundRuns(self.store.root)

    def __repr__(self) -> str:
        return f"KernelwrightTools(store={self.store!r}, roots={self.roots!r})"

    def optimize(self, task_path: str, backend: str | None, budget: int | None,
                 time_limit_s: float | None) -> OptimizeStarted:  # fmt: skip
        task = self.roots.check(task_path, "task_path")
        backend = backend or self.settings.backend
        budget = budget or self.settings.budget
        run_id = new_run_id(task.stem)
        self.background.start(run_id, task, backend=backend, budget=budget,
                              time_limit_s=time_limit_s,
                              extra_args=llm_flags(self.settings))  # fmt: skip
        return OptimizeStarted(run_id=run_id, task=task.stem, backend=backend, budget=budget,
                               store=self.store.label)  # fmt: skip

    def status(self, run_id: str) -> RunStatus:
        check_run_id(run_id)
        proc = self.background.get(run_id)
        try:
            meta = self.store.meta(run_id)
        except KernelwrightError:
            if proc is None:
                raise
            meta = {"task": "?", "status": "starting"}  # the child has not written it yet
        state = proc.state if proc else "not started by this server"
        status = "cancelled" if state == "cancelled" else str(meta.get("status", "?"))
        return RunStatus(
            run_id=run_id, task=str(meta.get("task", "?")), status=status, process=state,
            evaluations=int(meta.get("evaluations") or 0), budget=meta.get("budget"),
            best_speedup=meta.get("best_speedup"), started=meta.get("started"),
            updated=meta.get("updated"), reason=meta.get("reason"),
            log_tail=proc.log_tail() if proc and state == "failed" else None,
        )  # fmt: skip

    def best(self, run_id: str) -> BestKernel:
        check_run_id(run_id)
        (run,) = build_report_data(self.store.root, [run_id]).runs
        if run.best is None or run.best_source is None:
            raise ConfigError(
                f"run {run_id!r} has no correct kernel yet ({len(run.candidates)} evaluated, "
                f"status {run.status}): wait and poll run_status, or give it a larger budget"
            )
        ev = run.evidence
        return BestKernel(
            run_id=run_id, task=run.task, candidate_id=run.best.candidate_id,
            speedup=run.best.speedup, speedup_low=run.best.speedup_low,
            speedup_high=run.best.speedup_high, roofline_fraction=run.best.roofline_fraction,
            variants_checked=len(ev.variants) if ev else 0,
            seeds_checked=ev.seeds_total if ev else 0,
            max_abs_error=ev.max_abs_error if ev else None, device=ev.device if ev else None,
            source=run.best_source.source, verdict=run.verdict or "keep_pytorch",
            verdict_text=_verdict_text(run), reference_ms=run.best.reference_ms,
            candidate_ms=run.best.candidate_ms, compile_ms=run.best.compile_ms,
            remeasured=run.best.remeasured,
        )  # fmt: skip

    def evaluate(self, task_path: str, candidate_path: str, backend: str | None) -> Evaluation:
        from kernelwright.spec import Candidate
        from kernelwright.tools.evaluate import evaluate

        task = self.roots.check(task_path, "task_path")
        candidate = Candidate.from_file(self.roots.check(candidate_path, "candidate_path"),
                                        backend=backend)  # fmt: skip
        summary = evaluate(task, candidate, settings=self.settings).summary()
        return Evaluation(**{k: v for k, v in summary.items() if k in Evaluation.model_fields})

    def list(self, limit: int) -> RunList:
        ids = self.store.run_ids()[-limit:]
        return RunList(runs=[self.status(run_id) for run_id in reversed(ids)])

    def cancel(self, run_id: str) -> RunStatus:
        check_run_id(run_id)
        self.background.cancel(run_id)
        with contextlib.suppress(KernelwrightError):
            self.store.update_meta(run_id, status="cancelled")
        return self.status(run_id)

    def sample(self, trace_dir: str, method: str, gpu: str, top: int) -> WorkloadSample:
        from kernelwright.agents.sampling_tool import sample_workload

        folder = self.roots.check_dir(trace_dir, "trace_dir")
        return WorkloadSample(**sample_workload(str(folder), method, gpu, top, self.settings))


def llm_flags(settings: Settings) -> list[str]:
    """The ``optimize`` flags that give a child run this server's LLM endpoint and budgets
    (none when the server runs offline). The key itself stays in its environment variable."""
    llm = settings.llm
    if not llm.enabled:
        return []
    flags = {"--llm-model": llm.model, "--llm-base-url": llm.base_url,
             "--llm-api-key-env": llm.api_key_env, "--max-tokens": llm.max_tokens,
             "--max-cost": llm.max_cost, "--llm-timeout": llm.timeout_s,
             "--llm-max-retries": llm.max_retries}  # fmt: skip
    return [part for flag, value in flags.items() if value is not None
            for part in (flag, str(value))]  # fmt: skip


def build_server(
    settings: Settings, roots: list[Path], store: Path | None = None
) -> tuple[MCPServer, KernelwrightTools]:
    """The MCP server and the object holding its state (background runs)."""
    tools = KernelwrightTools(settings, Roots(roots), store or settings.data_dir)
    server = _Server(
        "kernelwright",
        instructions="Make GPU kernels faster: start a run with optimize_kernel, poll "
        "run_status, fetch best_kernel. Paths must lie under the server's roots: "
        + ", ".join(str(r) for r in tools.roots.roots),
    )
    _register(server, tools)
    return server, tools


def _register(server: MCPServer, tools: KernelwrightTools) -> None:
    @server.tool()
    def optimize_kernel(
        task_path: Annotated[str, Field(description="KernelBench-format task file (.py)")],
        backend: Annotated[Backend | None, Field(description="default: the server's")] = None,
        budget: Annotated[int | None, Field(ge=1, le=10_000, description="evaluations")] = None,
        time_limit_s: Annotated[float | None, Field(gt=0, le=7 * 86400)] = None,
    ) -> OptimizeStarted:
        """Start optimising a task in the background; returns its run id at once."""
        with tool_errors():
            return tools.optimize(task_path, backend, budget, time_limit_s)

    @server.tool()
    def run_status(run_id: RunIdArg) -> RunStatus:
        """Progress of a run: status, evaluations spent, best speedup so far."""
        with tool_errors():
            return tools.status(run_id)

    @server.tool()
    def best_kernel(run_id: RunIdArg) -> BestKernel:
        """A run's best correct kernel, with its evidence, source and verdict: "faster" (use
        it) or "keep_pytorch" (it is not faster than PyTorch eager: keep the reference)."""
        with tool_errors():
            return tools.best(run_id)

    @server.tool()
    async def evaluate_kernel(
        task_path: Annotated[str, Field(description="KernelBench-format task file (.py)")],
        candidate_path: Annotated[str, Field(description="module defining ModelNew (.py)")],
        backend: Annotated[Backend | None, Field(description="default: guessed")] = None,
    ) -> Evaluation:
        """Verify a candidate against a task in the sandbox and time it against PyTorch."""
        with tool_errors():
            return await anyio.to_thread.run_sync(
                tools.evaluate, task_path, candidate_path, backend
            )

    @server.tool()
    def list_runs(limit: Annotated[int, Field(ge=1, le=1000)] = 20) -> RunList:
        """The most recent runs in the server's store, newest first."""
        with tool_errors():
            return tools.list(limit)

    @server.tool()
    def cancel_run(run_id: RunIdArg) -> RunStatus:
        """Stop a run this server started; it stays resumable (kernelwright resume RUN_ID)."""
        with tool_errors():
            return tools.cancel(run_id)

    @server.tool()
    def sample_workload(
        trace_dir: Annotated[str, Field(description="Accel-Sim trace directory")],
        method: Annotated[str, Field(description="gcl, pka, sieve, stem, photon, random")] = "gcl",
        gpu: Annotated[str, Field(description="GPU model of the timing model")] = "rtx2080ti",
        top: Annotated[int, Field(ge=1, le=100, description="kernels to rank by share")] = 5,
    ) -> WorkloadSample:
        """Pick the few kernel invocations of a long workload worth simulating, with weights,
        and rank the kernels by their share of the projected time (what to optimise first)."""
        with tool_errors():
            return tools.sample(trace_dir, method, gpu, top)


def serve(
    settings: Settings, roots: list[Path], store: Path | None = None,
    transport: Literal["stdio", "http"] = "stdio", host: str = "127.0.0.1", port: int = 8765,
) -> None:  # fmt: skip
    """Run the server until its client goes away (stdio) or it is interrupted (http)."""
    server, tools = build_server(settings, roots, store)
    try:
        if transport == "stdio":
            server.run("stdio")
        else:
            server.run("streamable-http", host=host, port=port)
    finally:
        tools.background.shutdown()
