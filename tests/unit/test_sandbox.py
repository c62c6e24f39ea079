"""The pure parts of the sandbox, the secrets' names and a served deployment's rules.

The sandbox's behaviour with bubblewrap running is in tests/faults/test_sandbox_faults.py
and test_served_deployment_faults.py; here: the order of mounts, which names are secrets,
what a client may send to a served deployment, and the limits of a served run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from generalAgent.config.settings import load_settings
from generalAgent.graph.served import (
    LIMIT_BYTES,
    LIMIT_CALLS,
    client_run_problem,
    run_limit_refusal,
    served_user,
)
from generalAgent.process_secrets import child_environment, is_secret_name
from generalAgent.sandbox import Confinement, Sandbox, bwrap_arguments, find_sandbox, seatbelt_profile


def mounts_of(args: list[str]) -> list[tuple[str, str]]:
    found = []
    for index, arg in enumerate(args):
        if arg in {"--tmpfs", "--ro-bind", "--bind"}:
            found.append((arg, args[index + 1]))
    return found


def test_inner_folders_are_mounted_after_the_folders_around_them(tmp_path: Path) -> None:
    """A data home inside a trusted project folder is hidden again, and the workspace inside
    the data home is writable again: shallower mounts first, whatever the category."""
    folder = tmp_path / "project"
    workspace = folder / "data" / "workspaces" / "s1"
    workspace.mkdir(parents=True)
    args = bwrap_arguments(
        Confinement(
            writable=(workspace, folder), hidden=(folder / "data",), readable=(tmp_path,), cwd=workspace
        )
    )
    ours = [m for m in mounts_of(args) if m[1].startswith(str(tmp_path))]
    assert ours == [
        ("--ro-bind", str(tmp_path)),
        ("--bind", str(folder)),
        ("--tmpfs", str(folder / "data")),
        ("--bind", str(workspace)),
    ]
    assert args[-2:] == ["--chdir", str(workspace)]
    assert "--unshare-net" in args and "--unshare-pid" in args and "--die-with-parent" in args


def test_the_network_is_off_unless_the_call_has_it(tmp_path: Path) -> None:
    assert "--unshare-net" in bwrap_arguments(Confinement())
    assert "--unshare-net" not in bwrap_arguments(Confinement(network=True))


def test_a_missing_folder_is_not_mounted(tmp_path: Path) -> None:
    args = bwrap_arguments(Confinement(writable=(tmp_path / "gone",), hidden=(tmp_path / "nope",)))
    assert str(tmp_path) not in " ".join(args)


def test_the_macos_profile_denies_writes_outside_and_the_network() -> None:
    profile = seatbelt_profile(
        Confinement(writable=(Path("/Users/me/project"),), hidden=(Path("/Users/me"),), network=False)
    )
    assert '(deny file-write* (require-not (require-any (subpath "/Users/me/project")' in profile
    assert "(deny network*)" in profile
    assert '(require-not (require-any (subpath "/Users/me/project")))' in profile  # read again inside home
    assert "(deny network*)" not in seatbelt_profile(Confinement(network=True))


def test_without_a_sandbox_a_command_runs_as_written() -> None:
    assert Sandbox("none").wrap(["bash", "-c", "ls"], Confinement()) == ["bash", "-c", "ls"]
    assert find_sandbox("off").kind == "none" and find_sandbox("off").reason == "SANDBOX=off"


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "EMBEDDING_API_KEY",
        "WEB_SEARCH_API_KEY",
        "SERVER_API_KEYS",
        "SERVER_JWT_SECRET",
        "DATABASE_URL",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GITHUB_TOKEN",
        "PGPASSWORD",
        "openai_api_key",
    ],
)
def test_every_key_the_settings_hold_and_the_usual_tokens_are_secrets(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["PATH", "HOME", "LANG", "LC_ALL", "TZ", "TERM", "AWS_REGION"])
def test_ordinary_variables_are_not_secrets(name: str) -> None:
    assert not is_secret_name(name)


def test_a_pattern_never_lets_a_secret_through_but_a_listed_name_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-1")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-1")
    monkeypatch.setenv("LANG", "C.UTF-8")
    seen = child_environment(("*",), {"EXTRA": "1"})
    assert "OPENAI_API_KEY" not in seen and "GITHUB_TOKEN" not in seen
    assert seen["LANG"] == "C.UTF-8" and seen["EXTRA"] == "1"
    granted = child_environment(("LANG",), granted=("GITHUB_TOKEN",))
    assert granted["GITHUB_TOKEN"] == "ghp-1" and "OPENAI_API_KEY" not in granted


# -- a served deployment --------------------------------------------------------------
@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SERVER_TOOLS", "run_bash_command")
    return load_settings(env_file=None)


def user_input(**extra) -> dict:
    return {"input": {"messages": [{"role": "user", "content": "hi"}], **extra}}


def test_a_conversation_with_mentions_of_offered_tools_and_a_resume_is_accepted(served) -> None:
    assert client_run_problem(user_input(mentions=["run_bash_command", "pdf"]), served) is None
    assert client_run_problem({"input": {"messages": "hi"}}, served) is None
    assert client_run_problem({"command": {"resume": {"call_1": "yes"}}}, served) is None
    server_keys = {"thread_id": "t", "langgraph_auth_user_id": "bob", "langgraph_auth_permissions": []}
    assert client_run_problem({**user_input(), "config": {"configurable": server_keys}}, served) is None


@pytest.mark.parametrize(
    ("request_", "named"),
    [
        (user_input(approved_tools=["run_bash_command"]), "approved_tools"),
        (user_input(approvals={"c1": "yes"}), "approvals"),
        (user_input(workspace_id="someone-else"), "workspace_id"),
        (user_input(named_hosts=[{"host": "evil.example"}]), "named_hosts"),
        (user_input(max_loops=10_000), "max_loops"),
        (user_input(new_mentions=["delegate_task"]), "delegate_task"),
        ({**user_input(), "config": {"configurable": {"approved_tools": ["x"]}}}, "approved_tools"),
        ({**user_input(), "context": {"working_folder": "/"}}, "working_folder"),
        ({**user_input(), "config": {"configurable": {"SANDBOX": "off"}}}, "SANDBOX"),
        ({"command": {"update": {"approved_tools": ["x"]}}}, "update"),
        ({"command": {"goto": "tools"}}, "goto"),
        ({"input": {"messages": [{"role": "assistant", "content": "ok"}]}}, "messages"),
        ({"input": {"messages": [{"type": "tool", "content": "x", "tool_call_id": "1"}]}}, "messages"),
    ],
)
def test_what_would_widen_a_run_is_refused_naming_it(served, request_: dict, named: str) -> None:
    problem = client_run_problem(request_, served)
    assert problem is not None and named in problem


def test_a_mention_of_a_tool_the_deployment_does_not_offer_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = load_settings(env_file=None)  # SERVER_TOOLS unset: no discovered tool is offered
    assert "SERVER_TOOLS" in (client_run_problem(user_input(mentions=["run_bash_command"]), settings) or "")


def test_a_run_is_served_only_when_the_server_stamped_its_user() -> None:
    assert served_user({"configurable": {"langgraph_auth_user_id": "bob"}}) == "bob"
    assert served_user({"configurable": {"thread_id": "t"}}) is None and served_user(None) is None


def turn(results: list[str]) -> list:
    messages: list = [
        HumanMessage("earlier"),
        ToolMessage("x" * 10_000, tool_call_id="old"),
        HumanMessage("now"),
    ]
    for index, text in enumerate(results):
        messages += [AIMessage("", tool_calls=[{"name": "now", "args": {}, "id": f"c{index}"}])]
        messages += [ToolMessage(text, tool_call_id=f"c{index}")]
    return messages


@given(done=st.integers(0, 12), pending=st.integers(0, 5))
def test_a_served_run_makes_at_most_its_limit_of_calls(done: int, pending: int) -> None:
    server = load_settings(env_file=None, server={"server_max_tool_calls": 6}).server
    refusal = run_limit_refusal(turn(["ok"] * done), pending, server)
    assert (refusal == LIMIT_CALLS.format(limit=6)) == (done + pending >= 6)


def test_a_served_run_receives_at_most_its_bytes_counted_from_the_users_message() -> None:
    server = load_settings(env_file=None, server={"server_max_tool_bytes": 20_000}).server
    assert run_limit_refusal(turn(["x" * 9_000]), 0, server) is None  # the earlier turn's 10 kB not counted
    assert run_limit_refusal(turn(["x" * 9_000, "y" * 11_000]), 0, server) == LIMIT_BYTES.format(limit=20_000)


def test_a_served_runs_calls_past_its_limit_are_refused_by_the_tools_step(tmp_path: Path) -> None:
    """Through the real graph: the third call of a run limited to two is answered with the
    limit, not run; the same calls outside a server (no authenticated user) all run."""
    from tests.support.agent import build_test_agent, thread, user_turn
    from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

    settings = load_settings(
        env_file=None, paths={"data_dir": tmp_path / "data"}, server={"server_max_tool_calls": 2}
    )
    zones = ("UTC", "Asia/Shanghai", "Europe/Berlin")
    three = [tool_call("now", {"timezone": zone}, f"c{i}") for i, zone in enumerate(zones)]
    answers = {}
    for served_run in (True, False):
        model = ScriptedChatModel(replies=[ai("", *three), ai("done")])
        _, graph = build_test_agent(settings, model)
        config = thread(f"limits-{served_run}")
        if served_run:
            config["configurable"]["langgraph_auth_user_id"] = "bob"
        result = graph.invoke(user_turn("what time is it?", settings), config)
        answers[served_run] = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    limit = LIMIT_CALLS.format(limit=2)
    assert len(answers[True]) == 3 and answers[True].count(limit) == 1
    assert len(answers[False]) == 3 and limit not in answers[False]


def test_a_folder_servers_program_and_script_stay_readable_under_the_private_tmp(tmp_path: Path) -> None:
    """A trusted folder's stdio MCP server runs in the sandbox, whose /tmp is private: the
    script its mcp.json names (here under the real /tmp) is bound back read-only, or the
    server could not start. A program that does not exist is left unwrapped, so it fails
    with "no such program" as it would unconfined."""
    import sys

    from generalAgent.tools.mcp.config import MCPServerConfig
    from generalAgent.tools.mcp.manager import confined_server

    if not find_sandbox("auto").active:
        pytest.skip("no working sandbox on this machine")
    script = tmp_path / "servers" / "notes.py"
    script.parent.mkdir()
    script.write_text("print('hi')\n", encoding="utf-8")
    folder = tmp_path / "project"
    folder.mkdir()
    settings = load_settings(env_file=None, paths={"data_dir": tmp_path / "data"})
    server = MCPServerConfig(
        name="notes",
        handle="notes",
        transport="stdio",
        source=folder / "mcp.json",
        command=sys.executable,
        args=("-u", str(script)),
        scope="folder",
    )
    confined = confined_server(server, settings, folder)
    mounts = mounts_of([confined.command, *confined.args])
    assert ("--tmpfs", "/tmp") in mounts and ("--ro-bind", str(script.resolve())) in mounts
    assert mounts.index(("--ro-bind", str(script.resolve()))) > mounts.index(("--tmpfs", "/tmp"))
    missing = confined_server(
        server.__class__(**{**server.__dict__, "command": "no-such-program-x"}), settings, folder
    )
    assert missing.command == "no-such-program-x"
