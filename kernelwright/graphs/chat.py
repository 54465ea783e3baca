"""The chat graph: the optimisation loop with a person approving the plan and the final kernel.

    planner -> review_plan --approve--> coder -> evaluate -> critic -> ... -> review_kernel -> END
       ^          | reject (reason)                ^                              | reject (reason)
       +----------+                                +------------------------------+

``review_plan`` and ``review_kernel`` pause the graph with LangGraph's ``interrupt(payload)``;
the conversation resumes it with ``Command(resume={"approve": bool, "reason": str})``, in the
same process or after a restart (the thread is checkpointed). Code before ``interrupt`` runs
again on resume, so the review nodes only read the state until the answer comes.

A rejection with a reason is read by the request parser (it may change the tolerance, the spaces,
the backend or the budget), quoted into a new revision of the run's task file (see
``chat_task``), and sends the run back: a rejected plan to the planner (which must then offer a
different plan: the rejected first source moves last when nothing else changed), a rejected
kernel to the coder with more budget (the rejected kernel is never offered again).
"""

from __future__ import annotations

from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from kernelwright.agents.request_parser import OfflineRequestParser, RunRequest
from kernelwright.graphs.chat_task import revision_source
from kernelwright.graphs.optimize import OptimizeContext, OptimizeNodes, node
from kernelwright.graphs.state import RunState, current_profiles, reference_of
from kernelwright.spec.contract import ImplementationSpace
from kernelwright.spec.figures import compile_sentence, verdict_sentence
from kernelwright.spec.plan import Action, Decision, Plan, Profile, best_profile
from kernelwright.spec.reference import answer_of
from kernelwright.spec.result import Verdict, verdict_for


def _add(a: list, b: list) -> list:
    return [*(a or []), *(b or [])]


class ChatState(RunState, total=False):
    request: dict[str, Any]  # RunRequest as JSON
    base_source: str  # the user's module, as given
    task_spaces: list[str]  # the implementation spaces the user's module itself allows
    revision: int  # revision number of the run's task file
    feedback: Annotated[list[dict[str, str]], _add]  # {"stage": plan|kernel, "reason": ...}
    rejected: Annotated[list[str], _add]  # candidate ids the user rejected
    rejected_plan: Plan | None
    approved: str | None  # the approved candidate id (None: ended without a kernel)
    verdict: str | None  # kernelwright.spec.Verdict of the approved kernel
    verdict_text: str | None  # the final message's verdict sentence, with the figures


def offered_kernel(state: ChatState) -> Profile | None:
    """The best correct kernel the user has not rejected."""
    rejected = set(state.get("rejected") or [])
    profiles = [*current_profiles(state), *(state.get("confirmed") or [])]
    return best_profile([p for p in profiles if p.candidate_id not in rejected])


def build_chat_graph(checkpointer=None) -> CompiledStateGraph:
    """Compile the reviewed loop. Each run passes its :class:`OptimizeContext` as LangGraph's
    ``context``; the chat knobs live there: ``stop_requested`` is polled by the critic, and
    ``quote_reasons`` writes a task revision for every rejection reason (an LLM reads them;
    otherwise only when a reason changes the constraints: the offline agents read only those).
    """
    graph = StateGraph(ChatState, context_schema=OptimizeContext)
    graph.add_node("planner", node(ChatNodes, "planner"))
    graph.add_node("review_plan", node(ChatNodes, "review_plan"),
                   destinations=("coder", "planner"))
    for name in ("coder", "search", "evaluate", "confirm"):
        graph.add_node(name, node(OptimizeNodes, name))
    graph.add_node("critic", node(ChatNodes, "critic"))
    graph.add_node("review_kernel", node(ChatNodes, "review_kernel"), destinations=("coder", END))
    fan_out = node(OptimizeNodes, "fan_out")
    graph.add_edge(START, "planner")
    graph.add_edge("planner", "review_plan")
    graph.add_conditional_edges("coder", fan_out, ["evaluate", "critic"])
    graph.add_conditional_edges("search", fan_out, ["evaluate", "critic"])
    graph.add_edge("evaluate", "critic")
    graph.add_conditional_edges("critic", node(ChatNodes, "route"), ["coder", "search", "confirm"])
    graph.add_edge("confirm", "review_kernel")
    return graph.compile(checkpointer=checkpointer)


