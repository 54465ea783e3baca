"""The coder: writes candidate modules for a plan.

The role's protocol (:class:`Coder`); its offline policy (:class:`LoweredCoder`: move through the
lowered program's declared schedule space, deterministic for a given history as its generator is
seeded by the run seed and the round, so a resumed run proposes what the interrupted one would
have); and its LLM policy (:class:`LLMCoder`: whole modules or SEARCH/REPLACE edits, starting
from the lowered program's source, with meta-prompt evolution).
"""

from __future__ import annotations

import logging
from typing import Protocol, runtime_checkable

import numpy as np

from kernelwright.agents.attempts import (
    attempt_of,
    attempt_window,
    parent_feedback,
    short_diff,
    shown_block,
)
from kernelwright.agents.llm import LLMClient
from kernelwright.agents.lowered import (
    SOURCE_NAME,
    LoweredSource,
    SourceCache,
    base_params,
    neighbours,
    random_points,
    switches,
)
from kernelwright.agents.metaprompter import MetaPrompter
from kernelwright.agents.prompting import (
    SourceLookup,
    advice_for,
    chat_messages,
    feedback_from_profile,
    lookup_source,
    plan_text,
    profile_fitness,
    profile_summary,
)
from kernelwright.agents.variants import view_of
from kernelwright.errors import LLMBudgetError, LoweringError, ReplyFormatError
from kernelwright.prompts import (
    apply_edits,
    check_module,
    evolve_regions,
    extract_module,
    parse_edits,
    render,
)
from kernelwright.prompts.context import Exemplar
from kernelwright.spec import Candidate, Contract, Task
from kernelwright.spec.plan import Action, History, Plan
from kernelwright.tools.evolve.descriptors import describe

log = logging.getLogger(__name__)


@runtime_checkable
class Coder(Protocol):
    """Writes candidates for a plan, learning from the history of evaluated ones."""

    def propose(
        self, task: Task, contract: Contract, plan: Plan, history: History, n: int
    ) -> list[Candidate]:
        """Up to ``n`` new candidates not yet in ``history`` (empty when it has no more ideas)."""
        ...


class LoweredCoder:
    """Offline coder over the lowered program's schedule and fusion decisions.

    First round: the lowered program at its default schedule. Then, following the critic:
    vary -> one-step neighbours of the parent's (or best's) schedule (then two-step); search ->
    random points; switch strategy -> the other value of each implementation-space, launch and
    row-strategy choice first. Deterministic for a given history (seeded by the run seed and the
    round), so a resumed run proposes what the interrupted one would have. A plan with no source
    (a reference that does not lower) gets nothing.

    Example:
        >>> LoweredCoder(seed=0)
        LoweredCoder(seed=0)
    """

    def __init__(self, seed: int = 0, cache: SourceCache | None = None) -> None:
        self.seed = seed
        self.cache = cache or SourceCache()

    def _source(self, task: Task, contract: Contract, plan: Plan) -> LoweredSource | None:
        if SOURCE_NAME not in plan.sources:
            return None
        try:
            return self.cache.get(task, contract, plan.backend)
        except LoweringError:
            return None

    def space(self, task: Task, contract: Contract, plan: Plan) -> dict[str, list] | None:
        """The lowered program's declared schedule space (``None`` when it does not lower)."""
        source = self._source(task, contract, plan)
        return source.space() if source is not None else None

    def seed_candidate(self, task: Task, contract: Contract, plan: Plan) -> Candidate | None:
        """The lowered program at its defaults: the LLM coder's starting point."""
        source = self._source(task, contract, plan)
        return source.candidate(source.default_params()) if source is not None else None

    def propose(self, task: Task, contract: Contract, plan: Plan, history: History,
                n: int) -> list[Candidate]:
        source = self._source(task, contract, plan) if n > 0 else None
        if source is None:
            return []
        rng = np.random.default_rng([self.seed, history.round])
        seen = {p.candidate_id for p in history.profiles}
        out: dict[str, Candidate] = {}
        for params in self._ideas(source, history, rng):
            cand = source.candidate(params)
            if cand.id not in seen:
                out.setdefault(cand.id, cand)
            if len(out) >= n:
                break
        return list(out.values())

    def _ideas(self, source: LoweredSource, history: History, rng: np.random.Generator):
        space, base = source.space(), base_params(source, history)
        action = history.last_decision.action if history.last_decision else None
        yield source.default_params()
        if action == Action.SWITCH_STRATEGY:
            yield from switches(space, base)
        if action == Action.SEARCH:
            yield from random_points(space, rng, 32)
        yield from neighbours(space, base, rng, steps=1)
        yield from switches(space, base)
        yield from neighbours(space, base, rng, steps=2)
        yield from random_points(space, rng, 64)

    def __repr__(self) -> str:
        return f"LoweredCoder(seed={self.seed})"


