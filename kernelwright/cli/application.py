"""`app`: application mode — rank a traced workload's kernels, optimise the top ones, estimate
the whole-application speedup."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from kernelwright.cli._app import (
    DEFAULT_GPU,
    BackendOpt,
    BudgetOpt,
    GpuOpt,
    JsonOpt,
    _fail,
    _settings,
    app,
    check_file,
    check_gpu,
    check_trace_dir,
    console,
    print_json,
)
from kernelwright.cli.sample import Method
from kernelwright.errors import KernelwrightError

TaskOpt = Annotated[
    list[str] | None,
    typer.Option("--task", help="KERNEL=TASK_FILE: a task doing that kernel's work (repeat)"),
]


def parse_task_map(items: list[str]) -> dict[str, Path]:
    """``["name=path", ...]`` -> ``{name: path}``; raise naming the malformed item."""
    out: dict[str, Path] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise ValueError(f"--task {item!r} is not KERNEL=TASK_FILE; write e.g. "
                             "--task scale=examples/tasks/l1_gelu.py")
        out[name.strip()] = Path(path.strip())
    return out


@app.command("app")
def application(
    trace_dir: Path,
    task: TaskOpt = None,
    top: Annotated[int, typer.Option(help="optimise at most this many kernels", min=1)] = 3,
    coverage: Annotated[float, typer.Option(
        help="stop adding targets past this time share (0 < coverage <= 1)")] = 0.8,
    budget: BudgetOpt = None,
    backend: BackendOpt = None,
    method: Annotated[Method, typer.Option(help="sampler", case_sensitive=False)] = "gcl",
    gpu: GpuOpt = DEFAULT_GPU,
    json_out: JsonOpt = False,
) -> None:
    """Rank TRACE_DIR's kernels by sampled time share; optimise the targets given a --task."""
    from kernelwright.graphs.application import optimize_application, plan_application

    check_gpu(gpu)
    check_trace_dir(trace_dir)
    if not 0 < coverage <= 1:
        _fail(ValueError(f"--coverage {coverage:g} is not valid: give a share in (0, 1], "
                         "e.g. 0.8"))  # fmt: skip
    try:
        tasks = parse_task_map(task or [])
    except ValueError as exc:
        _fail(exc)
    for name, path in tasks.items():
        check_file(path, f"the task file of kernel {name!r},", "examples/tasks/l1_gelu.py")
    settings = _settings(budget=budget, backend=backend)
    try:
        plan = plan_application(trace_dir, method=method, gpu=gpu, top=top, coverage=coverage,
                                settings=settings)
        result = optimize_application(plan, tasks, settings)
    except (KernelwrightError, ValueError, OSError) as exc:
        _fail(exc)
    if json_out:
        print_json(result.as_dict())
        return
    table = Table(title=Text(f"{plan.workload}: kernels by time share ({method})"))
    for col in ("kernel", "share", "invocations", "target", "speedup", "note"):
        table.add_column(col, justify="left" if col in ("kernel", "note") else "right")
    outcome = {o.kernel: o for o in result.outcomes}
    for k in plan.ranking:
        o = outcome.get(k.name)
        speed = f"{o.speedup:.2f}x" if o and o.speedup is not None else "-"
        table.add_row(Text(k.name), f"{k.share:.1%}", f"{k.invocations:g}",
                      "yes" if o else "", speed, Text(o.note if o else ""))  # fmt: skip
    console.print(table)
    for o in result.outcomes:
        if o.run_id:
            console.print(f"{o.kernel}: run {o.run_id} (kernelwright show {o.run_id})",
                          markup=False, highlight=False, soft_wrap=True)  # fmt: skip
    console.print(
        f"whole-application estimate: {result.speedup:.3f}x (Amdahl over the sampled shares; "
        "each target's speedup over its task's reference is assumed to carry over; kernels "
        "without a correct faster kernel count as unchanged)", markup=False, soft_wrap=True)
