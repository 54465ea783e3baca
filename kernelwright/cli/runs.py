"""`optimize`, `resume`, `runs`, `show`, `demo`: the optimisation loop and its run store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from kernelwright.cli._app import (
    BackendOpt,
    BudgetOpt,
    ClusterOpt,
    JsonOpt,
    SpacesOpt,
    StoreOpt,
    _fail,
    _settings,
    app,
    check_file,
    console,
    llm_settings,
)
from kernelwright.errors import ChatError, KernelwrightError

TASK_EXAMPLE = "examples/tasks/l1_gelu.py"
LlmUrl = Annotated[str | None, typer.Option(
    "--llm-base-url", help="OpenAI-compatible endpoint", show_default="https://api.openai.com/v1")]
LlmModel = Annotated[str | None, typer.Option(
    "--llm-model", help="model name", show_default="none: offline policies, no LLM")]
LlmKeyEnv = Annotated[str | None, typer.Option(
    "--llm-api-key-env", help="NAME of the env var holding the key",
    show_default="OPENAI_API_KEY")]
MaxTokens = Annotated[int | None, typer.Option(
    "--max-tokens", help="LLM token budget of the run", show_default="no limit")]
MaxCost = Annotated[float | None, typer.Option(
    "--max-cost", help="LLM cost budget, USD", show_default="no limit")]
LlmTimeout = Annotated[float | None, typer.Option(
    "--llm-timeout", help="seconds per LLM request", show_default="120")]
LlmRetries = Annotated[int | None, typer.Option(
    "--llm-max-retries", help="retries on 429/5xx/timeouts", show_default="4")]
MaxRequests = Annotated[int | None, typer.Option(
    "--max-llm-requests", help="LLM requests per run, even with no token or cost limit",
    show_default="budget x 10")]  # fmt: skip


@app.command()
def optimize(
    task: Path,
    backend: BackendOpt = None,
    budget: BudgetOpt = None,
    time_limit: Annotated[float | None, typer.Option(
        "--time-limit", help="wall-clock seconds of the run", show_default="none")] = None,
    run_id: Annotated[str | None, typer.Option(
        "--run-id", help="name the run (continue it if it exists)", show_default="TASK-DATE-ID")]
    = None,
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
    spaces: SpacesOpt = None,
    cluster: ClusterOpt = None,
) -> None:
    """Optimise a task end to end: plan, write kernels, verify, time, decide; checkpointed."""
    import kernelwright

    check_file(task, "task", TASK_EXAMPLE)
    llm = llm_settings(base_url=llm_base_url, model=llm_model, api_key_env=llm_api_key_env,
                       max_tokens=max_tokens, max_cost=max_cost, timeout_s=llm_timeout,
                       max_retries=llm_max_retries, max_requests=max_llm_requests)  # fmt: skip
    settings = _settings(backend=backend, budget=budget, time_limit_s=time_limit, llm=llm,
                         spaces=spaces, cluster=cluster)
    _run(
        lambda obs: kernelwright.optimize(
            task, settings, run_id=run_id, store=store, observer=obs
        ),
        settings.budget,
        json_out,
    )


@app.command()
def resume(
    run_id: str,
    store: StoreOpt = None,
    json_out: JsonOpt = False,
    hours: Annotated[float | None, typer.Option(
        "--hours", help="campaigns: extend the time limit to H hours from now (also one that "
        "finished on its time limit)", show_default="keep the campaign's deadline")] = None,
) -> None:
    """Continue a run (or a campaign) from its last checkpoint."""
    import kernelwright
    from kernelwright.graphs.store import RunStore, store_root

    settings = _settings()
    try:  # an unknown id ends here, with its fix, before any work
        meta = RunStore(store_root(settings, store)).meta(run_id)
    except KernelwrightError as exc:
        _fail(exc)
    if meta.get("kind") == "campaign":
        from kernelwright.cli.campaign import resume_campaign_command

        return resume_campaign_command(run_id, store, json_out, hours)
    if meta.get("kind") == "chat":
        _fail(ChatError(f"{run_id} is a chat thread: `kernelwright chat --resume {run_id}`"))
    if hours is not None:
        _fail(ValueError(f"--hours extends campaigns; {run_id} is a single run: resume it "
                         "without --hours (its budget bounds it)"))  # fmt: skip
    _run(
        lambda obs: kernelwright.resume(run_id, settings, store=store, observer=obs),
        meta.get("budget"),
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
    """List runs: id, task, backend, status, best speedup, verdict, evaluations, started, time
    taken (plain text, never truncated: copy an id into `show` or `report`)."""
    from kernelwright.graphs.store import RunStore, store_root
    from kernelwright.report.console import runs_text

    try:
        runs_store = RunStore(store_root(_settings(), store))
        metas = [runs_store.meta(r) for r in runs_store.run_ids()]
    except KernelwrightError as exc:
        _fail(exc)
    if json_out:
        print(json.dumps(metas))
    else:
        print(runs_text(metas), flush=True)


@app.command()
def show(
    run_id: str,
    store: StoreOpt = None,
    archive: Annotated[bool, typer.Option("--archive", help="print the MAP-Elites grid")] = False,
    configs: Annotated[
        bool, typer.Option("--configs", help="list every evaluated configuration instead")
    ] = False,
    csv_out: Annotated[bool, typer.Option("--csv", help="with --configs: CSV to stdout")] = False,
    transcript: Annotated[
        bool, typer.Option("--transcript", help="print every LLM request and reply instead")
    ] = False,
) -> None:
    """Print a run's best kernel, its evidence, and the history of decisions."""
    from kernelwright.report.show import print_run
    from kernelwright.report.transcript import print_transcript

    if configs or csv_out:
        return _show_configs(run_id, store, csv_out)
    try:
        if transcript:
            print_transcript(console, run_id, _settings(), store)
            return
        print_run(console, run_id, _settings(), store, archive=archive)
    except KernelwrightError as exc:
        _fail(exc)


def _show_configs(run_id: str, store: Path | None, csv_out: bool) -> None:
    """Every evaluated configuration: parameters, verdict, speedup, ms (table or CSV)."""
    import sys

    from kernelwright.graphs.runner import store_root
    from kernelwright.report.configs import config_rows, text_table, write_csv
    from kernelwright.tools.peaks import cached_peaks, peaks_dir

    settings = _settings()
    try:
        root = store_root(settings, store)
        columns, rows = config_rows(root, run_id, cached_peaks(peaks_dir(settings)))
    except KernelwrightError as exc:
        _fail(exc)
    if csv_out:
        write_csv(sys.stdout, columns, rows)
    else:
        print(text_table(columns, rows) if rows else f"{run_id}: nothing evaluated yet")


@app.command()
def demo(
    budget: Annotated[int, typer.Option(help="evaluations for the optimise step", min=1)] = 12,
    spaces: SpacesOpt = None,
) -> None:
    """The main job on the embedded default: evaluate every example candidate, then optimise an
    L2 fusion."""
    import kernelwright
    from kernelwright.graphs.demo import DEMO_TASK, evaluate_examples
    from kernelwright.report.demo import print_examples

    settings = _settings(budget=budget, spaces=spaces)
    try:
        with console.status("evaluating example candidates") as status:
            rows = evaluate_examples(settings, lambda name: status.update(f"evaluating {name}"))
    except KernelwrightError as exc:
        _fail(exc)
    print_examples(console, rows)
    console.rule(f"optimising {DEMO_TASK.stem} (budget {settings.budget} evaluations)")
    _run(lambda obs: kernelwright.optimize(DEMO_TASK, settings, observer=obs), budget, False)
