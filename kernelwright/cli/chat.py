"""`chat`: a terminal conversation that turns a request into a reviewed, checkpointed run.

Everything the user typed and every kernel source is printed with ``print`` as plain text: no
rich markup can be injected by a request, a task file or a generated kernel.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Annotated, Any

import typer

from kernelwright.cli._app import (
    BackendOpt,
    BudgetOpt,
    StoreOpt,
    _fail,
    _settings,
    app,
    check_file,
    llm_settings,
)
from kernelwright.cli.runs import LlmKeyEnv, LlmModel, LlmUrl
from kernelwright.errors import KernelwrightError
from kernelwright.spec.figures import medians_text

HELP = (
    "commands: /status /best /pick ID /diff /source /stop /approve /reject REASON /quit\n"
    "paste a PyTorch module between ``` fences, or name a task file"
)
DIFF_LINES = 40  # the review shows this much of the diff; /diff shows all of it


def say(text: str = "") -> None:
    """Plain text to the terminal, flushed (never markup)."""
    print(text, flush=True)


@app.command()
def chat(
    task: Annotated[Path | None, typer.Argument(help="task file (optional)")] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="thread id to continue")] = None,
    backend: BackendOpt = None,
    budget: BudgetOpt = None,
    store: StoreOpt = None,
    llm_base_url: LlmUrl = None,
    llm_model: LlmModel = None,
    llm_api_key_env: LlmKeyEnv = None,
) -> None:
    """Talk to kernelwright: say what to make faster; approve or reject the plan and the kernel."""
    from kernelwright.graphs.store import store_root

    if task is not None:
        check_file(task, "task", "examples/tasks/l1_gelu.py")
    llm = llm_settings(base_url=llm_base_url, model=llm_model, api_key_env=llm_api_key_env)
    settings = _settings(backend=backend, budget=budget, llm=llm)
    try:
        root = store_root(settings, store)
        session = _open(resume, task, settings, root)
        if session is not None:
            Conversation(session).run()
    except KernelwrightError as exc:
        _fail(exc)


def _open(resume: str | None, task: Path | None, settings, root: Path):
    from kernelwright.graphs.chat_session import ChatSession

    if resume is not None:
        session = ChatSession(resume, settings, root)  # keeps the thread's LLM endpoint
        say(f"resuming thread {resume}")
        return session
    say("kernelwright chat: say what to make faster (e.g. 'make it faster, keep fp32 exact')")
    say(HELP)
    parser = _parser(settings.llm)
    request = _first_request(task, parser)
    if request is None:
        return None
    say("understood:")
    say(request.describe())
    client = getattr(parser, "client", None)
    usage = client.ledger.model_dump_json() if client is not None else None
    session = ChatSession.create(request, settings, root, usage_json=usage)
    say(f"thread {session.run_id} (continue later: kernelwright chat --resume {session.run_id})")
    return session


def _first_request(task: Path | None, parser):
    """Read messages until they name a task (or the task argument supplies it); the words of
    earlier messages still count (say the constraints first, paste the module next)."""
    said: list[str] = []
    while True:
        text = read_message()
        if text is None or text.strip() in ("/quit", "/exit"):
            return None
        if text.startswith("/"):
            say("no run yet: describe what to make faster first")
            continue
        request = parser.parse("\n".join([*said, text]))
        if request.task_source is None and request.task_path is None and task is not None:
            request = request.model_copy(update={"task_path": str(task)})
        if request.task_source is None and request.task_path is None:
            said.append(text)
            say("which task? name a task file, or paste the module between ``` fences")
            continue
        if request.task_path and not Path(request.task_path).expanduser().is_file():
            say(f"no such file: {request.task_path}")
            continue
        return request


def _parser(llm):
    from kernelwright.agents.request_parser import LLMRequestParser, OfflineRequestParser

    if not llm.enabled:
        return OfflineRequestParser()
    from kernelwright.agents.llm import LLMClient, make_chat_model

    return LLMRequestParser(LLMClient(make_chat_model(llm), llm))


def read_message(prompt: str = "> ") -> str | None:
    """One message: a line, or several while a ``` fence is open. ``None`` at end of input."""
    lines: list[str] = []
    while True:
        try:
            line = input(prompt if not lines else "")
        except EOFError:
            return "\n".join(lines) if lines else None
        lines.append(line)
        fences = sum(1 for row in lines if row.strip().startswith("```"))
        if fences % 2 == 0:
            return "\n".join(lines)


