"""The LLM team: the LLM policies of the planner, coder and critic over one client.

One chat model and one usage ledger serve every role, so the run's budget covers them all; the
offline policies stay inside as analysis, fallbacks and hard stops.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kernelwright.agents.coder import Coder, LLMCoder
from kernelwright.agents.critic import Critic, LLMCritic
from kernelwright.agents.journal import CallJournal
from kernelwright.agents.llm import LLMClient, make_chat_model
from kernelwright.agents.metaprompter import MetaPrompter, PromptArchive
from kernelwright.agents.planner import LLMPlanner, Planner
from kernelwright.agents.prompt_sync import load_archive
from kernelwright.agents.prompting import SourceLookup
from kernelwright.agents.usage import UsageLedger
from kernelwright.config import LLMSettings
from kernelwright.spec.plan import History


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
    prompt_family_dir: str | Path | None = None,
    seed: int = 0,
    machine: str | None = None,
    context: Callable[[], tuple[str | None, str | None]] | None = None,
    can_search: Callable[[History], bool] | None = None,
    journal: CallJournal | None = None,
    deadline: float | None = None,
) -> LLMPolicies:
    """Wrap the offline policies in LLM ones over one chat model built from ``settings``.

    Args:
        settings: where the LLM is and the run's budgets.
        planner, coder, critic: the offline policies (analysis, fallbacks, hard stops).
        sources: candidate id -> ``Candidate`` (the run store), so the coder can show the best
            after a resume.
        ledger: a ledger restored from the run store (resume keeps counting against the budget).
        prompt_family_dir: folder of meta-prompt archives per task family (backend and operator
            class, known once the plan is); enables meta-prompt evolution that lasts across runs.
        prompt_archive: JSON file of the meta-prompt archive; enables meta-prompt evolution and
            is loaded when it exists.
        seed: seeds the archive's Generator.
        machine: the hardware in a few lines (coder and critic prompts).
        context: () -> (contract text, reference source), for the critic.
        can_search: whether the tuner still has a point to propose (checks an LLM ``search``).
        journal: the run's transcript (written per call; a resume replays what it holds).
        deadline: epoch seconds after which no request is sent (the run's time limit).
    """
    client = LLMClient(
        make_chat_model(settings), settings, ledger, journal=journal, deadline=deadline
    )
    meta = None
    if prompt_archive is not None:
        path = Path(prompt_archive)
        archive = load_archive(path) if path.is_file() else PromptArchive(seed=seed)
        meta = MetaPrompter(client, archive, path=path)
    elif prompt_family_dir is not None:
        meta = MetaPrompter(client, PromptArchive(seed=seed), family_dir=Path(prompt_family_dir))
    return LLMPolicies(
        planner=LLMPlanner(client, planner),
        coder=LLMCoder(
            client, fallback=coder, sources=sources, metaprompter=meta, machine=machine
        ),
        critic=LLMCritic(
            client, critic, sources=sources, context=context, machine=machine,
            can_search=can_search,
        ),
        client=client,
        metaprompter=meta,
    )
