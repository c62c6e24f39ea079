"""Side effects ask first, through the real graph: data sent to a host the user did not
name, knowledge notes changed or deleted, a file outside outputs/ replaced. Commands see
an allow-listed environment, and tool results reach the model framed as data."""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from generalAgent.config.settings import Settings
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from tests.support.side_effects import pending_questions


def test_fetching_from_a_host_the_user_named_does_not_ask(settings: Settings) -> None:
    call = tool_call("fetch_web", {"url": "https://docs.python.org/3/library/re.html"})
    assert pending_questions(settings, "what does docs.python.org say about re?", call) == []


def test_tool_results_reach_the_model_framed_as_data(settings: Settings) -> None:
    model = ScriptedChatModel(replies=[ai("", tool_call("now")), ai("done")])
    _, graph = build_test_agent(settings, model)
    graph.invoke(user_turn("what time is it?", settings), thread())
    sent = model.requests[1].messages
    answer = next(m for m in sent if isinstance(m, ToolMessage))
    assert answer.text.startswith('<tool_output tool="now">\n') and answer.text.endswith("\n</tool_output>")
    stored = [m for m in graph.get_state(thread()).values["messages"] if isinstance(m, ToolMessage)]
    assert not stored[0].text.startswith("<tool_output")  # the frame is added per request, not stored


def test_files_a_command_runs_are_shown_however_it_runs_them(tmp_path) -> None:
    from generalAgent.tools.approval import files_run_by
    from generalAgent.tools.workspace import Workspace

    workspace = Workspace.for_session(tmp_path, "s1")
    (workspace.root / "temp" / "x.sh").write_text("#!/bin/sh\n" + "echo line\n" * 30)
    (workspace.root / "uploads" / "theirs.sh").write_text("echo user\n")
    (workspace.root / "temp" / "env").write_text("export A=1\n")
    (workspace.root / "temp" / "run").write_text("echo run\n")
    (workspace.root / "outputs" / "data.csv").write_text("a,b\n")
    previews = files_run_by("bash temp/x.sh && sh ./uploads/theirs.sh; cat < outputs/none.txt", workspace)
    assert [p.path for p in previews] == ["temp/x.sh", "uploads/theirs.sh"]
    assert previews[0].size == 10 + 30 * 10 and not previews[0].complete
    assert previews[0].head.startswith("#!/bin/sh\necho line")
    assert files_run_by("bash '/etc/passwd' ../x 'unclosed", workspace) == []
    shown = {
        "source temp/env": ["temp/env"],
        ". temp/env && echo ok": ["temp/env"],
        "bash -c 'cd .; source temp/env'": ["temp/env"],
        "sh -c \"bash -c './temp/run'\"": ["temp/run"],
        "./temp/run > outputs/data.csv": ["temp/run"],
        "bash < temp/x.sh": ["temp/x.sh"],
        "bash -x temp/x.sh 2> temp/run": ["temp/x.sh"],
        # Data a command reads or writes is not what it runs.
        "cat outputs/data.csv; echo 1 >> temp/run": [],
    }
    for command, paths in shown.items():
        assert [p.path for p in files_run_by(command, workspace)] == paths, command
    first, changed = files_run_by("bash temp/x.sh", workspace)[0].digest, None
    (workspace.root / "temp" / "x.sh").write_text("#!/bin/sh\n" + "echo line\n" * 30 + "rm -rf ~\n")
    changed = files_run_by("bash temp/x.sh", workspace)[0]
    assert changed.head == previews[0].head and changed.digest != first  # a change past the head counts
