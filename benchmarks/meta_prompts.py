"""Does meta-prompt evolution pick the prompt that really makes the model better?

A scripted OpenAI-compatible server plays both the coder and the meta-prompter:

- the coder writes a GELU (tanh form) module in torch; it keeps the exact constants only when its
  prompt says "do not round" anywhere, else it rounds them (0.8 and 0.04: wrong values). Its
  behaviour depends on the prompt text, not on any score;
- the meta-prompter answers each request with a SEARCH/REPLACE edit of the common-pitfalls
  section, alternating between an irrelevant line ("Name variables clearly.", first) and a helpful
  one ("Keep the reference's constants exact; do not round them.").

Every kernel is checked in process against the reference on fresh inputs and timed against it
(its fitness: 4 for wrong values, 5 plus the measured speedup when correct). The archive selects
prompts by mean score (a prompt scored once is sampled again first). Printed: how many kernels
each kind of prompt wrote per half of the run, the share correct, and which prompt the archive
ranks best. Nothing here knows which line helps: only the scores do.

    PYTHONPATH=. python benchmarks/meta_prompts.py [--kernels 24] [--seed 0]

About 1-2 minutes on two busy cores (the timing of each kernel dominates).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import torch  # noqa: E402

from kernelwright.agents.coder import LLMCoder  # noqa: E402
from kernelwright.agents.llm import LLMClient, make_chat_model  # noqa: E402
from kernelwright.agents.metaprompter import MetaPrompter, PromptArchive  # noqa: E402
from kernelwright.config import LLMSettings  # noqa: E402
from kernelwright.spec import ImplementationSpace, Task, derive_contract  # noqa: E402
from kernelwright.spec.opclass import OperatorClass  # noqa: E402
from kernelwright.spec.plan import History, Plan, Profile  # noqa: E402
from kernelwright.testing.scripted_llm import ScriptedLLM, reply  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HELPFUL = "- Keep the reference's constants exact; do not round them."
NEUTRAL = "- Name variables clearly."
MODULE = '''import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh({a} * (x + {b} * x * x * x)))
'''


def scripted_model():
    turns = {"meta": 0}

    def route(body):
        text = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
        if "You improve the instructions" in text:
            section = text.split("### common_pitfalls\n", 1)[1]
            first = section.splitlines()[0]
            extra = NEUTRAL if turns["meta"] % 2 == 0 else HELPFUL  # the useless edit first
            turns["meta"] += 1
            return reply(f"<<<<<<< SEARCH\n{first}\n=======\n{first}\n{extra}\n>>>>>>> REPLACE\n")
        exact = "do not round" in text
        a, b = ("0.7978845608028654", "0.044715") if exact else ("0.8", "0.04")
        return reply("```python\n" + MODULE.format(a=a, b=b) + "```")

    return route


def score(task: Task, source: str, cid: str) -> Profile:
    """Check the module against the reference on fresh inputs, time both: a real measurement."""
    space: dict = {}
    exec(compile(source, "<candidate>", "exec"), space)  # noqa: S102 - our scripted module
    ref, new = task.module().Model(), space["ModelNew"]()
    x = torch.randn(256, 4096)
    with torch.no_grad():
        ok = torch.allclose(new(x), ref(x), atol=1e-5, rtol=1e-5)
        speed = None
        if ok:
            times = []
            for fn in (ref, new):
                start = time.perf_counter()
                for _ in range(5):
                    fn(x)
                times.append(time.perf_counter() - start)
            speed = times[0] / times[1]
    return Profile(candidate_id=cid, correct=bool(ok), level=5 if ok else 4, speedup=speed,
                   origin="llm")


def run(kernels: int, seed: int) -> dict:
    path = ROOT / "examples/tasks/l1_gelu.py"
    task = Task.from_path(path)
    contract = derive_contract(task)
    plan = Plan(operator_class=OperatorClass.ELEMENTWISE,
                implementation_space=ImplementationSpace.CUSTOM_KERNEL, backend="cpp",
                strategy="one pass", rationale="elementwise")
    with ScriptedLLM(router=scripted_model()) as server, tempfile.TemporaryDirectory() as tmp:
        settings = LLMSettings(model=server.model, base_url=server.base_url, max_retries=0,
                               max_requests=10 * kernels)
        client = LLMClient(make_chat_model(settings), settings)
        meta = MetaPrompter(client, PromptArchive(seed=seed), every=2, family_dir=tmp)
        coder = LLMCoder(client, metaprompter=meta)
        profiles: list[Profile] = []
        written: list[tuple[bool, bool]] = []  # (prompt has the helpful line, kernel correct)
        for r in range(kernels):
            h = History(round=r, budget=kernels + 1, spent=len(profiles), profiles=profiles,
                        round_sizes=[1] * len(profiles))
            out = coder.propose(task, contract, plan, h, 1)
            if not out:
                continue
            cand = out[0]
            prompt = meta.archive.prompts.get(cand.prompt_id or "")
            helpful = prompt is not None and HELPFUL in prompt.sections["common_pitfalls"]
            profile = score(task, cand.source, f"{cand.id}-{r}")
            coder._known[profile.candidate_id] = cand  # scores flow back by this id
            profiles.append(profile)
            written.append((helpful, profile.correct))
        coder.propose(task, contract, plan, h, 0)  # report the last scores
        best = meta.archive.best()
    half = len(written) // 2
    first, second = written[:half], written[half:]
    return {
        "kernels": len(written),
        "helpful_share_first_half": _share([w[0] for w in first]),
        "helpful_share_second_half": _share([w[0] for w in second]),
        "correct_share_first_half": _share([w[1] for w in first]),
        "correct_share_second_half": _share([w[1] for w in second]),
        "prompts_in_archive": len(meta.archive),
        "best_prompt_has_helpful_line": bool(best and HELPFUL in best.sections["common_pitfalls"]),
        "best_prompt_mean": round(meta.archive.mean_of(best.id), 3) if best else None,
    }


def _share(flags: list[bool]) -> str:
    return f"{sum(flags)}/{len(flags)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for key, value in run(args.kernels, args.seed).items():
        print(f"{key:32s} {value}")


if __name__ == "__main__":
    main()
