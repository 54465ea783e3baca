"""The LLM loop against a scripted weak model: prompt cost, and do failures reach the prompts.

A scripted OpenAI-compatible server (``kernelwright.testing.scripted_llm``) plays a weak model.
Its coder replies depend on the prompt text: it looks for the current kernel's row loop
(``for (int u = 0; u < 256; ++u)``, or ``u < KW_S0`` where the prompt names the size) in
the prompt and edits *those* lines, cycling through a
good edit (a new OpenMP chunk size), a compile error (an undeclared ``kw_lane_id``), a wrong
kernel (one row skipped), a reply cut off at the token limit, a module with a Python syntax
error and an edit whose SEARCH text is not in the kernel. Planner and critic get fixed tool
calls. The run uses the real harness on the C++/OpenMP backend (no SYCL device needed).

Printed: LLM requests per evaluation, coder prompt characters (per prompt and total), tokens
per evaluation, and the share of evaluated failures whose key error line reached the next coder
prompt (the issue's goal: 100%).

    PYTHONPATH=. python benchmarks/llm_loop.py [--budget 8] [--task examples/tasks/l1_gelu.py]
                                               [--json out.json]

About 1-3 minutes on two busy cores (each evaluation compiles one C++ module).

Measured with the defaults (budget 8, l1_gelu, cpp) on the development machine, 2026-12-03:

=================================  ==========================  =========================
figure                             before (main at 97381d5)    after (branch llm)
=================================  ==========================  =========================
evaluations / LLM requests         6 / 33 (5.5 per eval.)      8 / 35 (4.4 per eval.)
coder prompt chars, mean / max     26,716 / 35,693             7,865 / 9,060 (-71 %)
all prompt chars, whole run        746,492                     294,872 (-60 %)
tokens per evaluation (chars/4)    32,172                      9,684 (-70 %)
failures reaching the next prompt  0 / 2                       2 / 2
=================================  ==========================  =========================

The request count varies between runs (24-35 after) with where the scripted cycle of behaviours
falls relative to the rounds.

Re-measured after the coder's view became the nominal kernels plus launch sizes (``KW_S<i>``,
``KW_LOCAL_*``; variants written from it), same command, load ~24: be2a99d -> branch llm18:
8 / 24 -> 8 / 22 requests, coder prompt chars mean 7,608 -> 7,591, max 8,855 -> 8,228, all prompt
chars 196,226 -> 196,446, tokens per evaluation 6,441 -> 6,416, failures reaching the next
prompt 2/2 -> 4/4 (before, two more failures had no later coder prompt).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

from kernelwright.config import LLMSettings, Settings  # noqa: E402
from kernelwright.graphs.runner import start_run  # noqa: E402
from kernelwright.graphs.store import RunStore  # noqa: E402
from kernelwright.spec.peaks import MachinePeaks  # noqa: E402
from kernelwright.testing.scripted_llm import ScriptedLLM, reply, tool_call  # noqa: E402
from kernelwright.tools.peaks import machine_id  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# the row loop, its bound a number or (a lowered module's view) a named shape constant
LOOP = re.compile(
    r"(#pragma omp parallel for[^\n]*\n\s*for \(int u = 0; u < (?:256|KW_S\d+); \+\+u\) \{)")
BOUND = re.compile(r"u < (\w+);")
BEHAVIOURS = ("good", "compile", "wrong", "cut", "syntax", "noapply")


def is_coder(body: dict) -> bool:
    return not body.get("tools") and "You improve the instructions" not in json.dumps(body)


def user_text(body: dict) -> str:
    messages = body.get("messages", [])
    return "\n".join(m["content"] for m in messages if isinstance(m.get("content"), str))


def edit(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n"


class WeakModel:
    """Answers by role; the coder's edits are made against the loop found in the prompt."""

    def __init__(self) -> None:
        self.turn = 0
        self.sent_at: list[float] = []

    def __call__(self, body: dict):
        self.sent_at.append(time.time())
        out = self._answer(body)
        if out is not None:  # tokens ~ characters / 4, as for English and code
            words = len(json.dumps(body.get("messages", []))) // 4
            out.usage = (words, len(out.content or json.dumps(out.tool_calls)) // 4)
        return out

    def _answer(self, body: dict):
        tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
        if "PlanReply" in tools:
            return tool_call("PlanReply", {
                "space": "custom_kernel", "backend": "cpp", "strategy": "one fused pass",
                "rationale": "elementwise and memory-bound"})
        if "CritiqueReply" in tools:
            return tool_call("CritiqueReply", {"decision": "vary_params", "diagnosis": "go on"})
        if tools:
            return None
        if "You improve the instructions" in json.dumps(body):
            return reply("The sections are fine as they are.")
        text = user_text(body)
        found = LOOP.findall(text)
        kind = BEHAVIOURS[self.turn % len(BEHAVIOURS)]
        self.turn += 1
        if not found:
            return reply("I would tile the loop.")
        loop = found[-1]  # the last copy shown is the one to edit
        head, body_line = loop.split("\n", 1)
        if kind == "good":
            new = f"#pragma omp parallel for schedule(static, {2 + self.turn})"
            return reply("Chunked rows.\n" + edit(loop, new + "\n" + body_line))
        if kind == "compile":
            return reply(edit(loop, BOUND.sub(r"u < \1 + kw_lane_id;", loop)))
        if kind == "wrong":
            return reply(edit(loop, BOUND.sub(r"u < \1 - 1;", loop)))
        if kind == "cut":
            return reply(edit(loop, head)[:40], finish_reason="length")
        if kind == "syntax":
            return reply("```python\nclass ModelNew(:\n    pass\n```")
        return reply(edit("for (int q = 0; q < 7; ++q) {", "for (int q = 0; q < 8; ++q) {"))


def key_line(error: str | None) -> str | None:
    """The first compiler ``error:`` line (text after the marker) or mismatch line of a log."""
    if not error:
        return None
    for line in error.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()[:80]
    for line in error.splitlines():
        if "mismatch" in line.lower() or "max abs" in line.lower():
            return line.strip()[:80]
    return error.strip().splitlines()[0][:80]


def measure(task: Path, budget: int, workdir: Path) -> dict:
    cache = workdir / "cache"
    cache.mkdir(parents=True)
    peaks = MachinePeaks(machine=machine_id(), bandwidth_gbps=1e6, gflops=1e9, threads=1)
    (cache / "machine_peaks.json").write_text(peaks.model_dump_json())
    model = WeakModel()
    with ScriptedLLM(router=model) as server:
        llm = LLMSettings(model=server.model, base_url=server.base_url, max_retries=1)
        settings = Settings(data_dir=workdir / "data", cache_dir=cache, budget=budget,
                            backend="cpp", llm=llm)
        started = time.time()
        report = start_run(task, settings, run_id="bench")
        wall = time.time() - started
        requests = list(server.requests)
    store = RunStore(workdir / "data")
    results = sorted((store.run_dir("bench") / "results").glob("*.json"),
                     key=lambda p: p.stat().st_mtime)
    sent = zip(model.sent_at, requests, strict=True)
    coder = [(t, user_text(b)) for t, b in sent if is_coder(b)]
    failures, reached = [], 0
    for path in results:
        profile = json.loads(path.read_text())["profile"]
        if profile.get("correct"):
            continue
        line = key_line(profile.get("error"))
        later = [text for t, text in coder if t > path.stat().st_mtime]
        hit = bool(line) and bool(later) and line in later[0]
        failures.append({"level": profile.get("level"), "line": line,
                         "next_prompt": bool(later), "reached": hit})
        reached += hit
    usage = json.loads(store.load_usage("bench") or "{}").get("per_agent", {})
    tokens = sum(u["input_tokens"] + u["output_tokens"] for u in usage.values())
    chars = [len(text) for _, text in coder]
    evals = max(report.evaluations, 1)
    judged = [f for f in failures if f["next_prompt"]]
    return {
        "evaluations": report.evaluations,
        "requests": len(requests),
        "requests_per_evaluation": round(len(requests) / evals, 2),
        "coder_prompts": len(chars),
        "prompt_chars_mean": round(sum(chars) / max(len(chars), 1)),
        "prompt_chars_max": max(chars, default=0),
        "prompt_chars_total": sum(chars),
        "all_prompt_chars_total": sum(len(user_text(b)) for b in requests),
        "tokens_per_evaluation": round(tokens / evals, 1),
        "failures": failures,
        "failures_reaching_next_prompt": f"{sum(f['reached'] for f in judged)}/{len(judged)}",
        "wall_s": round(wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", type=Path, default=ROOT / "examples/tasks/l1_gelu.py")
    parser.add_argument("--budget", type=int, default=8)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kw-llm-loop-") as tmp:
        out = measure(args.task, args.budget, Path(tmp))
    for key, value in out.items():
        if key != "failures":
            print(f"{key:32s} {value}")
    for f in out["failures"]:
        mark = "reached" if f["reached"] else (
            "MISSING" if f["next_prompt"] else "no later coder prompt")
        print(f"  failure level {f['level']}: {mark}: {f['line']}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
