"""AGENTS.md project memory: read once, capped, placed in the static system prompt."""

from __future__ import annotations

import sys
from pathlib import Path

from generalAgent.config.settings import Settings, load_settings
from generalAgent.config.trust import folder_trust
from generalAgent.graph.context import PromptBuilder
from generalAgent.graph.project_memory import load_project_memory, user_memory_path
from tests.support.agent import build_test_agent
from tests.support.scripted_model import ScriptedChatModel


def with_memory(
    settings: Settings, user_file: Path, max_chars: int = 20_000, trusted: Path | None = None
) -> Settings:
    """Settings with this user AGENTS.md, in which the folder `trusted` is trusted."""
    return load_settings(
        env_file=None,
        trust=folder_trust(trusted).decided(True) if trusted is not None else None,
        paths={"data_dir": settings.paths.data_dir, "user_agents_file": user_file},
        governance={"agents_md_max_chars": max_chars},
    )


def test_user_then_project_instructions_reach_the_system_prompt_before_the_time(
    settings: Settings, tmp_path: Path
) -> None:
    user = tmp_path / "config" / "AGENTS.md"
    user.parent.mkdir()
    user.write_text("Always answer in British English.\n", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("本项目的报告放在 outputs/reports/ 下。\n", encoding="utf-8")
    settings = with_memory(settings, user, trusted=project)
    memory = load_project_memory(settings, project)
    assert [(f.scope, f.path) for f in memory.files] == [("user", user), ("project", project / "AGENTS.md")]

    parts, _ = build_test_agent(settings, ScriptedChatModel())
    prompt = PromptBuilder(
        settings, parts.registry, parts.skills, parts.agents, memory=memory
    ).main_prompt.text
    assert (
        prompt.index("British English")
        < prompt.index("outputs/reports/")
        < prompt.index("<current_datetime>")
    )
    assert prompt.index("<agents>") < prompt.index("British English")  # after what every user shares
    again = PromptBuilder(settings, parts.registry, parts.skills, parts.agents, memory=memory)
    assert again.main_prompt.text.split("<current_datetime>")[0] == prompt.split("<current_datetime>")[0]
    sub = PromptBuilder(settings, parts.registry, parts.skills, parts.agents, memory=memory)
    assert "outputs/reports/" in sub.system_message({"parent_context": "main"}).text  # sub-agents too


def test_the_cap_keeps_the_project_file_first_and_says_what_was_cut(
    settings: Settings, tmp_path: Path
) -> None:
    user = tmp_path / "user.md"
    user.write_text("u" * 500, encoding="utf-8")
    (tmp_path / "AGENTS.md").write_text("p" * 300, encoding="utf-8")
    memory = load_project_memory(with_memory(settings, user, max_chars=400, trusted=tmp_path), tmp_path)
    by_scope = {f.scope: f for f in memory.files}
    assert len(by_scope["project"].text) == 300 and not by_scope["project"].cut
    assert len(by_scope["user"].text) == 100 and by_scope["user"].cut
    assert "[cut: the first 100 of 500 characters]" in memory.prompt_section()
    assert (
        load_project_memory(with_memory(settings, user, max_chars=0, trusted=tmp_path), tmp_path).files == ()
    )


def test_no_files_no_section(settings: Settings, tmp_path: Path) -> None:
    memory = load_project_memory(with_memory(settings, tmp_path / "missing.md"), tmp_path)
    assert memory.files == () and memory.prompt_section() == ""


def test_the_user_file_lives_beside_the_user_level_env(
    settings: Settings, monkeypatch, tmp_path: Path
) -> None:
    plain = load_settings(env_file=None, paths={"data_dir": settings.paths.data_dir, "user_agents_file": ""})
    monkeypatch.setenv("GENERALAGENT_CONFIG_DIR", str(tmp_path / "config"))
    assert user_memory_path(plain) == tmp_path / "config" / "AGENTS.md"
    monkeypatch.delenv("GENERALAGENT_CONFIG_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert user_memory_path(plain) == tmp_path / "xdg" / "generalagent" / "AGENTS.md"
