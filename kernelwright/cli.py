"""The command line: parse, call the API, render with rich. No logic of its own."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kernelwright.config import Settings
from kernelwright.errors import KernelwrightError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="kernelwright: agents that make GPU kernels faster, with honest numbers.",
)
console = Console()
err_console = Console(stderr=True)

BackendOpt = Annotated[str | None, typer.Option("--backend", help="sycl | cpp | cuda")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON object")]
StoreOpt = Annotated[Path | None, typer.Option("--store", help="run store directory")]


def _settings(**overrides) -> Settings:
    return Settings(**{k: v for k, v in overrides.items() if v is not None})


def _fail(exc: Exception) -> None:
    err_console.print(f"[red]error:[/red] {exc}")
    raise typer.Exit(2)


@app.callback()
def main(verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


@app.command("eval")
def eval_cmd(task: Path, candidate: Path, backend: BackendOpt = None, json_out: JsonOpt = False):
    """Verify a candidate module against a task and time it against PyTorch eager."""
    from kernelwright.report.console import print_eval
    from kernelwright.spec import Candidate, Task
    from kernelwright.tools.evaluate import evaluate

    try:
        result = evaluate(
            Task.from_path(task), Candidate.from_file(candidate, backend), settings=_settings()
        )
    except KernelwrightError as exc:
        _fail(exc)
    summary = result.summary()
    if json_out:
        print(json.dumps(summary))
    else:
        print_eval(console, summary)
    raise typer.Exit(0 if result.correct else 1)


@app.command()
def doctor(json_out: JsonOpt = False) -> None:
    """List every backend, whether it works here, and the fix for anything missing."""
    from kernelwright.report.console import status_table
    from kernelwright.tools.backends.doctor import doctor as probe

    statuses = probe(_settings())
    if json_out:
        print(json.dumps([s.model_dump() | {"usable": s.usable} for s in statuses]))
    else:
        console.print(status_table(statuses))


LlmUrl = Annotated[str | None, typer.Option("--llm-base-url", help="OpenAI-compatible endpoint")]
LlmModel = Annotated[str | None, typer.Option("--llm-model", help="model name; none = offline")]
LlmKeyEnv = Annotated[
    str | None, typer.Option("--llm-api-key-env", help="NAME of the env var holding the key")
]
MaxTokens = Annotated[int | None, typer.Option("--max-tokens", help="LLM token budget of the run")]
MaxCost = Annotated[float | None, typer.Option("--max-cost", help="LLM cost budget, USD")]
LlmTimeout = Annotated[float | None, typer.Option("--llm-timeout", help="seconds per request")]
LlmRetries = Annotated[int | None, typer.Option("--llm-max-retries")]


@app.command()
def optimize(
    task: Path,
    backend: BackendOpt = None,
    budget: Annotated[int | None, typer.Option(help="candidate evaluations")] = None,
    time_limit: Annotated[float | None, typer.Option("--time-limit", help="seconds")] = None,
    run_id: Annotated[str | None, typer.Option("--run-id")] = None,
    store: StoreOpt = None,
    json_out: JsonOpt = False,
    llm_base_url: LlmUrl = None,
    llm_model: LlmModel = None,
    llm_api_key_env: LlmKeyEnv = None,
    max_tokens: MaxTokens = None,
    max_cost: MaxCost = None,
    llm_timeout: LlmTimeout = None,
    llm_max_retries: LlmRetries = None,
) -> None:
    """Optimise a task end to end: plan, write kernels, verify, time, decide; checkpointed."""
    from kernelwright.agents.llm import LLMSettings
    from kernelwright.graphs.runner import start_run

    settings = _settings(backend=backend, budget=budget, time_limit_s=time_limit)
    given = {
        "base_url": llm_base_url,
        "model": llm_model,
        "api_key_env": llm_api_key_env,
        "max_tokens": max_tokens,
        "max_cost": max_cost,
        "timeout_s": llm_timeout,
        "max_retries": llm_max_retries,
    }
    try:
        llm = LLMSettings(**{k: v for k, v in given.items() if v is not None})
    except ValueError as exc:
        _fail(exc)
    _run(
        lambda obs: start_run(task, settings, run_id=run_id, store=store, observer=obs, llm=llm),
        settings.budget,
        json_out,
    )


@app.command()
def resume(run_id: str, store: StoreOpt = None, json_out: JsonOpt = False) -> None:
    """Continue a run from its last checkpoint."""
    from kernelwright.graphs.runner import resume_run

    settings = _settings()
    _run(lambda obs: resume_run(run_id, settings, store=store, observer=obs), None, json_out)


def _run(start, budget: int | None, json_out: bool) -> None:
    from kernelwright.report.console import print_report
    from kernelwright.report.progress import RunProgress

    try:
        if json_out:
            report = start(None)
        else:
            with RunProgress(console, budget) as progress:
                report = start(progress.observe)
    except KernelwrightError as exc:
        _fail(exc)
    if json_out:
        print(report.model_dump_json())
    else:
        print_report(console, report)


@app.command()
def runs(store: StoreOpt = None, json_out: JsonOpt = False) -> None:
    """List runs: id, task, status, best speedup, evaluations, started, updated."""
    from kernelwright.graphs.runner import store_root
    from kernelwright.graphs.store import RunStore
    from kernelwright.report.console import runs_table

    runs_store = RunStore(store_root(_settings(), store))
    metas = [runs_store.meta(r) for r in runs_store.run_ids()]
    if json_out:
        print(json.dumps(metas))
    else:
        console.print(runs_table(metas))


@app.command()
def show(
    run_id: str,
    store: StoreOpt = None,
    archive: Annotated[bool, typer.Option("--archive", help="print the MAP-Elites grid")] = False,
) -> None:
    """Print a run's best kernel, its evidence, and the history of decisions."""
    from kernelwright.report.show import print_run

    try:
        print_run(console, run_id, _settings(), store, archive=archive)
    except KernelwrightError as exc:
        _fail(exc)


