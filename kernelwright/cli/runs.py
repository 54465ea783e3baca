"""`optimize`, `resume`, `runs`, `show`, `demo`: the optimisation loop and its run store."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Annotated

import typer

from kernelwright.cli._app import (
    BackendOpt,
    JsonOpt,
    StoreOpt,
    _fail,
    _settings,
    app,
    console,
)
from kernelwright.errors import ChatError, KernelwrightError

LlmUrl = Annotated[str | None, typer.Option("--llm-base-url", help="OpenAI-compatible endpoint")]
LlmModel = Annotated[str | None, typer.Option("--llm-model", help="model name; none = offline")]
LlmKeyEnv = Annotated[
    str | None, typer.Option("--llm-api-key-env", help="NAME of the env var holding the key")
]
MaxTokens = Annotated[int | None, typer.Option("--max-tokens", help="LLM token budget of the run")]
MaxCost = Annotated[float | None, typer.Option("--max-cost", help="LLM cost budget, USD")]
LlmTimeout = Annotated[float | None, typer.Option("--llm-timeout", help="seconds per request")]
LlmRetries = Annotated[int | None, typer.Option("--llm-max-retries")]
MaxRequests = Annotated[
    int | None,
    typer.Option(
        "--max-llm-requests",
        help="LLM requests per run (default: budget x 10, even with no token or cost limit)",
    ),
]


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
    max_llm_requests: MaxRequests = None,
) -> None:
    """Optimise a task end to end: plan, write kernels, verify, time, decide; checkpointed."""
    import kernelwright
    from kernelwright.config import LLMSettings

    given = {
        "base_url": llm_base_url,
        "model": llm_model,
        "api_key_env": llm_api_key_env,
        "max_tokens": max_tokens,
        "max_cost": max_cost,
        "timeout_s": llm_timeout,
        "max_retries": llm_max_retries,
        "max_requests": max_llm_requests,
    }
    try:
        llm = LLMSettings(**{k: v for k, v in given.items() if v is not None})
    except ValueError as exc:
        _fail(exc)
    settings = _settings(backend=backend, budget=budget, time_limit_s=time_limit, llm=llm)
    _run(
        lambda obs: kernelwright.optimize(
            task, settings, run_id=run_id, store=store, observer=obs
        ),
        settings.budget,
        json_out,
    )


@app.command()
def resume(run_id: str, store: StoreOpt = None, json_out: JsonOpt = False) -> None:
    """Continue a run (or a campaign) from its last checkpoint."""
    import kernelwright
    from kernelwright.graphs.runner import store_root
    from kernelwright.graphs.store import RunStore

    settings = _settings()
    with contextlib.suppress(KernelwrightError):  # an unknown id fails below with its fix
        kind = RunStore(store_root(settings, store)).meta(run_id).get("kind")
        if kind == "campaign":
            from kernelwright.cli.campaign import resume_campaign_command

            return resume_campaign_command(run_id, store, json_out)
        if kind == "chat":
            _fail(ChatError(f"{run_id} is a chat thread: `kernelwright chat --resume {run_id}`"))
    _run(
        lambda obs: kernelwright.resume(run_id, settings, store=store, observer=obs),
        None,
        json_out,
    )


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
    if not report.correct:
        raise typer.Exit(1)  # no correct kernel: a script must not read this as success


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
    transcript: Annotated[
        bool, typer.Option("--transcript", help="print every LLM request and reply instead")
    ] = False,
) -> None:
    """Print a run's best kernel, its evidence, and the history of decisions."""
    from kernelwright.report.show import print_run
    from kernelwright.report.transcript import print_transcript

    try:
        if transcript:
            print_transcript(console, run_id, _settings(), store)
            return
        print_run(console, run_id, _settings(), store, archive=archive)
    except KernelwrightError as exc:
        _fail(exc)


@app.command()
def demo(
    budget: Annotated[int, typer.Option(help="evaluations for the optimise step")] = 12,
) -> None:
    """The main job on the embedded default: evaluate every example candidate, then optimise an
    L2 fusion."""
    import kernelwright
    from kernelwright.graphs.demo import DEMO_TASK, evaluate_examples
    from kernelwright.report.demo import print_examples

    settings = _settings(budget=budget)
    try:
        with console.status("evaluating example candidates") as status:
            rows = evaluate_examples(settings, lambda name: status.update(f"evaluating {name}"))
    except KernelwrightError as exc:
        _fail(exc)
    print_examples(console, rows)
    console.rule(f"optimising {DEMO_TASK.stem} (budget {settings.budget} evaluations)")
    _run(lambda obs: kernelwright.optimize(DEMO_TASK, settings, observer=obs), budget, False)
