"""`kernelwright chat` through a pseudo-terminal, as a person types it: reject the plan with a
reason, quit, resume the thread, approve the plan, reject the first kernel with a reason,
approve the next one. The cpp backend, a small budget, real workers."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import END_TO_END_ENV

pexpect = pytest.importorskip("pexpect")

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "examples" / "tasks" / "l1_gelu.py"
REVIEW = "approve\\? /approve or /reject REASON"


def spawn(*args: str, tmp_path: Path):
    env = {
        "PYTHONPATH": str(ROOT),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "TERM": "dumb",
        **END_TO_END_ENV,
    }
    child = pexpect.spawn(
        sys.executable,
        ["-m", "kernelwright.cli", "chat", *args],
        env=env,
        encoding="utf-8",
        timeout=240,
        dimensions=(50, 200),
    )
    child.logfile_read = open(tmp_path / "pty.log", "a")  # noqa: SIM115 - closed with the child
    return child


@pytest.mark.slow
def test_chat_reject_quit_resume_approve(tmp_path):
    store = tmp_path / "store"
    child = spawn("--store", str(store), "--backend", "cpp", tmp_path=tmp_path)
    child.expect("say what to make faster")
    child.sendline(f"make {TASK} faster, budget 2, tolerance 1e-3")
    child.expect(r"thread (\S+) \(continue later")
    thread = child.match.group(1)
    child.expect("PLAN for review")
    child.expect(REVIEW)
    child.sendline("/reject [bold]custom kernels only[/bold], keep fp32 within 1e-4")
    child.expect_exact("rejected: [bold]custom kernels only[/bold], keep fp32 within 1e-4")
    child.expect("PLAN for review")
    child.expect("tolerance float32: atol=0.0001 rtol=0.0001")
    child.expect(REVIEW)
    child.sendline("/quit")
    child.expect(f"kernelwright chat --resume {thread}")
    child.expect(pexpect.EOF)

    child = spawn("--resume", thread, "--store", str(store), tmp_path=tmp_path)
    child.expect(f"resuming thread {thread}")
    child.expect("PLAN for review")  # the pending review is shown again
    child.expect(REVIEW)
    child.sendline("/approve")
    child.expect(r"\[evaluate\] \w+: ")
    child.expect("FINAL KERNEL for review after 2/2 evaluations")
    child.expect(r"  (\w+): [\d.]+x")
    first = child.match.group(1)
    child.expect("the whole source: /source")  # the review shows figures and the diff only
    child.expect(REVIEW)
    child.sendline("/source")
    child.expect(f"source of {first}")
    child.expect("ModelNew")  # the kernel's source, printed as text
    child.sendline("/status")
    child.expect("evaluations 2/2")
    child.sendline("/reject not fast enough, try 2 more evaluations")
    # budget 4 now: the budget or idle rounds end the run. l1_gelu's C++ program has three
    # schedule points but, at this size, two distinct sources (a candidate is its source), and
    # both may be evaluated already: then no new one is run and the other kernel is offered
    child.expect(r"FINAL KERNEL for review after ([234])/4 evaluations|NO CORRECT KERNEL")
    spent = int(child.match.group(1) or 4)
    if child.match.group(1):
        child.expect(r"  (\w+): [\d.]+x")
        assert child.match.group(1) != first  # the rejected kernel is not offered again
    child.expect(REVIEW)
    child.sendline("/best")  # every correct kernel, the rejected one marked
    child.expect(f"  {first}: [\\d.]+x .*\\(rejected earlier\\)")
    child.sendline(f"/pick {first[:6]}")  # bring the rejected kernel back: approve it
    child.expect(f"done: kernel {first} approved")
    child.sendline("/source")  # /approve ended the review, not the program
    child.expect("ModelNew")
    child.sendline("/quit")
    child.expect("bye")
    child.expect(pexpect.EOF)

    run_dir = store / "runs" / thread
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["kind"] == "chat" and meta["status"] == "done"
    assert meta["approved"] == first  # picked back after its rejection
    assert (run_dir / "best" / "candidate.py").read_text() == (
        run_dir / "candidates" / f"{first}.py").read_text()
    logged = (run_dir / "evaluations.log").read_text().split("\n")
    ids = [line.split()[-1] for line in logged if line]
    assert len(ids) == len(set(ids)) == spent  # nothing evaluated twice across quit and resume
    revision = sorted((run_dir / "task").glob("r*/l1_gelu.py"))[-1].read_text()
    assert "# rejected because: [bold]custom kernels only[/bold]" in revision
    assert re.search(r"'float32': \(0\.0001, 0\.0001\)", revision)