class Conversation:
    """The loop: the run advances in a background thread; this thread reads commands."""

    def __init__(self, session) -> None:
        self.session = session
        self.worker: threading.Thread | None = None
        self.quit = threading.Event()
        self.pause = None  # the last Pause once the worker returned
        self.failure: Exception | None = None

    def run(self) -> None:
        pause = self.session.where()
        if pause.kind == "done":
            self._done(pause)
            return
        if pause.kind == "review":
            self._show_review(pause.payload)
        else:
            self._start(None)
        while True:
            text = read_message()
            if text is None:
                text = "/quit"
            if not self._handle(text.strip()):
                return

    # -- the worker -------------------------------------------------------------------------------
    def _start(self, answer: dict[str, Any] | None) -> None:
        self.pause = None
        self.worker = threading.Thread(target=self._advance, args=(answer,), daemon=True)
        self.worker.start()

    def _advance(self, answer) -> None:
        try:
            pause = self.session.advance(
                answer, emit=self._progress, quit_requested=self.quit.is_set
            )
        except Exception as exc:  # shown to the user; the thread stays resumable
            self.failure = exc
            say(f"error: {exc}")
            say(f"the thread is checkpointed: kernelwright chat --resume {self.session.run_id}")
            return
        self.pause = pause
        if pause.kind == "review":
            self._show_review(pause.payload)
        elif pause.kind == "done":
            self._done(pause)

    def _running(self) -> bool:
        return self.worker is not None and self.worker.is_alive()

    def _progress(self, node: str, update: dict[str, Any]) -> None:
        for line in progress_lines(node, update):
            say(line)

    # -- commands ---------------------------------------------------------------------------------
    def _handle(self, text: str) -> bool:
        """Act on one message; False ends the conversation."""
        command, _, rest = text.partition(" ")
        if command in ("/quit", "/exit"):
            return self._quit()
        done = self.pause is not None and self.pause.kind == "done"
        if done and command not in ("/source", "/diff", "/status", "/best", "/help", "/?"):
            say("the review is over (the kernel is written); /source /diff /best /status, "
                "or /quit to leave")  # fmt: skip
            return True
        if command in ("/approve", "/reject"):
            self._answer(command == "/approve", rest.strip())
        elif command == "/pick":
            self._pick(rest.strip())
        elif command == "/source":
            self._source()
        elif command == "/stop":
            self.session.stop_event.set()
            say("stopping: the run ends after this round and offers its best kernel")
        elif command == "/status":
            say(self.session.status(running=self._running()))
        elif command == "/best":
            self._best()
        elif command == "/diff":
            say(self.session.diff() or "no diff: the best kernel has no parent to compare with")
        elif command in ("/help", "/?"):
            say(HELP)
        elif text:
            busy = "the run is working" if self._running() else "waiting for your review"
            say(f"{busy}; {HELP.splitlines()[0]}")
        return True  # only /quit (or the end of input) ends the program

    def _answer(self, approve: bool, reason: str, pick: str | None = None) -> None:
        if self._running() or self.session.where().kind != "review":
            say("nothing to review right now")
            return
        final = self.session.where().payload.get("kind") != "plan"
        say("approved" if approve else f"rejected: {reason or '(no reason given)'}")
        if not approve and reason and not understood(reason):
            say("note: nothing in that reason changes the run's backend, budget, time limit, "
                "tolerance or implementation spaces (what a reason can change); the run goes on "
                "with more budget and the rejected kernel is not offered again")  # fmt: skip
        self._start({"approve": approve, "reason": reason, "pick": pick})
        if approve and final:
            self.worker.join()  # a final approval only writes the kernel: wait for it

    def _pick(self, prefix: str) -> None:
        """Approve any correct kernel of the thread, one rejected earlier included."""
        where = self.session.where() if not self._running() else None
        if where is None or where.kind != "review" or where.payload.get("kind") == "plan":
            say("/pick works at the final review: wait for it")
            return
        kernel = self.session.find_kernel(prefix) if prefix else None
        if kernel is None:
            say(f"no single correct kernel with id {prefix or '(none given)'}: /best lists them")
            return
        say(f"picked {kernel.candidate_id} ({kernel.speedup:.2f}x)")
        self._answer(True, "", pick=kernel.candidate_id)

    def _best(self) -> None:
        kernels = self.session.kernels()
        if not kernels:
            say("no correct kernel yet")
            return
        say("correct kernels, fastest first (/pick ID approves one, /source shows the offered):")
        for profile, rejected in kernels:
            spread = ""
            if profile.speedup_low is not None and profile.speedup_high is not None:
                spread = f" [{profile.speedup_low:.2f}, {profile.speedup_high:.2f}]"
            mark = "  (rejected earlier)" if rejected else ""
            ms = medians_text(getattr(profile, "reference_ms", None),
                              getattr(profile, "candidate_ms", None))
            say(f"  {profile.candidate_id}: {profile.speedup:.2f}x{spread} ({ms}){mark}")

    def _source(self) -> None:
        approved = (self.pause.payload.get("approved")
                    if self.pause is not None and self.pause.kind == "done" else None)  # fmt: skip
        best = self.session.best()
        if approved is None and best is None:
            say("no correct kernel yet")
            return
        cid = approved or best[0]["candidate_id"]
        say(f"----- source of {cid} -----")
        say(self.session.source(cid).rstrip("\n"))
        say("-------------------------")

    def _quit(self) -> bool:
        if self._running():
            say("quitting after the current step...")
            self.quit.set()
            self.worker.join()
        if self.pause is not None and self.pause.kind == "done":
            say("bye")
        else:
            say(f"bye: continue with  kernelwright chat --resume {self.session.run_id}")
        return False

    # -- what the user sees -----------------------------------------------------------------------
    def _show_review(self, payload: dict[str, Any]) -> None:
        for line in review_lines(payload):
            say(line)
        if payload.get("kind") == "kernel":
            diff = (self.session.diff() or "").splitlines()
            if diff:
                say("----- diff against its parent -----")
                for line in diff[:DIFF_LINES]:
                    say(line)
                if len(diff) > DIFF_LINES:
                    say(f"... {len(diff) - DIFF_LINES} more lines: /diff")
            say("the whole source: /source; every correct kernel: /best; take another: /pick ID")
        say("approve? /approve or /reject REASON")

    def _done(self, pause) -> None:
        approved = pause.payload.get("approved")
        where = self.session.runs.best_path(self.session.run_id)
        verdict = pause.payload.get("verdict_text")
        if approved:
            say(f"done: kernel {approved} approved, written to {where}")
            say("/source shows it, /quit leaves")
        else:
            say("done: ended without an approved kernel")
        if verdict:
            say(verdict)


