"""Meta-prompt archive: selection, fitness, eviction, persistence, lineage; section edits."""

from __future__ import annotations

import numpy as np
import pytest

from kernelwright.agents.metaprompter import (
    SECTION_NAMES,
    MetaPrompt,
    MetaPrompter,
    PromptArchive,
    apply_section_edits,
)
from kernelwright.errors import ReplyFormatError
from kernelwright.prompts import Edit
from kernelwright.prompts.context import Feedback


def child_of(parent: MetaPrompt, tag: str) -> MetaPrompt:
    sections = {**parent.sections, "common_pitfalls": parent.sections["common_pitfalls"] + tag}
    return MetaPrompt.create(sections, [parent.id], parent.generation + 1)


class ScriptedAsker:
    """A TextAsker returning scripted texts through the caller's parser (one repair round)."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)
        self.prompts: list[str] = []

    def ask(self, agent, messages, parse, want="code"):
        self.prompts.append(messages[-1][1])
        for _ in range(2):
            try:
                return parse(self.texts.pop(0))
            except ReplyFormatError:
                continue
        return None


def test_seed_prompt_has_the_four_sections_and_stable_id():
    seed = MetaPrompt.seed()
    assert set(seed.sections) == set(SECTION_NAMES)
    assert seed.id == MetaPrompt.seed().id and len(seed.id) == 12


def test_select_seeds_an_empty_archive_and_counts_uses():
    archive = PromptArchive(seed=0)
    prompt = archive.select()
    assert len(archive) == 1 and archive.stats[prompt.id].uses == 1


def test_fitness_is_the_best_score():
    archive = PromptArchive(seed=0)
    pid = archive.select().id
    for score in (2.0, 6.5, 4.0):
        archive.report(pid, score)
    assert archive.stats[pid].fitness == 6.5 and archive.stats[pid].samples == 3


def test_softmax_prefers_fit_prompts_and_penalises_use():
    archive = PromptArchive(seed=0, usage_penalty=1.0)
    seed = MetaPrompt.seed()
    good, bad = child_of(seed, "g"), child_of(seed, "b")
    archive.add(good)
    archive.add(bad)
    archive.report(good.id, 7.0)
    archive.report(bad.id, 3.0)
    ids = [good.id, bad.id]
    p = archive.probabilities(ids)
    assert p[0] > 0.95
    archive.stats[good.id].uses = 5  # heavy use brings it back toward the other
    assert archive.probabilities(ids)[0] < p[0]


def test_selection_explores_and_is_reproducible():
    def picks(seed: int) -> list[str]:
        archive = PromptArchive(seed=seed, explore=0.2, usage_penalty=0.0)
        base = MetaPrompt.seed()
        for i in range(4):
            archive.add(child_of(base, str(i)))
            archive.report(child_of(base, str(i)).id, 10.0 if i == 0 else 0.0)
        return [archive.select().id for _ in range(200)]

    a = picks(7)
    assert a == picks(7)
    best = max(set(a), key=a.count)
    assert 0.75 < a.count(best) / len(a) < 0.98  # exploit mostly, explore sometimes


def test_unscored_prompts_are_tried_optimistically():
    archive = PromptArchive(seed=0, usage_penalty=0.0)
    seed = MetaPrompt.seed()
    archive.add(seed)
    archive.report(seed.id, 5.0)
    fresh = child_of(seed, "new")
    archive.add(fresh)
    assert np.allclose(archive.probabilities([seed.id, fresh.id]), [0.5, 0.5])


def test_eviction_keeps_at_most_max_and_drops_the_weakest():
    archive = PromptArchive(max_prompts=3, seed=0)
    base = MetaPrompt.seed()
    kids = [child_of(base, str(i)) for i in range(4)]
    for i, kid in enumerate(kids[:3]):
        archive.add(kid)
        archive.report(kid.id, float(i))
    archive.add(kids[3])
    assert len(archive) == 3
    assert kids[0].id not in archive.prompts and kids[3].id in archive.prompts
    assert archive.lineage(kids[0].id) == [kids[0].id, base.id]  # lineage survives eviction


def test_lineage_nearest_first():
    archive = PromptArchive(seed=0)
    a = MetaPrompt.seed()
    b = child_of(a, "b")
    c = child_of(b, "c")
    for p in (a, b, c):
        archive.add(p)
    assert archive.lineage(c.id) == [c.id, b.id, a.id]
    archive.report(b.id, 3.0)
    rows = archive.lineage_table(c.id)
    assert [r["generation"] for r in rows] == [2, 1, 0]
    assert rows[1]["fitness"] == 3.0 and rows[0]["parents"] == [b.id]


def test_json_round_trip_keeps_rng_state(tmp_path):
    archive = PromptArchive(seed=5)
    archive.select()
    archive.add(child_of(MetaPrompt.seed(), "x"))
    path = tmp_path / "prompts.json"
    archive.save(path)
    again = PromptArchive.load(path)
    assert again.prompts == archive.prompts and again.stats == archive.stats
    assert [again.select().id for _ in range(20)] == [archive.select().id for _ in range(20)]


def test_section_edits_target_the_section_containing_the_search():
    seed = MetaPrompt.seed()
    line = seed.sections["analysis_guidance"].splitlines()[0] + "\n"
    out = apply_section_edits(seed.sections, [Edit(line, "Profile first.\n")])
    assert out["analysis_guidance"].startswith("Profile first.")
    assert out["common_pitfalls"] == seed.sections["common_pitfalls"]


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (Edit("text that is nowhere", "x"), "no section"),
        (Edit("the", "x"), "matches"),
        (Edit("- Out-of-bounds", "- " + "x" * 3000), "beyond"),
    ],
)
def test_section_edits_reject(edit, why):
    with pytest.raises(ReplyFormatError, match=why):
        apply_section_edits(MetaPrompt.seed().sections, [edit])


GOOD_EDIT = (
    "Diagnosis: ...\n<<<<<<< SEARCH\n- Missing barriers between writing and reading local memory,"
    " or barriers inside divergent code.\n=======\n- Barriers: every work-item must reach each "
    "barrier.\n>>>>>>> REPLACE\n"
)


def test_meta_prompter_evolves_every_second_sample():
    asker = ScriptedAsker("no edits at all", GOOD_EDIT)
    archive = PromptArchive(seed=0)
    meta = MetaPrompter(asker, archive, every=2)
    prompt = archive.select()
    feedback = Feedback(verdict="not correct (value_mismatch)", flags=["nondeterministic"])
    assert meta.observe(prompt, "SRC-1", feedback, score=4.0) is None and not asker.prompts
    child = meta.observe(prompt, "SRC-2", feedback, score=4.0, parent_score=6.0)
    assert child is not None and child.parents == [prompt.id] and child.generation == 1
    assert "every work-item must reach" in child.sections["common_pitfalls"]
    assert child.id in archive.prompts
    sent = asker.prompts[0]
    assert "SRC-2" in sent and "nondeterministic" in sent and "parent) scored 6" in sent
    assert "average 4 over 2 kernels" in sent and "5 plus the speedup" in sent


def test_meta_prompter_returns_none_when_replies_are_unusable():
    archive = PromptArchive(seed=0)
    meta = MetaPrompter(ScriptedAsker("nothing", "still nothing"), archive, every=1)
    assert meta.observe(archive.select(), "S", Feedback(), 1.0) is None
    assert len(archive) == 1


def test_archive_persists_per_task_family_across_runs(tmp_path):
    tmp_path = tmp_path / "data" / "meta_prompts"  # created on the first save
    first = MetaPrompter(ScriptedAsker(GOOD_EDIT), PromptArchive(seed=0), every=2,
                         family_dir=tmp_path)
    first.bind_family("cpp-elementwise")
    prompt = first.archive.select()
    first.observe(prompt, "SRC-1", Feedback(), 6.0)
    child = first.observe(prompt, "SRC-2", Feedback(), 7.0)
    assert child is not None and (tmp_path / "cpp-elementwise.json").is_file()

    second = MetaPrompter(ScriptedAsker(), PromptArchive(seed=1), family_dir=tmp_path)
    second.bind_family("cpp-elementwise")  # a later run (or campaign) of the same family
    assert set(second.archive.prompts) == {prompt.id, child.id}
    assert second.archive.stats[prompt.id].samples == 2
    assert second.archive.mean_of(prompt.id) == pytest.approx(6.5)
    other = MetaPrompter(ScriptedAsker(), PromptArchive(seed=1), family_dir=tmp_path)
    other.bind_family("sycl-gemm")
    assert len(other.archive) == 0  # another family starts from the seed


def test_a_prompt_scored_once_is_sampled_again_before_it_is_compared():
    archive = PromptArchive(seed=0, explore=0.0, usage_penalty=0.0)
    seed = MetaPrompt.seed()
    lucky = child_of(seed, "lucky")
    archive.add(seed)
    archive.add(lucky)
    for _ in range(3):
        archive.report(seed.id, 6.0)
    archive.stats[seed.id].uses = 3
    archive.report(lucky.id, 9.0)  # one lucky draw under timing noise
    assert archive.select().id == lucky.id  # a second sample first
    archive.report(lucky.id, 5.0)
    assert archive.stats[lucky.id].mean == pytest.approx(7.0)
    assert archive.best().id == lucky.id
    archive.report(lucky.id, 4.0)  # mean 6.0 ... now compared on means, not its best 9.0
    archive.report(lucky.id, 4.0)
    assert archive.best().id == seed.id