def coder_parser(parent_source: str | None, edit_mode: bool):
    """A ``text -> module source`` parser for coder replies.

    In edit mode the reply should hold SEARCH/REPLACE edits of the parent's evolve blocks; a
    reply with no edit markers at all but one complete module is taken as that module (models
    often rewrite the whole file). Otherwise the reply must hold one complete module. Either way
    the result must parse and define ``ModelNew``.
    """

    def parse(text: str) -> str:
        if edit_mode and parent_source is not None:
            if "<<<<<<<" not in text:
                try:
                    return extract_module(text)
                except ReplyFormatError as exc:
                    if "```" in text:  # a module that does not parse: say that, not "no edit"
                        raise ReplyFormatError(
                            f"{exc} (or reply with SEARCH/REPLACE edits of the kernel instead)"
                        ) from exc
                    # neither edits nor a module: the edit format's help is the better hint
            return check_module(apply_to_view(parent_source, parse_edits(text)))
        return extract_module(text)

    return parse


def apply_to_view(source: str, edits: list) -> str:
    """Apply edits to what the coder saw of ``source``: a lowered module's view (then every
    shape variant is written from the edited nominal kernels), else its evolve blocks."""
    view = view_of(source)
    if view is None:
        return apply_edits(source, edits)
    return view.module(apply_edits(view.text, edits, only_evolve_blocks=False))


