"""Application mode: optimise the kernels that carry a workload's time, and say what it buys.

Given a trace folder of a whole application, the sampler picks representatives and their
weights; each kernel name's share of the projected time is

    share_k = sum_{s: name(s) = k} w_s t_s / sum_s w_s t_s

Kernels are ranked by share; the top ones (at most ``top``, stopping once ``coverage`` of the time
is covered) are the optimisation targets. With per-kernel speedups ``S_k`` (measured by the
optimisation loop, or hypothesised), the whole-application speedup follows Amdahl's law:

    S_app = 1 / (sum_k share_k / S_k),     S_k = 1 for kernels left alone

Example:
    >>> plan = plan_application("traces/phi2", top=3)  # doctest: +SKIP
    >>> [t.name for t in plan.targets], plan.speedup({"attn_out": 2.0})  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kernelwright.config import Settings
from kernelwright.tools.sampler import SampleReport, sample_trace_dir


@dataclass(frozen=True)
class KernelShare:
    """One kernel name's part of the projected application time."""

    name: str
    share: float
    invocations: float  # invocations its representatives stand for
    projected_cycles: float


@dataclass
class ApplicationPlan:
    """Ranked kernels of an application, the targets to optimise, and the projected total."""

    workload: str
    method: str
    ranking: list[KernelShare]
    targets: list[KernelShare]
    projected_cycles: float
    report: SampleReport | None = field(default=None, repr=False)

    def speedup(self, kernel_speedups: Mapping[str, float]) -> float:
        """Whole-application speedup (Amdahl) if kernel ``k`` gets ``kernel_speedups[k]``."""
        return application_speedup(self.ranking, kernel_speedups)


def rank_kernels(report: SampleReport) -> list[KernelShare]:
    """Kernel names by weighted time share of ``report``'s projection, largest first."""
    agg: dict[str, list[float]] = {}
    for r in report.representatives:
        cyc, inv = agg.setdefault(r.name, [0.0, 0.0])
        agg[r.name] = [cyc + r.weight * r.cycles, inv + r.weight]
    total = sum(c for c, _ in agg.values()) or 1.0
    ranked = [KernelShare(k, c / total, n, c) for k, (c, n) in agg.items()]
    return sorted(ranked, key=lambda s: (-s.share, s.name))


def pick_targets(ranking: list[KernelShare], top: int = 3,
                 coverage: float = 0.8) -> list[KernelShare]:  # fmt: skip
    """The largest shares, at most ``top``, stopping once ``coverage`` of the time is covered."""
    out, covered = [], 0.0
    for k in ranking:
        if len(out) >= top or covered >= coverage:
            break
        out.append(k)
        covered += k.share
    return out


def application_speedup(ranking: list[KernelShare],
                        kernel_speedups: Mapping[str, float]) -> float:  # fmt: skip
    """Amdahl: 1 / sum_k share_k / S_k (kernels not named keep S_k = 1).

    Raises:
        ValueError: a speedup is not positive, or names a kernel the application does not have.
    """
    names = {k.name for k in ranking}
    unknown = set(kernel_speedups) - names
    if unknown:
        raise ValueError(f"kernel(s) {sorted(unknown)} are not in this application; it has "
                         f"{sorted(names)}")  # fmt: skip
    if any(s <= 0 for s in kernel_speedups.values()):
        raise ValueError("kernel speedups must be positive (1.0 = unchanged)")
    return 1.0 / sum(k.share / kernel_speedups.get(k.name, 1.0) for k in ranking)


def plan_application(trace_dir: str | Path, *, method: str = "gcl", gpu: str = "rtx2080ti",
                     top: int = 3, coverage: float = 0.8,
                     settings: Settings | None = None, **options) -> ApplicationPlan:  # fmt: skip
    """Sample ``trace_dir``, rank its kernels by weighted time share, pick the targets."""
    report = sample_trace_dir(trace_dir, method, gpu=gpu, settings=settings, **options)
    ranking = rank_kernels(report)
    return ApplicationPlan(report.workload, method, ranking, pick_targets(ranking, top, coverage),
                           report.projected_cycles, report)  # fmt: skip


@dataclass(frozen=True)
class TargetOutcome:
    """What optimising one target kernel gave (``speedup`` None: not optimised, or no correct
    kernel; the kernel then counts as unchanged, S = 1)."""

    kernel: str
    share: float
    task: str | None
    run_id: str | None
    speedup: float | None
    note: str


@dataclass
class ApplicationResult:
    """An application plan with the outcome of optimising its targets."""

    plan: ApplicationPlan
    outcomes: list[TargetOutcome]

    def kernel_speedups(self) -> dict[str, float]:
        """Per target, the speedup adopted: the best correct kernel's when it beats the original,
        else 1 (a slower kernel would not be deployed)."""
        return {o.kernel: max(o.speedup, 1.0) for o in self.outcomes if o.speedup is not None}

    @property
    def speedup(self) -> float:
        """Whole-application estimate (Amdahl over the projected shares)."""
        return self.plan.speedup(self.kernel_speedups())

    def as_dict(self) -> dict:
        return {
            "workload": self.plan.workload, "method": self.plan.method,
            "projected_cycles": self.plan.projected_cycles,
            "ranking": [vars(k) for k in self.plan.ranking],
            "targets": [vars(o) for o in self.outcomes],
            "application_speedup": self.speedup,
        }


def optimize_application(plan: ApplicationPlan, tasks: Mapping[str, str | Path],
                         settings: Settings, run=None) -> ApplicationResult:  # fmt: skip
    """Optimise every target of ``plan`` that ``tasks`` gives a task file for, in share order,
    then every other kernel ``tasks`` names (below the coverage or past ``top``: a kernel the
    user gave a task for is optimised anyway, and its note says so).

    ``tasks`` maps a kernel name of the application to a KernelBench-format task that does the
    same work; the run's speedup over the task's reference stands in for the kernel's speedup in
    the application (an estimate: it assumes the ratio carries over to the traced GPU). ``run``
    is ``graphs.runner.start_run`` unless given (tests pass a stand-in).

    Raises:
        ValueError: ``tasks`` names a kernel the application does not have.
    """
    if run is None:
        from kernelwright.graphs.runner import start_run as run
    names = {k.name for k in plan.ranking}
    unknown = sorted(set(tasks) - names)
    if unknown:
        raise ValueError(f"--task names kernel(s) {unknown} that {plan.workload} does not run; "
                         f"its kernels are {sorted(names)}")  # fmt: skip
    outcomes = []
    chosen = {t.name for t in plan.targets}
    extra = [k for k in plan.ranking if k.name in tasks and k.name not in chosen]
    for target in [*plan.targets, *extra]:
        path = tasks.get(target.name)
        if path is None:
            outcomes.append(TargetOutcome(target.name, target.share, None, None, None,
                                          f"no task file given (--task {target.name}=FILE)"))
            continue
        report = run(Path(path), settings)
        speedup = report.best_speedup if report.correct else None
        note = report.reason or report.status
        if target.name not in chosen:
            note = (f"below the coverage or past --top ({target.share:.1%} of the time), "
                    f"optimised because --task names it; {note}")
        outcomes.append(TargetOutcome(target.name, target.share, str(path), report.run_id,
                                      speedup, note))  # fmt: skip
    return ApplicationResult(plan, outcomes)
