"""The chat command's edges without running a search: asking for a task, resume of a chat run."""

from __future__ import annotations

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