@app.command()
def demo(
    budget: Annotated[int, typer.Option(help="evaluations for the optimise step")] = 12,
) -> None:
    """The main job on the embedded default: evaluate every example candidate, then optimise an
    L2 fusion."""
    from kernelwright.report.demo import run_demo

    try:
        run_demo(console, _settings(budget=budget))
    except KernelwrightError as exc:
        _fail(exc)


@app.command()
def trace(
    workload: str,
    out: Annotated[Path, typer.Option("--out", help="trace directory to write")],
    size: Annotated[
        list[str] | None, typer.Option("--size", help="workload parameter NAME=VALUE (repeat)")
    ] = None,
    cta_every: Annotated[int, typer.Option(help="trace every k-th CTA (bounds the size)")] = 1,
) -> None:
    """Run a CUDA workload on the PTX emulator and write an Accel-Sim v5 trace directory."""
    from kernelwright.report.gpusim import run_trace

    try:
        run_trace(console, workload, out, _parse_params(size or []), cta_every, _settings())
    except (KernelwrightError, ValueError) as exc:
        _fail(exc)


@app.command()
def simulate(
    trace_dir: Path,
    gpu: Annotated[
        str, typer.Option(help="turing | ampere | ada | hopper | a100 | ...")
    ] = "ampere",
    json_out: JsonOpt = False,
) -> None:
    """Per-kernel and total cycles of a trace directory on the reference timing model."""
    from kernelwright.report.gpusim import print_simulation
    from kernelwright.tools.gpusim.timing import simulate_trace_dir

    try:
        timings = simulate_trace_dir(trace_dir, gpu)
    except (KernelwrightError, ValueError) as exc:
        _fail(exc)
    if json_out:
        total = sum(t.cycles for t in timings)
        kernels = [t.model_dump() for t in timings]
        print(json.dumps({"gpu": gpu, "total_cycles": total, "kernels": kernels}))
    else:
        print_simulation(console, timings)


def _parse_params(pairs: list[str]) -> dict[str, int | float | str]:
    params: dict[str, int | float | str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise typer.BadParameter(
                f"--size expects NAME=VALUE, got {pair!r} (e.g. --size n=256)"
            )
        for cast in (int, float):
            try:
                params[name] = cast(value)
                break
            except ValueError:
                continue
        else:
            params[name] = value
    return params


if __name__ == "__main__":
    app()