def _cell(candidate: Candidate) -> tuple[int, ...]:
    """The MAP-Elites cell of a candidate: its source's memory/compute/parallelism levels."""
    try:
        return tuple(describe(candidate.source, candidate.backend))
    except ValueError:  # a backend with no pattern table (torch): guess from the text
        return tuple(describe(candidate.source))


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
        repeat_asks: int = 2,
        attempts: int = 6,
        machine: str | None = None,
    ) -> None:
        self.client = client
        self.attempts = attempts
        self.machine = machine
        self.repeat_asks = repeat_asks
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
        return lookup_source(self.lookup, candidate_id)

    def propose(
        self, task: Task, contract: Contract, plan: Plan, history: History, n: int
    ) -> list[Candidate]:
        if self.metaprompter is not None:
            self.metaprompter.bind_family(f"{plan.backend}-{plan.operator_class.value}")
        self._report_scores(history)
        out: list[Candidate] = []
        seed = getattr(self.fallback, "seed_candidate", None)
        start = None
        if not history.profiles and seed is not None and n > 0:
            # Round one: the lowered program, so the LLM starts from (and edits) a correct kernel.
            start = seed(task, contract, plan)
            if start is not None:
                self._known[start.id] = start
                out.append(start)
        for _ in range(max(n - len(out), 0)):
            if self.client.over_budget():
                break
            try:
                candidate = self._one(task, contract, plan, history, out, start)
            except LLMBudgetError:
                break
            if candidate is not None:
                self._known[candidate.id] = candidate
                out.append(candidate)
        if not out and self.fallback is not None and not self.client.over_budget():
            return self.fallback.propose(task, contract, plan, history, n)
        return out

    def parent_of(self, history: History, start: Candidate | None) -> Candidate | None:
        """The candidate to edit: the search's chosen parent (MAP-Elites), else the best, else
        the lowered seed of round one."""
        chosen = history.parent or history.best
        parent = self.source(chosen.candidate_id) if chosen is not None else None
        return parent if parent is not None else start

    def _one(
        self, task: Task, contract: Contract, plan: Plan, history: History,
        round_so_far: list[Candidate], start: Candidate | None = None,
    ) -> Candidate | None:
        """One new candidate from the LLM, or ``None``.

        A reply that repeats an evaluated candidate (or one of this round) is answered with
        that fact and the reason it failed or how fast it was (prompts/repeat.j2), at most
        ``repeat_asks`` times; then ``None`` (the offline coder steps in).
        """
        seen = {p.candidate_id for p in history.profiles} | {c.id for c in round_so_far}
        parent = self.parent_of(history, start)
        parent_profile = next(
            (p for p in history.profiles if parent and p.candidate_id == parent.id), None
        )
        edit_mode = parent is not None and bool(evolve_regions(parent.source))
        prompt = self.metaprompter.archive.select() if self.metaprompter else None
        attempts = attempt_window(history, self.source, self.attempts)
        user = render(
            "coder.j2",
            sections=prompt.sections if prompt else {},
            contract=contract.render(),
            reference_source=task.path.read_text(),
            plan=self._plan_with_critique(plan, history),
            backend=plan.backend,
            machine=self.machine,
            schedule=self._schedule(task, contract, plan, parent_profile),
            advice=advice_for(plan, 3),
            parent=Exemplar(
                source=shown_block(parent.source) if edit_mode else parent.source,
                summary=profile_summary(parent_profile) if parent_profile else "the lowered seed",
            )
            if parent
            else None,
            feedback=parent_feedback(parent_profile) if parent_profile else None,
            attempts=[a for a in attempts if not parent or a.candidate_id != parent.id],
            inspirations=self._inspirations(history, parent),
            siblings=[short_diff(parent.source, c.source) for c in round_so_far
                      if parent is not None and c.id != parent.id],
            edit_mode=edit_mode,
        )
        parse = coder_parser(parent.source if parent else None, edit_mode)
        want = "edits" if edit_mode else "code"
        messages = chat_messages("the coder", user)
        for _ in range(1 + self.repeat_asks):
            source = self.client.ask("coder", messages, parse, want=want)
            if source is None:
                return None
            candidate = Candidate(
                source=source,
                backend=plan.backend,
                origin="llm",
                parent=parent.id if parent else None,
                prompt_id=prompt.id if prompt else None,
            )
            if candidate.id not in seen:
                return candidate
            earlier = next((p for p in history.profiles if p.candidate_id == candidate.id), None)
            note = render(
                "repeat.j2",
                candidate_id=candidate.id,
                summary=attempt_of(earlier, self.source).line() if earlier else "",
                evaluated=earlier is not None,
                edit_mode=edit_mode,
            )
            shown = short_diff(parent.source, source) if parent else source
            messages = [*messages, ("assistant", shown), ("user", note)]
            if self.client.over_budget():
                return None
        log.info("coder: the LLM repeated evaluated kernels %d times", 1 + self.repeat_asks)
        return None

    def _schedule(self, task: Task, contract: Contract, plan: Plan, parent) -> str | None:
        """The schedule space in one line per parameter, the parent's value marked."""
        space_of = getattr(self.fallback, "space", None)
        space = space_of(task, contract, plan) if space_of is not None else None
        if not space:
            return None
        current = parent.params if parent is not None else {}
        return "\n".join(
            f"- {name}: {', '.join(map(str, values))}"
            + (f" (this kernel: {current[name]})" if name in current else "")
            for name, values in space.items()
        )

    @staticmethod
    def _plan_with_critique(plan: Plan, history: History) -> str:
        text = plan_text(plan)
        if history.last_decision is not None:
            text += f"\nThe critic's last verdict: {history.last_decision.reason}"
        return text

    def _inspirations(self, history: History, parent: Candidate | None) -> list[Exemplar]:
        """Correct kernels unlike the parent, as diffs against it: the fastest of each
        MAP-Elites cell (the static behaviour descriptors of its source, ``tools.evolve``), at
        most one per cell."""
        if parent is None:
            return []
        ranked = sorted(
            (p for p in history.profiles if p.correct and p.candidate_id != parent.id),
            key=lambda p: -(p.speedup or 0.0),
        )
        out: list[Exemplar] = []
        cells: set[tuple[int, ...]] = set()
        for p in ranked:
            cand = self.source(p.candidate_id)
            if cand is None or len(out) >= self.inspirations:
                continue
            cell = _cell(cand)
            if cell in cells:
                continue
            diff = short_diff(parent.source, cand.source)
            if diff:
                cells.add(cell)
                out.append(Exemplar(source=diff, summary=profile_summary(p)))
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
                    prompt, cand.source, feedback_from_profile(p), profile_fitness(p)
                )
            except LLMBudgetError:
                return
