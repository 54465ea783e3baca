"""LLM policies for the planner, coder and critic, behind the same protocols as the offline ones.

Each takes an injected ``LLMClient`` (chat model + usage ledger) and an offline policy of the
same role. The offline policy supplies what rules do better (operator tracing, hard stops) and
is the fallback whenever the LLM's reply is dropped as malformed. Budgets stop a run cleanly:
once the ledger is over budget the coder proposes nothing and the critic decides ``STOP``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kernelwright.agents._replies import CritiqueReply, PlanReply, coder_parser
from kernelwright.agents.llm import LLMClient, make_chat_model
from kernelwright.agents.protocols import Coder, Critic, Planner
from kernelwright.agents.usage import UsageLedger
from kernelwright.config import LLMSettings
from kernelwright.errors import LLMBudgetError
from kernelwright.prompts import evolve_regions, render
from kernelwright.prompts.context import Exemplar, Feedback
from kernelwright.spec import Candidate, Contract, Task
from kernelwright.spec.plan import Action, Decision, History, Plan, Profile
from kernelwright.tools.evolve.metaprompt import MetaPrompter, PromptArchive
from kernelwright.tools.knowledge import retrieve

log = logging.getLogger(__name__)

SourceLookup = Callable[[str], Candidate | None]
DEFAULT_DEVICE = "the SYCL CPU device (Intel OpenCL runtime; 64-256 work-items per group)"


def feedback_from_profile(profile: Profile) -> Feedback:
    """What the prompts say about an evaluated candidate, from its ``Profile``."""
    verdict = "correct" if profile.correct else f"not correct (level {profile.level} of 5)"
    timing = None
    if profile.speedup is not None:
        timing = (
            f"speedup {profile.speedup:.3g}x "
            f"(spread {profile.speedup_low or 0:.3g}-{profile.speedup_high or 0:.3g})"
        )
    stats = [
        f"{k}: " + ", ".join(f"{n}={v}" for n, v in s.items() if v is not None)
        for k, s in profile.stats.items()
    ]
    roof = profile.roofline.model_dump(exclude_none=True) if profile.roofline else {}
    return Feedback(
        verdict=verdict,
        error=profile.error,
        flags=list(profile.flags),
        timing=timing,
        kernel_stats=stats,
        profile=[f"roofline {k}: {_num(v)}" for k, v in roof.items()],
    )


def _num(v: object) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def kernel_score(profile: Profile) -> float:
    """KernelFoundry's fitness: correctness level (0-5) plus the speedup when correct."""
    return float(profile.level) + ((profile.speedup or 0.0) if profile.correct else 0.0)


def _advice(plan: Plan, k: int):
    try:
        return retrieve(plan.operator_class.value, plan.backend, k=k)
    except ValueError:  # a backend the knowledge base has no entries for
        return []


def _messages(role: str, user: str) -> list[tuple[str, str]]:
    return [("system", render("system.j2", role=role)), ("user", user)]


def _plan_text(plan: Plan) -> str:
    return (
        f"{plan.operator_class.value} task, space {plan.implementation_space.value}, backend "
        f"{plan.backend}. Strategy: {plan.strategy}\nRationale: {plan.rationale}"
    )


class LLMPlanner:
    """Plans with the LLM on top of the offline planner's operator analysis.

    Example:
        >>> planner = LLMPlanner(client, RulePlanner())  # doctest: +SKIP
        >>> planner.plan(task, contract, "sycl").strategy  # doctest: +SKIP
    """

    def __init__(self, client: LLMClient, fallback: Planner, device: str = DEFAULT_DEVICE) -> None:
        self.client = client
        self.fallback = fallback
        self.device = device

    def __repr__(self) -> str:
        return f"LLMPlanner({self.client!r}, fallback={self.fallback!r})"

    def plan(self, task: Task, contract: Contract, backend: str) -> Plan:
        base = self.fallback.plan(task, contract, backend)
        if self.client.over_budget():
            return base
        user = render(
            "planner.j2",
            contract=contract.render(),
            reference_source=task.path.read_text(),
            operator_class=base.operator_class.value,
            backend=backend,
            backends=[backend],
            device=self.device,
            allowed_spaces=[s.value for s in contract.allowed_spaces],
            advice=_advice(base, 6),
            history=[],
            tool_name=PlanReply.__name__,
        )
        try:
            messages = _messages("the planner", user)
            reply = self.client.ask_structured("planner", messages, PlanReply)
        except LLMBudgetError:
            return base
        return base if reply is None else self._merge(base, reply, contract)

    def _merge(self, base: Plan, reply: PlanReply, contract: Contract) -> Plan:
        space = reply.space if contract.allows(reply.space) else base.implementation_space
        steps = "".join(f"\n{i}. {s}" for i, s in enumerate(reply.steps, 1))
        params = f"\nStarting parameters: {reply.params}" if reply.params else ""
        return base.model_copy(
            update={
                "implementation_space": space,
                "strategy": reply.strategy.strip(),
                "rationale": f"{reply.rationale.strip()}{steps}{params}",
            }
        )


