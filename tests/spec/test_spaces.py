"""Implementation spaces: every space by default, narrowed by --spaces / KERNELWRIGHT_SPACES."""

import pytest
from typer.testing import CliRunner

from kernelwright.errors import TaskError
from kernelwright.spec import Contract, ImplementationSpace, ShapeVariant, TensorSpec
from kernelwright.spec.contract import DEFAULT_SPACES, parse_spaces

CUSTOM, VENDOR, FRAMEWORK = (ImplementationSpace.CUSTOM_KERNEL,
                             ImplementationSpace.VENDOR_LIBRARY, ImplementationSpace.FRAMEWORK)


def contract(spaces=None) -> Contract:
    spec = TensorSpec(shape=(4,), dtype="float32")
    v = ShapeVariant(name="nominal", kind="nominal", inputs=[spec], outputs=[spec])
    extra = {} if spaces is None else {"allowed_spaces": spaces}
    return Contract(task_name="t", task_hash="h", variants=[v], tolerances={}, **extra)


@pytest.mark.parametrize(("text", "want"), [
    ("all", [CUSTOM, VENDOR, FRAMEWORK]),
    ("Custom", [CUSTOM]),
    ("VENDOR,custom", [VENDOR, CUSTOM]),
    (" framework , custom_kernel ", [FRAMEWORK, CUSTOM]),
    ("custom,custom", [CUSTOM]),
])
def test_parse_spaces(text, want):
    assert parse_spaces(text) == want


def test_parse_spaces_names_the_choices():
    with pytest.raises(ValueError, match="'cuda'.*all, custom, vendor, framework"):
        parse_spaces("custom,cuda")


def test_default_contract_allows_every_space_and_narrowing_keeps_the_order():
    c = contract()
    assert c.allowed_spaces == list(DEFAULT_SPACES)
    assert c.narrowed(None) is c
    assert c.narrowed([FRAMEWORK, CUSTOM]).allowed_spaces == [CUSTOM, FRAMEWORK]
    assert not c.narrowed([CUSTOM]).allows(VENDOR)


def test_narrowing_to_nothing_says_what_the_task_allows():
    with pytest.raises(TaskError, match="allows only custom_kernel.*vendor_library"):
        contract([CUSTOM]).narrowed([VENDOR])


@pytest.mark.parametrize("command", ["optimize", "campaign"])
def test_cli_rejects_a_bad_spaces_value_before_running(command, tmp_path):
    from kernelwright.cli import app

    args = [command, str(tmp_path)] + (["--hours", "1"] if command == "campaign" else [])
    result = CliRunner().invoke(app, args + ["--spaces", "gpu"])
    assert result.exit_code == 2
    assert "unknown implementation space 'gpu'" in result.output


def test_cli_passes_spaces_to_the_settings(monkeypatch, tmp_path):
    import kernelwright
    from kernelwright.cli import app

    seen = {}

    def fake(task, settings, **kw):
        seen["spaces"] = settings.spaces
        raise kernelwright.errors.TaskError("stop here")

    monkeypatch.setattr(kernelwright, "optimize", fake)
    result = CliRunner().invoke(app, ["optimize", "examples/tasks/l1_gelu.py",
                                      "--spaces", "Custom,Vendor",
                                      "--json"])
    assert result.exit_code == 2 and seen["spaces"] == "custom_kernel,vendor_library"


def test_plan_says_per_group_space_and_own_kernel_share():
    from kernelwright.spec import GroupSpace, Plan
    from kernelwright.spec.opclass import OperatorClass

    groups = [GroupSpace(group="g0", kind="gemm", space=VENDOR, form="oneDNN post-ops",
                         why="measured", timings_ms={"a": 1.0}),
              GroupSpace(group="g1", kind="rows", space=CUSTOM, form="our kernel")]
    plan = Plan(operator_class=OperatorClass.GEMM, implementation_space=VENDOR, backend="cpp",
                strategy="s", rationale="r", groups=groups, own_kernel_share=0.25)
    line = plan.spaces_line()
    assert line == ("spaces: g0 gemm vendor_library (oneDNN post-ops), g1 rows custom_kernel; "
                    "25% of the time in our own kernels")
    again = Plan.model_validate_json(plan.model_dump_json())  # stored with the run
    assert again.groups == groups and again.own_kernel_share == 0.25
    assert Plan(operator_class=OperatorClass.GEMM, implementation_space=VENDOR, backend="cpp",
                strategy="s", rationale="r").spaces_line() == ""
