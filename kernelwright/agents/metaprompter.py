"""Meta-prompts that co-evolve with the kernels (KernelFoundry, ICML 2026).

A prompt is the coder template plus four evolvable sections (optimisation philosophy,
strategies, common pitfalls, analysis guidance). After a kernel written with a prompt is
evaluated, a meta-prompter LLM edits the sections with SEARCH/REPLACE diffs, giving a child
prompt. Scores are KernelFoundry's fitness (ladder level 1-4, or 5 plus the speedup); selection is
uniform with probability ``explore`` (0.2), else softmax over the mean score with a usage
penalty (a prompt scored once is first sampled a second time, as one score under timing noise
proves nothing):

.. math::  p_i \\propto \\exp\\big((f_i - \\lambda\\,u_i) / T\\big)

where :math:`u_i` counts how often prompt :math:`i` was selected. The archive keeps at most 50
prompts, persists as JSON, and remembers every prompt's parents for ``kernelwright show``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from kernelwright.errors import ReplyFormatError
from kernelwright.prompts import Edit, apply_edits, load_data, parse_edits, render
from kernelwright.prompts.context import Feedback

SECTION_NAMES = (
    "optimisation_philosophy",
    "optimisation_strategies",
    "common_pitfalls",
    "analysis_guidance",
)
MAX_SECTION_CHARS = 2000
MIN_SAMPLES = 2  # scores a prompt needs before selection compares it
T = TypeVar("T")


class TextAsker(Protocol):
    """The LLM plug point (``kernelwright.agents.llm.LLMClient`` implements it)."""

    def ask(
        self, agent: str, messages: list[Any], parse: Callable[[str], T], want: str = "code"
    ) -> T | None: ...


class MetaPrompt(BaseModel):
    """One prompt: its evolvable sections and where it came from; ``id`` hashes the sections."""

    model_config = ConfigDict(frozen=True)
    id: str
    sections: dict[str, str]
    parents: list[str] = Field(default_factory=list)
    generation: int = 0

    @classmethod
    def create(
        cls, sections: dict[str, str], parents: list[str] | None = None, generation: int = 0
    ) -> MetaPrompt:
        blob = json.dumps({k: sections[k] for k in sorted(sections)}).encode()
        pid = hashlib.sha256(blob).hexdigest()[:12]
        return cls(id=pid, sections=dict(sections), parents=parents or [], generation=generation)

    @classmethod
    def seed(cls) -> MetaPrompt:
        """The hand-written starting prompt (``kernelwright/prompts/meta_sections.yaml``)."""
        data = load_data("meta_sections.yaml")
        if not isinstance(data, dict) or set(data) != set(SECTION_NAMES):
            raise ValueError(f"meta_sections.yaml must define exactly {SECTION_NAMES}")
        return cls.create({name: data[name] for name in SECTION_NAMES})


class PromptStats(BaseModel):
    """How a prompt has done: best kernel score (``None`` until one is scored) and uses."""

    fitness: float | None = None  # the best score (shown); selection uses the mean
    uses: int = 0
    samples: int = 0  # kernels scored with it
    total: float = 0.0  # sum of their scores

    @property
    def mean(self) -> float | None:
        return self.total / self.samples if self.samples else self.fitness


class PromptArchive:
    """At most ``max_prompts`` prompts with their stats, selection, lineage and JSON persistence.

    Example:
        >>> archive = PromptArchive(seed=0)
        >>> prompt = archive.select()
        >>> archive.report(prompt.id, 1.7)
        >>> archive.best().id == prompt.id
        True
    """

    def __init__(
        self,
        max_prompts: int = 50,
        seed: int = 0,
        explore: float = 0.2,
        temperature: float = 1.0,
        usage_penalty: float = 0.1,
    ) -> None:
        self.max_prompts = max_prompts
        self.explore = explore
        self.temperature = temperature
        self.usage_penalty = usage_penalty
        self.rng = np.random.default_rng(seed)
        self.prompts: dict[str, MetaPrompt] = {}
        self.stats: dict[str, PromptStats] = {}
        self.parents: dict[str, list[str]] = {}  # kept after eviction, for lineage

    def __repr__(self) -> str:
        return f"PromptArchive({len(self.prompts)}/{self.max_prompts} prompts)"

    def __len__(self) -> int:
        return len(self.prompts)

    def add(self, prompt: MetaPrompt) -> bool:
        """Insert ``prompt``; evict the weakest when full. False if it was already there."""
        self.parents.setdefault(prompt.id, list(prompt.parents))
        if prompt.id in self.prompts:
            return False
        self.prompts[prompt.id] = prompt
        self.stats[prompt.id] = PromptStats()
        while len(self.prompts) > self.max_prompts:
            self._evict(keep=prompt.id)
        return True

    def _evict(self, keep: str) -> None:
        def weakness(pid: str) -> tuple[float, int]:
            s = self.stats[pid]
            return (-math.inf if s.fitness is None else s.fitness, -s.uses)

        victim = min((p for p in self.prompts if p != keep), key=weakness)
        del self.prompts[victim], self.stats[victim]

    def select(self) -> MetaPrompt:
        """Pick a prompt for the next kernel (seeding the archive if empty) and count the use."""
        if not self.prompts:
            self.add(MetaPrompt.seed())
        ids = sorted(self.prompts)
        # One score under timing noise proves nothing: a prompt scored once is sampled again
        # (until it was chosen ``MIN_SAMPLES`` times) before the softmax compares means.
        thin = [i for i in ids if 0 < self.stats[i].samples < MIN_SAMPLES
                and self.stats[i].uses < MIN_SAMPLES]
        if thin:
            chosen = min(thin, key=lambda i: (self.stats[i].uses, i))
        elif self.rng.random() < self.explore:
            chosen = ids[int(self.rng.integers(len(ids)))]
        else:
            chosen = ids[int(self.rng.choice(len(ids), p=self.probabilities(ids)))]
        self.stats[chosen].uses += 1
        return self.prompts[chosen]

    def probabilities(self, ids: list[str]) -> np.ndarray:
        """Softmax over fitness minus the usage penalty; unscored prompts count as the best."""
        known = [s.mean for s in self.stats.values() if s.mean is not None]
        optimistic = max(known, default=0.0)
        values = np.array(
            [
                (optimistic if self.stats[i].mean is None else self.stats[i].mean)
                - self.usage_penalty * self.stats[i].uses
                for i in ids
            ],
            dtype=float,
        )
        z = (values - values.max()) / self.temperature
        weights = np.exp(z)
        return weights / weights.sum()

    def report(self, prompt_id: str, score: float) -> None:
        """Record the score of a kernel made with ``prompt_id`` (fitness = best score)."""
        stats = self.stats.get(prompt_id)
        if stats is None:
            return  # evicted meanwhile: nothing to update
        stats.samples += 1
        stats.total += score
        stats.fitness = score if stats.fitness is None else max(stats.fitness, score)

    def best(self) -> MetaPrompt | None:
        """The prompt with the best mean score (among those scored at least twice, if any)."""
        scored = [p for p in self.prompts if self.stats[p].samples]
        sure = [p for p in scored if self.stats[p].samples >= MIN_SAMPLES] or scored
        return self.prompts[max(sure, key=lambda p: self.stats[p].mean)] if sure else None

    def mean_of(self, prompt_id: str) -> float | None:
        stats = self.stats.get(prompt_id)
        return stats.mean if stats is not None else None

    def lineage(self, prompt_id: str) -> list[str]:
        """``prompt_id`` and all its ancestors, nearest first (each listed once)."""
        order, queue, seen = [], [prompt_id], set()
        while queue:
            pid = queue.pop(0)
            if pid in seen:
                continue
            seen.add(pid)
            order.append(pid)
            queue += self.parents.get(pid, [])
        return order

    def lineage_table(self, prompt_id: str) -> list[dict[str, Any]]:
        """Rows for ``kernelwright show``: each ancestor's id, generation, fitness and uses
        (``None`` fields for prompts evicted from the archive)."""
        rows = []
        for pid in self.lineage(prompt_id):
            prompt, stats = self.prompts.get(pid), self.stats.get(pid)
            rows.append(
                {
                    "id": pid,
                    "generation": prompt.generation if prompt else None,
                    "fitness": stats.fitness if stats else None,
                    "uses": stats.uses if stats else None,
                    "parents": self.parents.get(pid, []),
                }
            )
        return rows

    def to_json(self) -> dict[str, Any]:
        return {
            "max_prompts": self.max_prompts,
            "explore": self.explore,
            "temperature": self.temperature,
            "usage_penalty": self.usage_penalty,
            "rng": self.rng.bit_generator.state,
            "prompts": [p.model_dump() for p in self.prompts.values()],
            "stats": {k: v.model_dump() for k, v in self.stats.items()},
            "parents": self.parents,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PromptArchive:
        archive = cls(
            max_prompts=data["max_prompts"],
            explore=data["explore"],
            temperature=data["temperature"],
            usage_penalty=data["usage_penalty"],
        )
        archive.rng.bit_generator.state = data["rng"]
        archive.prompts = {p["id"]: MetaPrompt(**p) for p in data["prompts"]}
        archive.stats = {k: PromptStats(**v) for k, v in data["stats"].items()}
        archive.parents = {k: list(v) for k, v in data["parents"].items()}
        return archive

    def save(self, path: str | Path) -> None:
        """Write the archive as JSON atomically (write, then rename)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=1))
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path) -> PromptArchive:
        return cls.from_json(json.loads(Path(path).read_text()))