class ChatNodes:
    """The review nodes, plus the optimisation loop's own nodes (``loop``)."""

    def __init__(self, ctx: OptimizeContext) -> None:
        self.ctx = ctx
        self.loop = OptimizeNodes(ctx)
        self.quote_reasons = ctx.quote_reasons

    def stop_requested(self) -> bool:
        return bool(self.ctx.stop_requested and self.ctx.stop_requested())

    # -- planning -----------------------------------------------------------------------------
    def planner(self, state: ChatState) -> dict:
        update = self.loop.planner(state)
        rejected, plan = state.get("rejected_plan"), update.get("plan")
        if plan is not None and rejected is not None and _same_plan(plan, rejected):
            plan = _rotated(plan)
            self.ctx.store.save_plan(state["run_id"], plan.model_dump_json(indent=1))
            update = {**update, "plan": plan}
        return update

    def review_plan(self, state: ChatState) -> Command:
        plan = state["plan"]
        _, contract = self.ctx.task(state["task_path"])
        answer = interrupt(
            {
                "kind": "plan",
                "run_id": state["run_id"],
                "operator_class": plan.operator_class.value,
                "space": plan.implementation_space.value,
                "backend": plan.backend,
                "strategy": plan.strategy,
                "rationale": plan.rationale,
                "sources": list(plan.sources),
                "contract": contract.render(),
            }
        )
        if _approved(answer):
            self.ctx.store.update_meta(state["run_id"], plan_approved=True)
            return Command(goto="coder")
        update, _ = self._amend(state, "plan", _reason(answer))
        return Command(goto="planner", update={**update, "plan": None, "rejected_plan": plan})

    # -- the loop's end -------------------------------------------------------------------------
    def critic(self, state: ChatState) -> dict:
        update = self.loop.critic(state)
        last = update["decisions"][-1]
        if self.stop_requested() and last.action != Action.STOP:
            stop = Decision(action=Action.STOP, reason="stopped by the user (/stop)")
            update = {**update, "decisions": [stop], "status": "done"}
        return update

    def route(self, state: ChatState) -> str:
        return self.loop.route(state)  # a stop goes through "confirm" to "review_kernel"

    def review_kernel(self, state: ChatState) -> Command:
        best = offered_kernel(state)
        profiles = state.get("profiles") or []
        answer = interrupt(_kernel_payload(state, best, len(profiles)))
        if _approved(answer):
            return Command(goto=END, update=self._finish(state, _picked(state, answer) or best))
        update, asked = self._amend(state, "kernel", _reason(answer))
        more = asked or max(self.ctx.batch_size, state["budget"] // 4, 2)
        update = {**update, "budget": state["budget"] + more, "status": "running"}
        if best is not None:
            update["rejected"] = [best.candidate_id]
        return Command(goto="coder", update=update)

    def _finish(self, state: ChatState, best: Profile | None) -> dict:
        store, run_id = self.ctx.store, state["run_id"]
        if best is not None:
            source = store.load_candidate(run_id, best.candidate_id).source
            store.save_best(run_id, source)
        store.update_meta(
            run_id,
            status="done",
            approved=best.candidate_id if best else None,
            best_speedup=best.speedup if best else None,
            evaluations=len(state.get("profiles") or []),
        )
        verdict, sentence = verdict_of(best, reference_of(state))
        store.update_meta(run_id, verdict=verdict)
        return {"status": "done", "approved": best.candidate_id if best else None,
                "verdict": verdict, "verdict_text": sentence}

    # -- rejections -------------------------------------------------------------------------
    def _amend(self, state: ChatState, stage: str, reason: str) -> tuple[dict, int | None]:
        """Read the reason as a request amendment; write a new task revision when it matters.

        Returns the state update and the number of evaluations the reason asks for, if any.
        """
        said = OfflineRequestParser().parse(reason) if reason else RunRequest()
        words = said.model_copy(update={"task_path": None, "task_source": None, "budget": None})
        old = RunRequest.model_validate(state["request"])
        request = old.amended(words)
        update: dict[str, Any] = {
            "feedback": [{"stage": stage, "reason": reason}],
            "request": request.model_dump(mode="json"),
        }
        if request.backend and request.backend != state["backend"]:
            update["backend"] = request.backend
        if reason and (self.quote_reasons or _constraints(request) != _constraints(old)):
            update.update(self._revise(state, request, reason))
        self.ctx.store.update_meta(state["run_id"], last_feedback=f"{stage}: {reason}")
        return update, said.budget

    def _revise(self, state: ChatState, request: RunRequest, reason: str) -> dict:
        revision = state.get("revision", 0) + 1
        reasons = [f["reason"] for f in state.get("feedback") or [] if f["reason"]] + [reason]
        name = self.ctx.task(state["task_path"])[0].name
        spaces = [ImplementationSpace(s) for s in state.get("task_spaces") or ["custom_kernel"]]
        text = revision_source(state["base_source"], request, spaces, reasons)
        path = self.ctx.store.save_task_revision(state["run_id"], revision, name, text)
        return {"task_path": str(path), "revision": revision}


def _approved(answer: Any) -> bool:
    return isinstance(answer, dict) and bool(answer.get("approve"))


def _picked(state: ChatState, answer: Any) -> Profile | None:
    """The kernel ``/pick ID`` chose (any correct one, rejected earlier or not), else None."""
    pick = answer.get("pick") if isinstance(answer, dict) else None
    found = [p for p in state.get("profiles") or [] if p.correct and p.candidate_id == pick]
    return found[0] if found else None


def _reason(answer: Any) -> str:
    return str(answer.get("reason") or "").strip() if isinstance(answer, dict) else ""


def _constraints(request: RunRequest) -> tuple:
    return (
        sorted(request.tolerances.items()),
        request.include_spaces,
        request.exclude_spaces,
        request.only_spaces,
    )


def _same_plan(a: Plan, b: Plan) -> bool:
    return (a.implementation_space, a.sources, a.strategy) == (
        b.implementation_space,
        b.sources,
        b.strategy,
    )


def _rotated(plan: Plan) -> Plan:
    """The same analysis, the rejected first source tried last (a different plan to review)."""
    sources = [*plan.sources[1:], *plan.sources[:1]]
    note = (" The previous plan was rejected; this one starts from a different source."
            if len(sources) > 1 else
            " The previous plan was rejected; the lowering offers no other source, so a reason"
            " that changes the contract, backend or budget is what makes a different plan.")
    return plan.model_copy(
        update={
            "sources": sources,
            "strategy": f"{plan.strategy} (alternative ordering after a rejection)",
            "rationale": plan.rationale + note,
        }
    )


def verdict_of(best: Profile | None, reference: Profile | None = None) -> tuple[str, str]:
    """The verdict of offering ``best`` and its sentence (with the medians and torch.compile);
    "keep PyTorch" when the reference itself, timed as a candidate, beat it."""
    verdict = verdict_for(best is not None, best.speedup if best else None)
    if verdict == Verdict.FASTER and answer_of(best, reference) is not best:
        verdict = Verdict.KEEP_PYTORCH
    verdict = verdict.value
    if best is None:
        return verdict, verdict_sentence(verdict, None)
    text = verdict_sentence(verdict, best.speedup, ref_ms=best.reference_ms,
                            cand_ms=best.candidate_ms, low=best.speedup_low,
                            high=best.speedup_high)
    comp = compile_sentence(best.compile_ms, best.candidate_ms, best.compile_recompiles)
    return verdict, f"{text}; {comp}" if comp else text


def _kernel_payload(state: ChatState, best: Profile | None, spent: int) -> dict[str, Any]:
    base = {"run_id": state["run_id"], "evaluations": spent, "budget": state["budget"]}
    decisions = state.get("decisions") or []
    base["why_stopped"] = decisions[-1].reason if decisions else ""
    if best is None:
        return {**base, "kind": "no_kernel"}
    return {
        **base,
        "kind": "kernel",
        "candidate_id": best.candidate_id,
        "speedup": best.speedup,
        "speedup_low": best.speedup_low,
        "speedup_high": best.speedup_high,
        "roofline_fraction": best.roofline.fraction if best.roofline else None,
        "origin": best.origin or None,
        "reference_ms": best.reference_ms,
        "candidate_ms": best.candidate_ms,
        "compile_ms": best.compile_ms,
        "remeasured": best.remeasured,
        "verdict": verdict_of(best, reference_of(state))[0],
        "verdict_text": verdict_of(best, reference_of(state))[1],
    }
