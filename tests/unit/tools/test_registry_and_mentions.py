"""tools.yaml validation, the registry's tiers, @mention parsing and tool visibility."""

from __future__ import annotations

from pathlib import Path

import pytest

from generalAgent.agent.chat_input import parse_mentions
from generalAgent.config.settings import Settings
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.registry import ToolConfigError, ToolRegistry, parse_tools_yaml
from generalAgent.tools.visibility import (
    assemble_visible_tools,
    classify_mentions,
    mentioned_tool_names,
    visible_tools_for_state,
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("core:\n  nonexistent_tool:\n    description: x\n", "unknown tool 'nonexistent_tool'"),
        ("core:\n  now:\n    description: x\n  now:\n    description: y\n", "key 'now' is given twice"),
        (
            "core:\n  now:\n    description: x\noptional:\n  now:\n    enabled: true\n    description: y\n",
            "listed twice",
        ),
        ("always:\n  now:\n    description: x\n", "line 1: unknown key 'always' (known: core, optional)"),
        (
            "optional:\n  fetch_web:\n    description: x\n",
            "line 2: optional / fetch_web: needs enabled: true or false",
        ),
        (
            "core:\n  now:\n    description: x\n    risk: extreme\n",
            "line 4: core / now: 'risk' must be one of low, medium, high, not 'extreme'",
        ),
        ("core:\n  now: {}\n", "needs description: a one-line description"),
        (
            "core:\n  now:\n    description: x\n    available_to_subagent: maybe\n",
            "true or false, not 'maybe'",
        ),
        ("core:\n  now:\n    description: x\n    enabled: true\n", "unknown key 'enabled'"),
        ("- now\n", "expected a mapping with the keys core, optional"),
        ("core: [now\n", "not valid YAML"),
    ],
)
def test_bad_tools_yaml_is_one_clear_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "tools.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ToolConfigError) as caught:
        parse_tools_yaml(path)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_tiers_and_on_demand_loading(settings: Settings) -> None:
    registry = ToolRegistry.from_yaml(ToolEnvironment(settings=settings))
    core = {s.name for s in registry.specs("core")}
    assert {
        "now",
        "todo_write",
        "todo_read",
        "read_file",
        "write_file",
        "edit_file",
        "list_workspace_files",
        "find_files",
    } <= core
    assert {s.name for s in registry.specs("enabled")} >= {"fetch_web"}
    assert {s.name for s in registry.specs("discovered")} >= {"run_bash_command", "delegate_task"}
    assert not registry.is_loaded("run_bash_command")
    persistent = {t.name for t in registry.persistent_tools()}
    assert "run_bash_command" not in persistent and "fetch_web" in persistent
    assert registry.load_on_demand("run_bash_command").name == "run_bash_command"
    assert registry.is_loaded("run_bash_command")
    assert registry.spec("run_bash_command").risk == "high"


def test_visibility_rules(settings: Settings) -> None:
    registry = ToolRegistry.from_yaml(ToolEnvironment(settings=settings))
    names = lambda tools: [t.name for t in tools]  # noqa: E731
    base = names(assemble_visible_tools(registry, [], False))
    assert "run_bash_command" not in base and "delegate_task" not in base
    with_bash = names(assemble_visible_tools(registry, ["run_bash_command", "run_bash_command"], False))
    assert with_bash.count("run_bash_command") == 1 and with_bash[: len(base)] == base
    assert "delegate_task" in names(assemble_visible_tools(registry, [], True))
    sub = names(assemble_visible_tools(registry, ["delegate_task"], True, is_subagent=True))
    assert "delegate_task" not in sub
    narrow = names(
        assemble_visible_tools(registry, [], False, is_subagent=True, allowed=["read_file", "now"])
    )
    assert narrow == ["now", "read_file"]


def test_a_mentioned_skill_brings_its_tools_in_place(settings: Settings) -> None:
    registry = ToolRegistry.from_yaml(ToolEnvironment(settings=settings))
    skill_tools = {"pdf": ("run_bash_command", "no_such_tool"), "notes": ("read_file",)}
    tool_names = registry.names()
    assert mentioned_tool_names(["pdf"], tool_names, skill_tools) == ["run_bash_command"]
    assert mentioned_tool_names(["delegate_task", "pdf", "run_bash_command"], tool_names, skill_tools) == [
        "delegate_task",
        "run_bash_command",
    ]
    assert mentioned_tool_names(["other-skill"], tool_names, skill_tools) == []

    def visible(mentions: list[str]) -> list[str]:
        state = {"mentions": mentions}
        return [t.name for t in visible_tools_for_state(registry, ["pdf", "notes"], [], state, skill_tools)]

    before, after = visible([]), visible(["pdf"])
    assert "run_bash_command" not in before
    assert after == [*before, "run_bash_command"]  # appended: the cached tool list only grows
    assert visible(["pdf", "researcher"]) == after
    # Without the skill's tools (a caller that does not pass them) a skill brings nothing.
    assert "run_bash_command" not in [
        t.name for t in visible_tools_for_state(registry, ["pdf"], [], {"mentions": ["pdf"]})
    ]


def test_mentions_are_parsed_without_emails() -> None:
    text = "@pdf please, mail bob@example.com and ask @agent (or @run_bash_command). @ alone, @2x no"
    assert parse_mentions(text) == ["pdf", "agent", "run_bash_command"]
    assert parse_mentions("用 @pdf 提取表格，然后@agent 总结") == ["pdf", "agent"]


def test_mentions_are_classified_with_suggestions() -> None:
    result = classify_mentions(
        ["run_bash_command", "pdf", "agent", "run_bash", "zzz"],
        tool_names=["run_bash_command", "now"],
        skill_ids=["pdf"],
        agent_names=["agent"],
    )
    assert result.tools == ["run_bash_command"] and result.skills == ["pdf"] and result.agents == ["agent"]
    assert result.unknown["run_bash"] == ["run_bash_command"]
    assert result.unknown["zzz"] == []
