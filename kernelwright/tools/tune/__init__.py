"""Parameter tuning: search spaces, an Optuna ask/tell tuner, grid and random baselines."""

from kernelwright.tools.tune.base import (
    TrialRecord,
    TrialState,
    Tuner,
    score,
    should_prune,
)
from kernelwright.tools.tune.baselines import GridSearch, RandomSearch
from kernelwright.tools.tune.loop import run_tuning
from kernelwright.tools.tune.space import (
    CategoricalParam,
    FloatParam,
    IntParam,
    SearchSpace,
    compiler_params,
)
from kernelwright.tools.tune.tuner import OptunaTuner, make_sampler

__all__ = [
    "CategoricalParam",
    "FloatParam",
    "GridSearch",
    "IntParam",
    "OptunaTuner",
    "RandomSearch",
    "SearchSpace",
    "TrialRecord",
    "TrialState",
    "Tuner",
    "compiler_params",
    "make_sampler",
    "run_tuning",
    "score",
    "should_prune",
]
