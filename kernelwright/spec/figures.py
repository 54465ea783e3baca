"""The sentences every surface (CLI, JSON readers, chat, MCP, show) uses for a run's verdict
and its figures: one wording, so no surface can call a slower kernel a win.

Example:
    >>> verdict_sentence("keep_pytorch", 0.38, ref_ms=1.2, cand_ms=3.16)
    'keep PyTorch (0.38x): the fastest correct kernel is slower than PyTorch eager (eager 1.200 ms, kernel 3.160 ms)'
"""  # noqa: E501

from __future__ import annotations

from typing import Any

from kernelwright.spec.reference import answer_of, chosen_label
from kernelwright.spec.result import Verdict, verdict_for


def ms_text(ms: float | None) -> str:
    if ms is None:
        return "?"
    return f"{ms:.3f} ms" if ms < 100 else f"{ms:.0f} ms"


def medians_text(ref_ms: float | None, cand_ms: float | None,
                 low: float | None = None, high: float | None = None) -> str:
    """``eager 1.200 ms, kernel 0.800 ms, spread 1.40-1.60x`` (what is known of it)."""
    parts = []
    if ref_ms is not None or cand_ms is not None:
        parts.append(f"eager {ms_text(ref_ms)}, kernel {ms_text(cand_ms)}")
    if low is not None and high is not None:
        parts.append(f"spread {low:.2f}-{high:.2f}x")
    return ", ".join(parts)


def verdict_sentence(verdict: str, speedup: float | None, *, ref_ms: float | None = None,
                     cand_ms: float | None = None, low: float | None = None,
                     high: float | None = None) -> str:
    """What the user should do, with the figures behind it."""
    figures = medians_text(ref_ms, cand_ms, low, high)
    tail = f" ({figures})" if figures else ""
    if verdict == Verdict.FASTER:
        return f"use the kernel: {speedup:.2f}x faster than PyTorch eager{tail}"
    if verdict == Verdict.KEEP_PYTORCH:
        ratio = f" ({speedup:.2f}x)" if speedup is not None else ""
        how = "slower than" if speedup is not None and speedup < 1.0 else "not faster than"
        return f"keep PyTorch{ratio}: the fastest correct kernel is {how} PyTorch eager{tail}"
    return "keep PyTorch: no correct kernel was found"


def compile_sentence(compile_ms: float | None, cand_ms: float | None,
                     recompiles: int | None = None) -> str | None:
    """torch.compile beside the kernel, or None when it was not timed."""
    if compile_ms is None or not cand_ms:
        return None
    ratio = compile_ms / cand_ms
    again = f"; recompiles: {recompiles}" if recompiles is not None else ""
    if ratio > 1.0:
        return (f"torch.compile {ms_text(compile_ms)}: the kernel is {ratio:.2f}x faster than "
                f"torch.compile{again}")
    return (f"torch.compile {ms_text(compile_ms)}: the kernel is slower than torch.compile "
            f"({ratio:.2f}x){again}")


def best_figures(best: Any, reference: Any = None) -> dict[str, Any]:
    """The verdict and the medians behind a run's best kernel (the fields every surface
    shows). With ``reference`` (the reference itself measured as a candidate), ``answer``
    says which the run chose (``spec.reference.answer_of``): a kernel that does not beat it is
    "keep PyTorch" even when its ratio over the eager runner was above 1."""
    verdict = verdict_for(best is not None, best.speedup if best else None)
    answer = answer_of(best, reference)
    if verdict == Verdict.FASTER and answer is not best:
        verdict = Verdict.KEEP_PYTORCH
    chosen = {"answer": chosen_label(answer),
              "reference_candidate_ms": reference.candidate_ms if reference else None}
    if best is None:
        return {"verdict": verdict.value, **chosen}
    vs_compile = (best.compile_ms / best.candidate_ms
                  if best.compile_ms and best.candidate_ms else None)
    return {
        "verdict": verdict.value,
        "reference_ms": best.reference_ms,
        "candidate_ms": best.candidate_ms,
        "compile_ms": best.compile_ms,
        "speedup_vs_compile": vs_compile,
        "compile_recompiles": best.compile_recompiles,
        "remeasured": best.remeasured,
        **chosen,
    }