def understood(reason: str) -> bool:
    """Whether the request parser reads anything a run can act on in ``reason``."""
    from kernelwright.agents.request_parser import OfflineRequestParser, RunRequest

    said = OfflineRequestParser().parse(reason).model_dump(exclude={"text", "notes"})
    return said != RunRequest().model_dump(exclude={"text", "notes"})


def progress_lines(node: str, update: dict[str, Any]) -> list[str]:
    """One or two plain lines per graph step."""
    if node == "planner" and update.get("plan") is not None:
        return [f"[planner] {update['plan'].strategy}"]
    if node == "coder" or node == "search":
        return [f"[{node}] {len(update.get('pending') or [])} new candidate(s)"]
    if node == "evaluate":
        return [_profile_line(p) for p in update.get("profiles") or []]
    if node == "confirm":
        return [f"[confirm] re-measured {p.candidate_id}: " + (
            f"{p.speedup:.2f}x ({medians_text(p.reference_ms, p.candidate_ms)})"
            if p.correct and p.speedup is not None else "not correct")
            for p in update.get("confirmed") or []]
    if node == "critic" and update.get("decisions"):
        d = update["decisions"][-1]
        return [f"[critic] {d.action.value}: {d.reason}"]
    return []


def _profile_line(p) -> str:
    if not p.correct:
        return f"[evaluate] {p.candidate_id}: not correct ({(p.error or '').splitlines()[:1]})"
    ms = medians_text(p.reference_ms, p.candidate_ms)
    return f"[evaluate] {p.candidate_id}: correct, {p.speedup:.2f}x" + (f" ({ms})" if ms else "")


def review_lines(payload: dict[str, Any]) -> list[str]:
    if payload.get("kind") == "plan":
        return [
            "PLAN for review:",
            f"  class {payload['operator_class']}, space {payload['space']}, "
            f"backend {payload['backend']}",
            f"  strategy: {payload['strategy']}",
            f"  sources: {', '.join(payload['sources']) or 'none'}",
            f"  rationale: {payload['rationale']}",
            *payload["contract"].splitlines(),
        ]
    head = f"after {payload['evaluations']}/{payload['budget']} evaluations"
    head += f" ({payload['why_stopped']})"
    if payload.get("kind") == "no_kernel":
        return [f"NO CORRECT KERNEL {head}", "/reject REASON gives the coder more budget"]
    low, high = payload.get("speedup_low"), payload.get("speedup_high")
    spread = f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None else ""
    frac, origin = payload.get("roofline_fraction"), payload.get("origin")
    extra = [f"roofline {frac:.1%} of this machine's bound" if frac else "",
             f"from {origin}" if origin else ""]  # fmt: skip
    lines = [
        f"FINAL KERNEL for review {head}:",
        f"  {payload['candidate_id']}: {payload['speedup']:.2f}x{spread} over the reference",
        *([f"  {'; '.join(e for e in extra if e)}"] if any(extra) else []),
    ]
    if payload.get("verdict_text"):
        lines.append(f"  {payload['verdict_text']}")
    return lines
