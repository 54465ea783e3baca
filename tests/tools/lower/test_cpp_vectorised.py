"""The C++ backend's compile options let g++ vectorise the kernels' inner loops: a batch norm
in eval mode divides by sqrt(var + eps) per element, which stays scalar ("control flow in
loop": libm's errno branch) without -fno-math-errno."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kernelwright.spec import Task
from kernelwright.tools.backends.cpp import DEFAULT_FLAGS
from kernelwright.tools.lower import lower_task
from kernelwright.tools.lower.backends import codegen_for

TASK = Path(__file__).resolve().parents[2] / "corpus" / "tasks" / "l2_conv2d_batchnorm_relu.py"


def _missed(source: str, options: tuple[str, ...], tmp_path: Path) -> list[str]:
    path = tmp_path / "k.cpp"
    path.write_text(source)
    done = subprocess.run(["g++", *DEFAULT_FLAGS, *options, "-fPIC", "-shared",
                           "-fopt-info-vec-missed", str(path), "-o", str(tmp_path / "k.so")],
                          capture_output=True, text=True, timeout=300, check=True)
    first = next(i for i, line in enumerate(source.splitlines()) if 'extern "C"' in line)
    return [line for line in done.stderr.splitlines()
            if (m := re.search(r"k\.cpp:(\d+):", line)) and int(m.group(1)) > first
            and "control flow in loop" in line]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_sqrt_in_a_kernel_loop_is_vectorised(tmp_path):
    source = lower_task(Task.from_path(TASK), "cpp").source
    assert "std::sqrt" in source
    options = codegen_for("cpp").compile_options
    assert _missed(source, options, tmp_path) == []
    without = tuple(o for o in options if o != "-fno-math-errno")
    assert _missed(source, without, tmp_path)  # the option is what makes the difference
