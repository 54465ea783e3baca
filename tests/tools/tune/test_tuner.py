"""Tuners: objective mapping, enqueue, dedupe, resume, efficiency on a recorded table."""

from __future__ import annotations

import statistics

import pytest

from kernelwright.errors import ConfigError, SpaceExhaustedError
from kernelwright.spec.candidate import Candidate
from kernelwright.spec.result import EvalResult, Level
from kernelwright.tools.tune import tuner as tuner_mod
from kernelwright.tools.tune.base import TrialState, score, should_prune
from kernelwright.tools.tune.baselines import GridSearch, RandomSearch
from kernelwright.tools.tune.loop import run_tuning
from kernelwright.tools.tune.tuner import OptunaTuner, make_sampler


def evals_to_reach(tuner, table, target: float, budget: int) -> int:
    while tuner.n_evaluations < budget and not tuner.exhausted:
        number, params = tuner.ask()
        tuner.tell(number, table.result(params))
        best = tuner.best()
        if best and best[1] >= target:
            return tuner.n_evaluations
    return budget


@pytest.mark.slow
def test_tpe_finds_the_optimum_in_fewer_evaluations_than_grid_on_average(table):
    n = len(table.rows)
    seeds = range(5)
    tpe = [
        evals_to_reach(OptunaTuner(table.space(), seed=s), table, table.best(), n) for s in seeds
    ]
    rnd = [
        evals_to_reach(RandomSearch(table.space(), seed=s), table, table.best(), n) for s in seeds
    ]
    grid = evals_to_reach(GridSearch(table.space()), table, table.best(), n)
    assert all(e < n for e in tpe)  # it did find the optimum every time
    assert statistics.mean(tpe) < 0.6 * (n + 1) / 2  # a randomly ordered grid needs (n+1)/2
    assert statistics.mean(tpe) < statistics.mean(rnd)
    assert statistics.mean(tpe) < grid


def result(level: Level, speedup: float | None = None) -> EvalResult:
    from kernelwright.tools.tune.recorded import RecordedTable

    t = RecordedTable("t", {"b": [1]}, {'{"b": 1}': [level, speedup]})
    return t.result({"b": 1})


def test_score_maps_verdicts_to_trial_outcomes():
    assert score(result(Level.CORRECT, 2.0)) == (TrialState.COMPLETE, 2.0)
    assert score(result(Level.VALUE_MISMATCH)) == (TrialState.FAIL, None)
    assert score(result(Level.VALUE_MISMATCH), incorrect="worst") == (TrialState.COMPLETE, 0.0)
    assert score(result(Level.BUILD_FAILED)) == (TrialState.PRUNED, None)
    assert score(result(Level.SYNTAX_ERROR)) == (TrialState.PRUNED, None)
    assert score(result(Level.RUNTIME_ERROR)) == (TrialState.FAIL, None)


def test_should_prune_policy():
    assert not should_prune(5.0, None)
    assert not should_prune(2.9, 1.0)
    assert should_prune(3.1, 1.0)
    assert should_prune(1.6, 1.0, factor=1.5)


@pytest.mark.parametrize("make", [
    lambda s: OptunaTuner(s, seed=0), lambda s: GridSearch(s), lambda s: RandomSearch(s, seed=0),
])  # fmt: skip
def test_enqueued_proposals_are_asked_first_and_validated(table, make):
    t = make(table.space())
    proposal = {"block": 256, "tile": 4, "unroll": 2, "vec": 4}
    t.enqueue(proposal)
    number, params = t.ask()
    assert params == proposal
    rec = t.tell(number, table.result(params))
    assert rec.state is TrialState.COMPLETE and rec.value == table.result(proposal).speedup
    with pytest.raises(ValueError, match="outside"):
        t.enqueue({**proposal, "block": 48})


def test_optuna_tell_records_states_and_best(table):
    t = OptunaTuner(table.space(), seed=3)
    outcomes = [Level.CORRECT, Level.BUILD_FAILED, Level.VALUE_MISMATCH]
    for level in outcomes:
        n, _ = t.ask()
        t.tell(n, result(level, 1.5 if level == Level.CORRECT else None))
    states = [r.state for r in t.trials()]
    assert states == [TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL]
    assert t.best()[1] == 1.5 and t.n_evaluations == 3
    with pytest.raises(ValueError, match="not running"):
        t.tell(0, result(Level.CORRECT, 2.0))


