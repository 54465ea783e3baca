"""SearchSpace: declared forms, Optuna distributions, grid, validation, compiler options."""

from __future__ import annotations

import numpy as np
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from kernelwright.tools.tune.space import (
    CategoricalParam,
    FloatParam,
    IntParam,
    SearchSpace,
    compiler_params,
    declared_param,
)


def test_declared_forms_map_to_typed_params():
    assert declared_param("b", [64, 128]) == CategoricalParam("b", (64, 128))
    assert declared_param("t", range(1, 9, 2)) == IntParam("t", 1, 7, 2)
    assert declared_param("v", {"low": 1, "high": 16, "log": True}) == IntParam(
        "v", 1, 16, 1, True
    )
    assert declared_param("f", {"low": 0.1, "high": 0.9, "step": 0.2}) == FloatParam(
        "f", 0.1, 0.9, 0.2
    )
    assert declared_param("l", {"choices": ["nchw", "nhwc"]}).values() == ["nchw", "nhwc"]
    with pytest.raises(ValueError, match="cannot read"):
        declared_param("x", 3)


def test_distributions_are_optuna_types():
    s = SearchSpace.from_declared(
        {"b": [64, 128], "t": {"low": 1, "high": 8, "step": 1}, "f": {"low": 0.0, "high": 1.0}}
    )
    d = s.distributions()
    assert isinstance(d["b"], CategoricalDistribution)
    assert isinstance(d["t"], IntDistribution) and d["t"].high == 8
    assert isinstance(d["f"], FloatDistribution)
    assert s.size is None  # a float without step has no grid


def test_grid_enumerates_every_combination_first_parameter_slowest():
    s = SearchSpace.from_declared(
        {"a": [1, 2], "b": range(0, 3), "v": {"low": 4, "high": 32, "log": True}}
    )
    points = list(s.grid())
    assert s.size == len(points) == 2 * 3 * 4
    assert points[0] == {"a": 1, "b": 0, "v": 4} and points[-1] == {"a": 2, "b": 2, "v": 32}
    assert len({tuple(p.values()) for p in points}) == len(points)


def test_fast_math_only_when_the_tolerance_allows():
    assert [p.name for p in compiler_params(False)] == ["opt_level", "unroll"]
    assert [p.name for p in compiler_params(True)][-1] == "fast_math"
    s = SearchSpace.from_declared({"block": [64]}, compiler=True, allow_fast_math=False)
    assert "fast_math" not in s.names and s.size == 1 * 2 * 4
    with pytest.raises(ValueError, match="duplicate"):
        SearchSpace.from_declared({"unroll": [1]}, compiler=True)


def test_validate_rejects_unknown_names_and_values():
    s = SearchSpace.from_declared({"b": [64, 128], "t": range(1, 5)})
    assert s.validate({"t": 2, "b": 64}) == {"b": 64, "t": 2}
    with pytest.raises(ValueError, match="do not match"):
        s.validate({"b": 64})
    with pytest.raises(ValueError, match="outside"):
        s.validate({"b": 96, "t": 2})
    with pytest.raises(ValueError, match="outside"):
        s.validate({"b": 64, "t": 9})


def test_samples_stay_inside_the_space():
    s = SearchSpace.from_declared(
        {
            "b": [64, 128],
            "t": range(2, 20, 3),
            "v": {"low": 1, "high": 64, "log": True},
            "f": {"low": 0.5, "high": 2.0, "log": True},
        }  # fmt: skip
    )
    rng = np.random.default_rng(0)
    for _ in range(500):
        p = s.sample(rng)
        assert s.params[0].contains(p["b"]) and s.params[1].contains(p["t"])
        assert 1 <= p["v"] <= 64 and 0.5 <= p["f"] <= 2.0