class LLMCoder:
    """Writes candidates with the LLM: whole modules, or SEARCH/REPLACE edits of the best's
    ``[EVOLVE_START]/[EVOLVE_END]`` blocks; optional meta-prompt evolution.

    ``sources`` looks a candidate up by id (the run store) so the current best can be shown after
    a resume; candidates this coder proposed are remembered anyway. When the LLM yields nothing
    usable, the ``fallback`` coder proposes instead.
    """

    def __init__(
        self,
        client: LLMClient,
        fallback: Coder | None = None,
        sources: SourceLookup | None = None,
        metaprompter: MetaPrompter | None = None,
        inspirations: int = 2,
    ) -> None:
        self.client = client
        self.fallback = fallback
        self.lookup = sources
        self.metaprompter = metaprompter
        self.inspirations = inspirations
        self._known: dict[str, Candidate] = {}
        self._reported: set[str] = set()

    def __repr__(self) -> str:
        return f"LLMCoder({self.client!r}, fallback={self.fallback!r})"

    def source(self, candidate_id: str) -> Candidate | None:
        if candidate_id in self._known:
            return self._known[candidate_id]
        return _lookup(self.lookup, candidate_id)

    def propose(
        self, task: Task, contract: Contract, plan: Plan, history: History, n: int
    ) -> list[Candidate]:
        self._report_scores(history)
        out: list[Candidate] = []
        for _ in range(max(n, 0)):
            if self.client.over_budget():
                break
            try:
                candidate = self._one(task, contract, plan, history)
            except LLMBudgetError:
                break
            if candidate is not None and candidate.id not in {c.id for c in out}:
                self._known[candidate.id] = candidate
                out.append(candidate)
        if not out and self.fallback is not None and not self.client.over_budget():
            return self.fallback.propose(task, contract, plan, history, n)
        return out

    def _one(self, task: Task, contract: Contract, plan: Plan, history: History):
        parent = self.source(history.best.candidate_id) if history.best else None
        edit_mode = parent is not None and bool(evolve_regions(parent.source))
        prompt = self.metaprompter.archive.select() if self.metaprompter else None
        user = render(
            "coder.j2",
            sections=prompt.sections if prompt else {},
            contract=contract.render(),
            reference_source=task.path.read_text(),
            plan=self._plan_with_critique(plan, history),
            backend=plan.backend,
            advice=_advice(plan, 5),
            parent=Exemplar(source=parent.source, summary=_summary(history.best))
            if parent
            else None,
            feedback=feedback_from_profile(history.best) if parent else None,
            inspirations=self._inspirations(history),
            edit_mode=edit_mode,
        )
        parse = coder_parser(parent.source if parent else None, edit_mode)
        want = "edits" if edit_mode else "code"
        source = self.client.ask("coder", _messages("the coder", user), parse, want=want)
        if source is None:
            return None
        return Candidate(
            source=source,
            backend=plan.backend,
            origin="llm",
            parent=parent.id if parent else None,
            prompt_id=prompt.id if prompt else None,
        )

    @staticmethod
    def _plan_with_critique(plan: Plan, history: History) -> str:
        text = _plan_text(plan)
        if history.last_decision is not None:
            text += f"\nThe critic's last verdict: {history.last_decision.reason}"
        return text

    def _inspirations(self, history: History) -> list[Exemplar]:
        best_id = history.best.candidate_id if history.best else None
        ranked = sorted(
            (p for p in history.profiles if p.correct and p.candidate_id != best_id),
            key=lambda p: -(p.speedup or 0.0),
        )
        out: list[Exemplar] = []
        for p in ranked:
            cand = self.source(p.candidate_id)
            if cand is not None and len(out) < self.inspirations:
                out.append(Exemplar(source=cand.source, summary=_summary(p)))
        return out

    def _report_scores(self, history: History) -> None:
        """Feed scores of our earlier candidates to the meta-prompter (once each)."""
        if self.metaprompter is None:
            return
        archive = self.metaprompter.archive
        for p in history.profiles:
            cand = self._known.get(p.candidate_id)
            if p.candidate_id in self._reported or cand is None or cand.prompt_id is None:
                continue
            self._reported.add(p.candidate_id)
            prompt = archive.prompts.get(cand.prompt_id)
            if prompt is None:
                continue
            try:
                self.metaprompter.observe(
                    prompt, cand.source, feedback_from_profile(p), kernel_score(p)
                )
            except LLMBudgetError:
                return