@pytest.mark.parametrize("make", [lambda s: OptunaTuner(s, seed=0), GridSearch])
def test_prune_hook_uses_the_best_time_so_far(table, make):
    t = make(table.space())
    assert t.best_time_s is None
    n, p = t.ask()
    while not table.result(p).correct:
        t.tell(n, table.result(p))
        n, p = t.ask()
    t.tell(n, table.result(p))
    best = table.result(p).timing.candidate_median_s
    assert t.best_time_s == best
    n, _ = t.ask()
    assert should_prune(3.5 * best, t.best_time_s) and not should_prune(1.1 * best, t.best_time_s)
    t.prune(n)
    assert t.trials_by_number()[n].state is TrialState.PRUNED


def test_dedupe_answers_repeats_from_history_without_evaluating():
    from kernelwright.tools.tune.space import SearchSpace

    space = SearchSpace.from_declared({"b": [1, 2, 3]})
    t = OptunaTuner(space, seed=0, n_startup_trials=2)
    seen = []
    with pytest.raises(SpaceExhaustedError):
        for _ in range(10):
            n, p = t.ask()
            seen.append(p["b"])
            t.tell_value(n, float(p["b"]), TrialState.COMPLETE)
            if t.exhausted:
                t.ask()
    assert sorted(seen) == [1, 2, 3] and t.n_evaluations == 3
    assert t.best() == ({"b": 3}, 3.0)


def test_grid_search_is_exhaustive_then_stops():
    from kernelwright.tools.tune.space import SearchSpace

    g = GridSearch(SearchSpace.from_declared({"a": [1, 2], "b": [10, 20]}))
    g.enqueue({"a": 2, "b": 20})
    asked = [g.ask()[1] for _ in range(4)]
    assert asked[0] == {"a": 2, "b": 20} and len({(p["a"], p["b"]) for p in asked}) == 4
    assert g.exhausted
    with pytest.raises(SpaceExhaustedError):
        g.ask()


def test_random_search_draws_without_replacement(table):
    r = RandomSearch(table.space(), seed=1)
    keys = {tuple(r.ask()[1].values()) for _ in range(len(table.rows))}
    assert len(keys) == len(table.rows)


def test_journal_resume_keeps_history_and_numbering(tmp_path, table):
    path = tmp_path / "tune.journal"
    a = OptunaTuner(table.space(), storage_path=path, seed=0)
    for _ in range(4):
        n, p = a.ask()
        a.tell(n, table.result(p))
    b = OptunaTuner(table.space(), storage_path=path, seed=0)
    assert b.recovered == [] and b.n_evaluations == 4 and b.best() == a.best()
    before = [t.params for t in a.trials()]
    number, params = b.ask()  # the resumed sampler is reseeded: no replayed proposals
    assert number == 4 and params not in before


def test_sampler_choice(monkeypatch):
    import optuna

    assert isinstance(make_sampler("tpe", 0), optuna.samplers.TPESampler)
    with pytest.raises(ConfigError, match="choose one of"):
        make_sampler("cma", 0)
    monkeypatch.setattr(tuner_mod, "gp_available", lambda: False)
    assert isinstance(make_sampler("auto", 0), optuna.samplers.TPESampler)
    with pytest.raises(ConfigError, match="pip install scipy"):
        make_sampler("gp", 0)
    monkeypatch.setattr(tuner_mod, "gp_available", lambda: True)
    assert isinstance(make_sampler("auto", 0), optuna.samplers.GPSampler)


def test_run_tuning_spends_the_budget_through_evaluate(table):
    calls = []

    def evaluate(c: Candidate) -> EvalResult:
        calls.append(c.params)
        return table.result(c.params)

    t = OptunaTuner(table.space(), seed=2)
    best = run_tuning(t, evaluate, lambda p: Candidate(source="x", params=dict(p)), budget=25)
    assert len(calls) == 25 == t.n_evaluations
    assert best[1] == max(table.result(p).speedup or 0 for p in calls)


def test_run_tuning_prunes_parameter_sets_the_template_rejects(table):
    from kernelwright.errors import ConfigError

    def make(p):
        if p["tile"] % 2:
            raise ConfigError("tile must be even")
        return Candidate(source="x", params=dict(p))

    t = RandomSearch(table.space(), seed=0)
    run_tuning(t, lambda c: table.result(c.params), make, budget=10)
    rejected = [r for r in t.trials() if r.attrs.get("outcome") == "invalid_params"]
    assert rejected and all(r.state is TrialState.PRUNED for r in rejected)
    assert t.n_evaluations == 10 and all(
        r.params["tile"] % 2 == 0 for r in t.trials() if r.evaluated
    )
