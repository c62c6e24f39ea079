"""Skill and agent-profile loading: good files load, bad ones warn by name, the rest still load."""

from __future__ import annotations

from pathlib import Path

from generalAgent.agent_profiles import GENERAL_AGENT, load_agent_profiles
from generalAgent.config.paths import builtin_path
from generalAgent.skills.loader import build_skills_catalog, load_skills


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_shipped_skills_load_without_warnings() -> None:
    catalog = load_skills(builtin_path("skills"))
    assert catalog.warnings == ()
    assert {"pdf", "docx-report", "skill-creator"} <= set(catalog.ids())
    text = build_skills_catalog(catalog)
    assert text.startswith("<skills>") and "- pdf: " in text and "(read skills/pdf/SKILL.md)" in text


def test_bad_skills_are_skipped_with_a_warning_naming_the_file(tmp_path: Path) -> None:
    write(
        tmp_path / "good" / "SKILL.md",
        "---\nname: good\ndescription: Use for good things.\n---\n# Good\nDo it.\n",
    )
    write(tmp_path / "nofront" / "SKILL.md", "# No front matter\n")
    write(tmp_path / "mismatch" / "SKILL.md", "---\nname: other\ndescription: x\n---\nbody\n")
    write(tmp_path / "bad-yaml" / "SKILL.md", "---\nname: [bad\n---\nbody\n")
    write(tmp_path / "no-desc" / "SKILL.md", "---\nname: no-desc\n---\nbody\n")
    write(tmp_path / "Bad--Id" / "SKILL.md", "---\nname: Bad--Id\ndescription: x\n---\nbody\n")
    (tmp_path / "empty-folder").mkdir()
    catalog = load_skills(tmp_path)
    assert catalog.ids() == ["good"]
    warnings = "\n".join(w.english() for w in catalog.warnings)
    for name in ("nofront", "mismatch", "bad-yaml", "no-desc", "Bad--Id", "empty-folder"):
        assert f"/{name}/SKILL.md" in warnings
    assert "must match" in warnings and "not valid YAML" in warnings


def test_agent_profiles(tmp_path: Path) -> None:
    write(
        tmp_path / "researcher.md",
        "---\nname: researcher\ndescription: Reads documents and cites them.\n"
        "tools: [read_file, search_file]\n---\nAlways cite page numbers.\n",
    )
    write(tmp_path / "broken.md", "---\nname: broken\ntools: read_file\ndescription: x\n---\n")
    write(tmp_path / "agent.md", "---\nname: agent\ndescription: shadowing the built-in\n---\n")
    catalog = load_agent_profiles(tmp_path)
    assert catalog.names() == [GENERAL_AGENT, "researcher"]
    researcher = catalog.get("researcher")
    assert researcher is not None and researcher.tools == ("read_file", "search_file")
    assert researcher.instructions == "Always cite page numbers."
    warnings = "\n".join(w.english() for w in catalog.warnings)
    assert "broken.md" in warnings and "already exists" in warnings


def test_allowed_tools_in_front_matter(tmp_path: Path) -> None:
    write(
        tmp_path / "listed" / "SKILL.md",
        "---\nname: listed\ndescription: Use for lists.\nallowed-tools: [run_bash_command, fetch_web]\n---\nDo.\n",
    )
    write(
        tmp_path / "inline" / "SKILL.md",
        "---\nname: inline\ndescription: Use inline.\nallowed-tools: run_bash_command, now  now\n---\nDo.\n",
    )
    write(
        tmp_path / "broken" / "SKILL.md",
        "---\nname: broken\ndescription: Use never.\nallowed-tools: {a: 1}\n---\nDo.\n",
    )
    write(tmp_path / "plain" / "SKILL.md", "---\nname: plain\ndescription: Use plainly.\n---\nDo.\n")
    catalog = load_skills(tmp_path)
    assert catalog.ids() == ["inline", "listed", "plain"]
    assert catalog.tools_by_skill() == {
        "inline": ("run_bash_command", "now"),
        "listed": ("run_bash_command", "fetch_web"),
    }
    assert len(catalog.warnings) == 1 and "broken" in catalog.warnings[0].english()
    assert "'allowed-tools' must be a list" in catalog.warnings[0].english()


def test_shipped_skills_bring_the_shell() -> None:
    tools = load_skills(builtin_path("skills")).tools_by_skill()
    assert tools["pdf"] == ("run_bash_command",) and tools["docx-report"] == ("run_bash_command",)
