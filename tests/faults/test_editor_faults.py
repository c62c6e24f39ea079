"""Faults of an editor session (ACP): what the editor's own environment and modes must not let through."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from generalAgent.agent.turns import run_turn
from generalAgent.cli.acp.modes import READ_ONLY, turn_rules
from generalAgent.cli.acp.view import AcpView
from generalAgent.config.settings import load_settings
from generalAgent.knowledge import open_store
from generalAgent.tools.builtin.run_bash_command import run_in_editor
from generalAgent.tools.editor import CommandOutcome
from generalAgent.tools.run_context import RunContext, SessionScope
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

fault = pytest.mark.fault
API_KEY = "sk-editor-SECRET-0123456789"


class TerminalOfAnEditor:
    """An editor's terminal: runs the command for real, in the editor's own environment."""

    reads_files = writes_files = False
    runs_commands = True

    def __init__(self, environment: dict[str, str]) -> None:
        self.environment = environment

    def read_text(self, path: Path) -> str:
        raise AssertionError("not offered")

    def write_text(self, path: Path, text: str) -> None:
        raise AssertionError("not offered")

    def run_command(
        self, call_id: str, argv: Sequence[str], cwd: Path, timeout: float, cancelled: threading.Event
    ) -> CommandOutcome:
        done = subprocess.run(
            list(argv), cwd=cwd, env=self.environment, capture_output=True, text=True, timeout=timeout
        )
        return CommandOutcome(output=done.stdout + done.stderr, exit_code=done.returncode)


@fault(
    area="security",
    fault="A command runs in the editor's terminal, and the editor's own environment holds the model key and a cloud token",
    outcome="The command starts from an empty environment with only COMMAND_ENV's variables: neither secret reaches its output or the model.",
)
def test_the_editors_environment_does_not_reach_a_command(tmp_path: Path) -> None:
    editor = TerminalOfAnEditor(
        {**os.environ, "OPENAI_API_KEY": API_KEY, "AWS_SECRET_ACCESS_KEY": "aws-SECRET-42"}
    )
    answer = run_in_editor(
        editor,
        "c1",
        "env; echo key=${OPENAI_API_KEY:-none}",
        tmp_path,
        30,
        threading.Event(),
        ("PATH", "HOME"),
    )
    assert answer.startswith("exit status 0") and "key=none" in answer
    assert "SECRET" not in answer


@fault(
    area="approvals",
    fault="In the editor's read-only mode the model calls write_file, edit_file, run_bash_command and add_knowledge in one message",
    outcome="Every call is refused without a question and none runs; the model is told each was refused.",
)
def test_read_only_mode_refuses_every_changing_call(tmp_path: Path) -> None:
    settings = load_settings(
        env_file=None,
        model={"model_name": "test-model", "openai_api_key": "sk-test", "model_max_retries": 0},
        paths={"data_dir": tmp_path / "data"},
    )
    model = ScriptedChatModel()
    graph = build_test_agent(settings, model)[1]
    calls = [
        tool_call("write_file", {"path": "outputs/a.md", "content": "x"}, "w"),
        tool_call("edit_file", {"path": "outputs/a.md", "old_string": "x", "new_string": "y"}, "e"),
        tool_call("run_bash_command", {"command": "touch outputs/ran"}, "b"),
        tool_call("add_knowledge", {"title": "t", "content": "c"}, "k"),
    ]
    model.replies = [ai("", *calls), ai("done")]
    asked: list[Any] = []
    view = AcpView(lambda update: None, lambda call, options: asked.append(call) or "allow-once", tmp_path)
    config = thread("ro")
    only = turn_rules(READ_ONLY).only_tools
    assert only is not None
    context = RunContext(scope=SessionScope("ro", tmp_path), only_tools=only)
    turn = user_turn("go", settings, session_id="ro", mentions=["run_bash_command"])
    result = run_turn(graph, config, turn, view, lambda exc: None, context=context)
    assert result.ok and result.answer == "done", result.error
    assert asked == []
    outputs = settings.paths.workspaces_dir / "ro" / "outputs"
    assert not list(outputs.iterdir())
    answers = [m for m in graph.get_state(config).values["messages"] if m.type == "tool"]
    assert len(answers) == len(calls)
    assert all(m.status == "error" and "refused" in str(m.content) for m in answers)
    assert all("session is read-only" in str(m.content) for m in answers)  # not "by the user"
    with open_store(settings) as store:
        assert all(item.title != "t" for item in store.list_knowledge(limit=100))
