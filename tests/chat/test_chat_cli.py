"""The chat command's edges without running a search: asking for a task, resume of a chat run."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app
from kernelwright.graphs.store import RunStore


def test_chat_asks_for_a_task_and_quits_cleanly(tmp_path):
    result = CliRunner().invoke(
        app, ["chat", "--store", str(tmp_path)], input="make it faster [red]now[/red]\n/quit\n"
    )
    assert result.exit_code == 0, result.output
    assert "which task?" in result.output
    assert RunStore(tmp_path).run_ids() == []  # nothing was started


def test_chat_rejects_a_missing_file(tmp_path):
    result = CliRunner().invoke(
        app, ["chat", "--store", str(tmp_path)], input=f"speed up {tmp_path}/nope.py\n"
    )
    assert result.exit_code == 0 and "no such file" in result.output


def test_resume_names_the_chat_command_for_a_chat_thread(tmp_path):
    RunStore(tmp_path).create_run("chat-x", {"kind": "chat", "task": "t", "backend": "cpp"})
    result = CliRunner().invoke(app, ["resume", "chat-x", "--store", str(tmp_path)])
    assert result.exit_code == 2
    assert "kernelwright chat --resume chat-x" in result.output


@pytest.mark.slow  # the run starts (and plans) before /quit returns
def test_words_said_before_the_pasted_module_still_count(tmp_path):
    module = (
        "```python\nimport torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
        "        return x * 2\ndef get_inputs():\n    return [torch.randn(64, 64)]\n```\n"
    )
    result = CliRunner().invoke(
        app,
        ["chat", "--store", str(tmp_path)],
        input=f"make it faster, budget 3, cpp, 1e-3\n{module}/quit\n",
    )
    assert result.exit_code == 0, result.output
    assert "backend: cpp" in result.output and "budget: 3" in result.output
    assert "tolerance every float dtype: atol=0.001" in result.output
    (run_id,) = RunStore(tmp_path).run_ids()
    assert RunStore(tmp_path).meta(run_id)["backend"] == "cpp"
