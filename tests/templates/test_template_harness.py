"""One rendered template through the real harness (sandboxed worker), end to end."""

from __future__ import annotations

import pytest

from kernelwright.templates import get_template
from kernelwright.testing import harness_check as qc
from kernelwright.testing.template_specs import SPECS


@pytest.mark.requires_sycl
@pytest.mark.slow
def test_rendered_sycl_template_passes_the_harness():
    from kernelwright.tools.evaluate import evaluate

    candidate = get_template("sycl.elementwise_vec").candidate(None, SPECS["l1_gelu"])
    result = evaluate(qc.task_path("l1_gelu"), candidate)
    assert result.correct, result.summary()
    assert set(result.max_error) == {"nominal", "half_plus_one", "quarter_odd"}
