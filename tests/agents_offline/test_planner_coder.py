from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.agents.coder import TemplateCoder
from kernelwright.agents.critic import RuleCritic
from kernelwright.agents.matching import model_shape, op_spec_for
from kernelwright.agents.planner import RulePlanner, trace_task
from kernelwright.spec import Task, derive_contract
from kernelwright.spec.plan import Action, Decision, History, Profile, Roofline
from kernelwright.templates import get_template

TASKS = Path(__file__).resolve().parents[2] / "examples" / "tasks"

EXPECTED = {
    "l1_gelu": ("elementwise", {"ops": ["gelu_tanh"]}),
    "l1_layernorm": ("rowwise_norm", {"kind": "layernorm", "weight": "self.weight"}),
    "l1_matmul": ("gemm", {"a": "a", "b": "b", "b_layout": "kn", "epilogue": []}),
    "l1_rmsnorm": ("rowwise_norm", {"kind": "rmsnorm", "eps": "1e-06"}),
    "l1_row_softmax": ("rowwise_norm", {"kind": "softmax"}),
    "l1_sum_reduction": ("reduction", {"op": "sum", "keepdim": False}),
    "l1_transpose": ("layout", {"op": "transpose"}),
    "l2_add_layernorm": ("rowwise_norm", {"kind": "layernorm", "residual": "residual"}),
    "l2_matmul_bias_gelu": (
        "gemm",
        {"b": "self.weight", "b_layout": "nk", "epilogue": ["bias", "gelu_erf"]},
    ),
    "l2_scaled_matmul_softmax": (
        "gemm",
        {"batched": True, "softmax": True, "epilogue": ["scale"], "scale": "0.125"},
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_example_maps_to_the_right_op_spec(name):
    task = Task.from_path(TASKS / f"{name}.py")
    graph, shape = trace_task(task)
    spec = op_spec_for(graph, shape)
    kind, fields = EXPECTED[name]
    assert spec is not None and spec.operator_class == kind
    assert {k: getattr(spec, k) for k in fields} == fields


def test_unrecognised_graph_gets_no_template(tmp_path):
    path = tmp_path / "odd.py"
    path.write_text(
        "import torch\nfrom torch import nn\n"
        "class Model(nn.Module):\n    def forward(self, x):\n        return torch.cumsum(x, 0)\n"
        "def get_inputs():\n    return [torch.randn(64, 8)]\n"
    )
    task = Task.from_path(path)
    plan = RulePlanner().plan(task, derive_contract(task), "sycl")
    assert plan.templates == [] and "No kernel template" in plan.rationale


def test_model_shape_recreates_parameters_with_reference_names():
    module = Task.from_path(TASKS / "l2_matmul_bias_gelu.py").load_module()
    shape = model_shape(module)
    assert shape.init_args == "in_features: int, out_features: int"
    assert shape.inputs == ["x"]
    assert any(line.startswith("self.weight = nn.Parameter") for line in shape.init_body)


def test_a_model_without_init_gets_an_empty_constructor_and_a_runnable_candidate():
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "gelu.py"
    task = Task.from_path(fixture)
    assert model_shape(task.load_module()).init_args == ""
    contract = derive_contract(task)
    plan = RulePlanner().plan(task, contract, "cpp")
    candidates = TemplateCoder(seed=0).propose(task, contract, plan, _history([]), 1)
    assert candidates, plan.rationale
    namespace: dict = {}
    exec(compile(candidates[0].source, "<candidate>", "exec"), namespace)  # names resolve
    assert "Any" not in candidates[0].source and namespace["ModelNew"]() is not None


def _history(profiles, decision=None, round_sizes=None):
    best = max((p for p in profiles if p.correct), key=lambda p: p.speedup, default=None)
    return History(
        round=len(round_sizes or []),
        budget=20,
        spent=len(profiles),
        profiles=profiles,
        round_sizes=round_sizes or [],
        best=best,
        last_decision=decision,
    )


def test_coder_first_round_then_neighbours_of_the_best():
    task = Task.from_path(TASKS / "l1_row_softmax.py")
    contract = derive_contract(task)
    plan = RulePlanner().plan(task, contract, "sycl")
    coder = TemplateCoder(seed=1)
    first = coder.propose(task, contract, plan, _history([]), 3)
    templates = [get_template(name) for name in plan.templates]
    assert len(first) == 3  # every planned template at its defaults first, then neighbours
    assert first[0].origin == f"template:{templates[0].name}"
    assert first[0].params == templates[0].default_params()
    assert {c.origin for c in first} <= {f"template:{t.name}" for t in templates}
    best = first[0]
    profile = Profile(
        candidate_id=best.id,
        correct=True,
        level=5,
        speedup=1.5,
        template=best.origin,
        params=best.params,
    )
    decision = Decision(action=Action.VARY_PARAMS, reason="test")
    nxt = coder.propose(task, contract, plan, _history([profile], decision, [1]), 4)
    assert len(nxt) == 4 and best.id not in {c.id for c in nxt}
    for cand in nxt:  # one-step neighbours: exactly one parameter differs
        changed = [k for k in cand.params if cand.params[k] != best.params[k]]
        assert len(changed) == 1
    again = coder.propose(task, contract, plan, _history([profile], decision, [1]), 4)
    assert [c.id for c in again] == [c.id for c in nxt]  # deterministic for resume


def test_critic_rules():
    critic = RuleCritic(patience=2)
    plan = RulePlanner().plan(
        Task.from_path(TASKS / "l1_gelu.py"),
        derive_contract(Task.from_path(TASKS / "l1_gelu.py")),
        "sycl",
    )
    good = Profile(candidate_id="a", correct=True, level=5, speedup=2.0, template="template:x")
    assert critic.decide(plan, _history([good], None, [1]), 0).action == Action.VARY_PARAMS
    spent = _history([good], None, [1]).model_copy(update={"budget": 1})
    assert critic.decide(plan, spent, 0).action == Action.STOP
    at_roof = good.model_copy(
        update={"roofline": Roofline(bound="memory", bound_time_s=1, fraction=0.95)}
    )
    decision = critic.decide(plan, _history([at_roof], None, [1]), 0)
    assert decision.action == Action.STOP and "roofline" in decision.reason
    above = at_roof.model_copy(update={"roofline": Roofline(bound="memory", bound_time_s=1,
                                                            fraction=1.4)})
    assert critic.decide(plan, _history([above], None, [1]), 0).action != Action.STOP
    worse = [good] + [
        Profile(candidate_id=f"w{i}", correct=True, level=5, speedup=1.0, template="template:x")
        for i in range(2)
    ]
    stale = critic.decide(plan, _history(worse, None, [1, 1, 1]), 0)
    assert stale.action in (Action.SWITCH_TEMPLATE, Action.SEARCH)
    timed = RuleCritic(time_limit_s=10).decide(plan, _history([good], None, [1]), 11)
    assert timed.action == Action.STOP and "time limit" in timed.reason