def _lookup(lookup: SourceLookup | None, candidate_id: str) -> Candidate | None:
    if lookup is None:
        return None
    try:
        return lookup(candidate_id)
    except (OSError, KeyError, ValueError):  # not in the store (yet): show no source
        log.debug("candidate %s not found for the prompt", candidate_id)
        return None


def _summary(profile: Profile | None) -> str:
    if profile is None:
        return "not evaluated"
    if profile.correct and profile.speedup is not None:
        return f"correct, {profile.speedup:.3g}x faster than the reference"
    return f"not correct (level {profile.level} of 5)"


class LLMCritic:
    """Decides the next step with the LLM; the offline critic's hard stops always win.

    The LLM budget and the rule's hard stops (budget, time, roofline, no new candidates) come
    first; then the LLM picks the action and says why; a dropped reply falls back to the rule.
    """

    def __init__(
        self, client: LLMClient, fallback: Critic, sources: SourceLookup | None = None
    ) -> None:
        self.client = client
        self.fallback = fallback
        self.lookup = sources

    def __repr__(self) -> str:
        return f"LLMCritic({self.client!r}, fallback={self.fallback!r})"

    def decide(self, plan: Plan, history: History, elapsed_s: float) -> Decision:
        rule = self.fallback.decide(plan, history, elapsed_s)
        if (why := self.client.over_budget()) is not None:
            return rule.model_copy(update={"action": Action.STOP, "reason": why})
        if rule.action == Action.STOP:
            return rule
        latest = history.profiles[-1] if history.profiles else None
        cand = _lookup(self.lookup, latest.candidate_id) if latest else None
        user = render(
            "critic.j2",
            contract=None,  # the Critic protocol does not receive the contract
            plan=_plan_text(plan),
            candidate_source=cand.source if cand else "(source not available)",
            feedback=feedback_from_profile(latest) if latest else None,
            history=[f"{p.candidate_id}: {_summary(p)}" for p in history.profiles[-12:]],
            budget_left=history.budget - history.spent,
            advice=_advice(plan, 4),
            tool_name=CritiqueReply.__name__,
            decisions=[a.value for a in Action],
        )
        try:
            messages = _messages("the critic", user)
            reply = self.client.ask_structured("critic", messages, CritiqueReply)
        except LLMBudgetError as exc:
            return rule.model_copy(update={"action": Action.STOP, "reason": str(exc)})
        if reply is None:
            return rule
        steps = "; ".join(reply.next_steps[:3])
        reason = " ".join(reply.diagnosis.split()) + (f" Next: {steps}" if steps else "")
        return rule.model_copy(update={"action": reply.decision, "reason": reason})


@dataclass
class LLMPolicies:
    """The three LLM policies sharing one client (and so one usage ledger)."""

    planner: LLMPlanner
    coder: LLMCoder
    critic: LLMCritic
    client: LLMClient
    metaprompter: MetaPrompter | None = None


def make_llm_policies(
    settings: LLMSettings,
    planner: Planner,
    coder: Coder | None,
    critic: Critic,
    *,
    sources: SourceLookup | None = None,
    ledger: UsageLedger | None = None,
    prompt_archive: str | Path | None = None,
    seed: int = 0,
) -> LLMPolicies:
    """Wrap the offline policies in LLM ones over one chat model built from ``settings``.

    Args:
        settings: where the LLM is and the run's budgets.
        planner, coder, critic: the offline policies (analysis, fallbacks, hard stops).
        sources: candidate id -> ``Candidate`` (the run store), so the coder can show the best
            after a resume.
        ledger: a ledger restored from the run store (resume keeps counting against the budget).
        prompt_archive: JSON file of the meta-prompt archive; enables meta-prompt evolution and
            is loaded when it exists.
        seed: seeds the archive's Generator.
    """
    client = LLMClient(make_chat_model(settings), settings, ledger)
    meta = None
    if prompt_archive is not None:
        path = Path(prompt_archive)
        archive = PromptArchive.load(path) if path.is_file() else PromptArchive(seed=seed)
        meta = MetaPrompter(client, archive, path=path)
    return LLMPolicies(
        planner=LLMPlanner(client, planner),
        coder=LLMCoder(client, fallback=coder, sources=sources, metaprompter=meta),
        critic=LLMCritic(client, critic, sources=sources),
        client=client,
        metaprompter=meta,
    )
