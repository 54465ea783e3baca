"""``kernelwright show RUN_ID``: the best kernel, its evidence, and the decision history."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kernelwright.config import Settings
from kernelwright.graphs.store import RunStore, run_state, store_root
from kernelwright.report.console import aligned, print_verdict, speedup_text
from kernelwright.spec.figures import best_figures
from kernelwright.spec.plan import best_profile
from kernelwright.spec.reference import latest_reference


def print_run(
    console: Console, run_id: str, settings: Settings, store: Path | None, archive: bool = False
) -> None:
    runs = RunStore(store_root(settings, store))
    meta = runs.meta(run_id)
    state = run_state(run_id, settings, store)
    profiles = list(state.get("profiles") or [])
    say = lambda text: console.print(text, markup=False, highlight=False, soft_wrap=True)  # noqa: E731
    say(f"run {run_id} — task {meta['task']} ({meta.get('status')})")
    plan = state.get("plan")
    if plan is not None:
        say(
            f"plan: {plan.operator_class.value}, space {plan.implementation_space.value}, "
            f"backend {plan.backend}\n  strategy: {plan.strategy}\n  why: {plan.rationale}"
        )
        if plan.spaces_line():
            console.print(Text("  " + plan.spaces_line()))
    confirmed = list(state.get("confirmed") or [])
    rows = [("#", "candidate", "origin", "verdict", "speedup [IQR]", "eager / kernel ms",
             "roofline", "flags")]
    reference = state.get("reference")
    numbered = [("ref", reference)] if reference is not None else []
    numbered += [(str(i), p) for i, p in enumerate(profiles, 1)]
    challenged = list(state.get("challenged") or [])
    numbered += [("ch", p) for p in challenged]
    numbered += [("re", p) for p in confirmed]
    for i, p in numbered:
        frac = p.roofline.fraction if p.roofline else None
        rows.append((
            i,
            p.candidate_id,
            f"{p.origin} ({p.space})" if p.space else (p.origin or "-"),
            "correct" if p.correct else f"level {p.level}",
            speedup_text(p.speedup, p.speedup_low, p.speedup_high),
            _ms_pair(p),
            f"{frac:.1%}" if frac else "-",
            ", ".join(p.flags),
        ))  # fmt: skip
    say(aligned(rows))  # plain text, soft-wrapped: ids are never cut, whatever the width
    say("decisions:")
    for i, d in enumerate(state.get("decisions") or [], 1):
        say(f"  {i}. {d.action.value}: {d.reason}")
    if reference is not None:
        say("row 'ref': the reference itself, timed as a candidate (not counted in the budget)")
    if challenged:
        say("rows 'ch': a would-be new best, the incumbent and the reference measured again "
            "during the search (interleaved); the search decided on these")
    if confirmed:
        say("rows 're': the top candidates re-measured before the best was named, "
            "against one reference median")
    again = {p.candidate_id: p for p in challenged}
    best = best_profile([*(again.get(p.candidate_id, p) for p in profiles), *confirmed])
    figures = best_figures(best, latest_reference(state))
    print_verdict(console, SimpleNamespace(
        correct=best is not None, best_speedup=best.speedup if best else None,
        speedup_low=best.speedup_low if best else None,
        speedup_high=best.speedup_high if best else None, **figures))
    if figures["answer"] == "reference":
        say("answer: the reference itself (framework space); the best kernel follows")
    if best is None:
        return
    say(
        f"best: {best.candidate_id} "
        f"{speedup_text(best.speedup, best.speedup_low, best.speedup_high)} "
        f"params {best.params}"
    )
    source = runs.load_candidate(run_id, best.candidate_id).source
    console.rule("source")
    print(source.rstrip("\n"), flush=True)  # unwrapped and uncut: copy it, or pipe it to a pager
    console.rule()
    _print_usage(console, runs, run_id)
    _print_prompt_lineage(console, runs, run_id, best.candidate_id)
    if archive:
        _print_archive(console, runs, run_id)


def _ms_pair(p) -> str:
    if p.reference_ms is None or p.candidate_ms is None:
        return "-"
    return f"{p.reference_ms:.3f} / {p.candidate_ms:.3f}"


def _print_usage(console: Console, runs: RunStore, run_id: str) -> None:
    """Tokens and cost per agent, from the LLM usage ledger (LLM runs only)."""
    saved = runs.load_usage(run_id)
    if saved is None:
        console.print("LLM usage: none (offline policies)")
        return
    from kernelwright.agents.usage import UsageLedger

    ledger = UsageLedger.model_validate_json(saved)
    table = Table(
        "agent",
        "calls",
        "input tokens",
        "output tokens",
        "cost (USD)",
        "malformed",
        title="LLM usage",
    )
    rows = [*ledger.per_agent.items(), ("total", ledger.totals())]
    for agent, u in rows:
        cost = "unknown price" if u.cost_usd is None else f"{u.cost_usd:.4f}"
        table.add_row(
            agent,
            str(u.calls),
            str(u.input_tokens),
            str(u.output_tokens),
            cost,
            f"{u.malformed} ({u.dropped} dropped)",
        )
    console.print(table)


def _print_prompt_lineage(console: Console, runs: RunStore, run_id: str, best_id: str) -> None:
    """The meta-prompt that produced the best kernel and its ancestors (LLM runs only)."""
    path = runs.prompts_path(run_id)
    prompt_id = runs.load_candidate(run_id, best_id).prompt_id
    if not path.exists() or prompt_id is None:
        return
    from kernelwright.agents.metaprompter import PromptArchive

    table = Table(
        "prompt",
        "generation",
        "fitness",
        "uses",
        "parents",
        title=f"prompt lineage of the best kernel ({prompt_id})",
    )
    for row in PromptArchive.load(path).lineage_table(prompt_id):
        table.add_row(
            row["id"],
            *(str(row[k]) for k in ("generation", "fitness", "uses")),
            ", ".join(row["parents"]) or "-",
        )
    console.print(table)


def _print_archive(console: Console, runs: RunStore, run_id: str) -> None:
    path = runs.archive_path(run_id)
    if not path.exists():
        console.print("this run has no MAP-Elites archive (it was not run with the search hook)")
        return
    from kernelwright.tools.evolve.archive import MapElitesArchive

    console.print(MapElitesArchive.load(path).render_grid())
