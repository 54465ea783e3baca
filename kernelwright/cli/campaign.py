"""`campaign`: many tasks overnight in one checkpointed run, and the morning report at the end."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kernelwright.cli._app import (
    BackendOpt,
    ClusterOpt,
    JsonOpt,
    SpacesOpt,
    StoreOpt,
    _fail,
    _settings,
    app,
    llm_settings,
)
from kernelwright.cli.runs import LlmKeyEnv, LlmModel, LlmUrl, MaxCost, MaxTokens
from kernelwright.errors import KernelwrightError


@app.command()
def campaign(
    task_dir: Path,
    hours: Annotated[float, typer.Option("--hours", help="wall-clock limit of the campaign",
                                         min=0.0)],
    budget_per_task: Annotated[
        int | None, typer.Option("--budget-per-task", help="evaluations per task at most",
                                 min=1, show_default="24 (the run budget)")
    ] = None,
    slice_evals: Annotated[int, typer.Option("--slice", help="evaluations per bandit pull",
                                             min=1)] = 2,
    max_tokens: MaxTokens = None,
    max_cost: MaxCost = None,
    backend: BackendOpt = None,
    campaign_id: Annotated[str | None, typer.Option("--campaign-id")] = None,
    store: StoreOpt = None,
    cluster: ClusterOpt = None,
    parallel: Annotated[
        int | None, typer.Option("--parallel", help="tasks sliced at once", min=1,
                                 show_default="one per --cluster worker, else 1")
    ] = None,
    json_out: JsonOpt = False,
    llm_base_url: LlmUrl = None,
    llm_model: LlmModel = None,
    llm_api_key_env: LlmKeyEnv = None,
    spaces: SpacesOpt = None,
) -> None:
    """Optimise every task file of TASK_DIR; a bandit (sliding-window UCB on improvement per
    evaluation) gives the evaluations to the tasks that improve. Resume with `kernelwright resume
    CAMPAIGN_ID`."""
    from kernelwright.graphs.campaign_run import start_campaign
    from kernelwright.graphs.store import store_root

    if hours <= 0:
        _fail(ValueError(f"--hours {hours:g} is not valid: give a positive number of hours"))
    if not task_dir.is_dir():
        what = "is a file" if task_dir.exists() else "does not exist"
        _fail(FileNotFoundError(f"task folder {task_dir} {what}: pass a DIRECTORY of task "
                                "files, e.g. examples/tasks (one task: `kernelwright optimize`)"))
    llm = llm_settings(base_url=llm_base_url, model=llm_model, api_key_env=llm_api_key_env,
                       max_tokens=max_tokens, max_cost=max_cost)  # fmt: skip
    settings = _settings(backend=backend, llm=llm, spaces=spaces, cluster=cluster)
    try:
        root = store_root(settings, store)
        summary = start_campaign(
            task_dir, settings, root, hours=hours, budget_per_task=budget_per_task,
            slice_evals=slice_evals, max_tokens=max_tokens, max_cost=max_cost,
            campaign_id=campaign_id, observer=None if json_out else _progress,
            parallel=parallel,
        )  # fmt: skip
    except KernelwrightError as exc:
        _fail(exc)
    finish(summary, root, json_out)


def resume_campaign_command(
    campaign_id: str, store: Path | None, json_out: bool, hours: float | None = None
) -> None:
    """`kernelwright resume CAMPAIGN_ID [--hours H]` lands here for campaigns."""
    from kernelwright.graphs.campaign_run import resume_campaign
    from kernelwright.graphs.store import store_root

    settings = _settings()
    root = store_root(settings, store)
    try:
        summary = resume_campaign(
            campaign_id, settings, root, observer=None if json_out else _progress, hours=hours
        )
    except KernelwrightError as exc:
        _fail(exc)
    finish(summary, root, json_out)


def _progress(event: str, data: dict[str, Any]) -> None:
    if event == "slice":
        before = data.get("spent_before", 0)
        print(f"[campaign] {Path(data['task']).stem}: a slice of up to "
              f"{data['target'] - before} evaluations ({before} so far, "
              f"{data.get('budget_per_task', '?')} at most)", flush=True)  # fmt: skip
    elif event == "sliced":
        best = f"{data['best_after']:.2f}x" if data["best_after"] else "no correct kernel"
        print(f"[campaign] {Path(data['task']).stem}: {data['evals']} evaluations in this "
              f"slice ({data['spent']} in all), best {best}, gain {data['gain']:.2f} doublings",
              flush=True)  # fmt: skip
    elif event == "finished":
        print(f"[campaign] finished: {data['stop_reason']}", flush=True)


def finish(summary, root: Path, json_out: bool) -> None:
    """Write the morning report and print the summary (plain text, or one JSON object)."""
    from kernelwright.graphs.campaign_metrics import markdown_summary

    html, md, note = write_morning_report(summary, root)
    if json_out:
        out = summary.model_dump(mode="json")
        print(__import__("json").dumps({**out, "report_html": html, "report_md": md}))
        return
    print(markdown_summary(summary), flush=True)
    print(f"morning report: {html or '(no HTML report)'} and {md}", flush=True)
    if note:
        print(note, flush=True)


def write_morning_report(summary, root: Path) -> tuple[str | None, str, str | None]:
    """The morning report: ``kernelwright.report.html.write_report`` over the campaign's task
    runs (HTML + Markdown), with the campaign's own summary (KernelBench metrics beside ours)
    appended to the Markdown.

    Returns (html path or None, markdown path, a note when no HTML was written).
    """
    from kernelwright.graphs.campaign_metrics import markdown_summary
    from kernelwright.graphs.store import RunStore
    from kernelwright.report.html import write_report
    from kernelwright.tools.peaks import cached_peaks, peaks_dir

    html_path, md_path = RunStore(root).report_paths(summary.campaign_id)
    if not summary.run_ids:
        md_path.write_text(markdown_summary(summary))
        return None, str(md_path), "note: no task was evaluated; wrote the Markdown summary only"
    # The campaign's runs measured this machine's peaks (the profiler's roofs): reuse them.
    peaks = cached_peaks(peaks_dir(_settings()))
    write_report(root, summary.run_ids, html_path, md_path, peaks=peaks)
    with md_path.open("a") as fh:
        fh.write("\n" + markdown_summary(summary))
    return str(html_path), str(md_path), None