def apply_section_edits(sections: dict[str, str], edits: list[Edit]) -> dict[str, str]:
    """Apply each edit to the one section whose text contains its SEARCH part."""
    out = dict(sections)
    for n, edit in enumerate(edits, 1):
        hits = [name for name, text in out.items() if _contains(text, edit)]
        if len(hits) != 1:
            where = "no section" if not hits else f"{len(hits)} sections ({', '.join(hits)})"
            raise ReplyFormatError(
                f"the SEARCH part of edit #{n} matches {where}; copy lines of exactly one section"
            )
        out[hits[0]] = apply_edits(out[hits[0]], [edit], only_evolve_blocks=False)
        if len(out[hits[0]]) > MAX_SECTION_CHARS:
            raise ReplyFormatError(
                f"edit #{n} grows section {hits[0]} beyond {MAX_SECTION_CHARS} characters; keep "
                "each section short and general"
            )
    return out


def _contains(text: str, edit: Edit) -> bool:
    try:
        apply_edits(text, [edit], only_evolve_blocks=False)
    except ReplyFormatError:
        return False
    return True


class MetaPrompter:
    """Evolves prompts: every ``every`` scored kernels of a prompt, ask the LLM for a child.

    With ``path`` the archive is merged into that JSON file (under a lock) after every observation.

    Example:
        >>> meta = MetaPrompter(llm_client, PromptArchive(seed=1))  # doctest: +SKIP
        >>> prompt = meta.archive.select()  # doctest: +SKIP
        >>> child = meta.observe(prompt, source, feedback, score=1.4)  # doctest: +SKIP
    """

    def __init__(
        self,
        llm: TextAsker,
        archive: PromptArchive,
        every: int = 2,
        path: str | Path | None = None,
        family_dir: str | Path | None = None,
    ) -> None:
        self.llm = llm
        self.archive = archive
        self.every = every
        self.path = Path(path) if path is not None else None
        self.family_dir = Path(family_dir) if family_dir is not None else None

    def bind_family(self, family: str) -> None:
        """Use (and keep evolving) the archive of task family ``family`` in ``family_dir``:
        loaded when a run of that family left one, so prompts last across runs and campaigns.
        Without ``family_dir``, or once bound, nothing changes."""
        if self.family_dir is None or self.path is not None:
            return
        self.path = self.family_dir / f"{family}.json"
        if self.path.is_file():
            from kernelwright.agents.prompt_sync import load_archive

            self.archive = load_archive(self.path)

    def __repr__(self) -> str:
        return f"MetaPrompter({self.archive!r}, every={self.every})"

    def observe(
        self,
        prompt: MetaPrompt,
        child_source: str,
        feedback: Feedback,
        score: float,
        parent_score: float | None = None,
    ) -> MetaPrompt | None:
        """Record ``score`` for ``prompt``; evolve it when its sample count hits ``every``.

        ``parent_score`` defaults to the mean score of the prompt's parent prompt."""
        self.archive.report(prompt.id, score)
        if parent_score is None and prompt.parents:
            parent_score = self.archive.mean_of(prompt.parents[0])
        stats = self.archive.stats.get(prompt.id)
        child = None
        if stats is not None and stats.samples % self.every == 0:
            child = self.evolve(prompt, child_source, feedback, score, parent_score)
        if self.path is not None:  # concurrent runs of a family lose nothing (prompt_sync)
            from kernelwright.agents.prompt_sync import sync_archive

            sync_archive(self.archive, self.path)
        return child

    def evolve(
        self,
        prompt: MetaPrompt,
        child_source: str,
        feedback: Feedback,
        score: float,
        parent_score: float | None = None,
    ) -> MetaPrompt | None:
        """A child of ``prompt`` edited by the LLM (added to the archive), or None if it failed."""
        messages = [
            ("system", render("system.j2", role="the meta-prompter")),
            (
                "user",
                render(
                    "meta_prompter.j2",
                    sections=prompt.sections,
                    child_source=child_source,
                    feedback=feedback,
                    child_score=f"{score:.4g}",
                    prompt_mean=_fmt(self.archive.mean_of(prompt.id)),
                    samples=self.archive.stats[prompt.id].samples
                    if prompt.id in self.archive.stats else 0,
                    parent_score=None if parent_score is None else f"{parent_score:.4g}",
                ),
            ),
        ]

        def parse(text: str) -> dict[str, str]:
            return apply_section_edits(prompt.sections, parse_edits(text))

        sections = self.llm.ask("meta_prompter", messages, parse, want="edits")
        if sections is None or sections == prompt.sections:
            return None
        child = MetaPrompt.create(sections, [prompt.id], prompt.generation + 1)
        self.archive.add(child)
        return child


def _fmt(value: float | None) -> str | None:
    return None if value is None else f"{value:.4g}"
