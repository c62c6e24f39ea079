"""The working folder read in place: the one path rule, confinement, links, keys and trust."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from generalAgent.config.trust import FolderTrust
from generalAgent.tools.approval import CallContext, Reason, approval_reason
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.registry import ToolRegistry
from tests.support.documents import make_docx
from tests.support.tools import run_tool, workspace_root


def in_folder(
    settings: Settings, folder: Path, trusted: bool | None, added: tuple[Path, ...] = ()
) -> Settings:
    """`settings` as the CLI builds them in `folder`, with the user's trust decision."""
    trust = FolderTrust(folder=folder.resolve(), found=(), decision=trusted)
    return dataclasses.replace(
        settings, sources=dataclasses.replace(settings.sources, trust=trust), added_folders=added
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    home = tmp_path / "项目"
    home.mkdir()
    (home / "说明.txt").write_text("第一行\n第二行 营收增长\n", encoding="utf-8")
    (home / "docs").mkdir()
    (home / "docs" / "notes.md").write_text("# Notes\nheron\n", encoding="utf-8")
    (home / "outputs").mkdir()  # a folder of the user's that shares a workspace name
    (home / "outputs" / "mine.txt").write_text("the user's own outputs folder\n", encoding="utf-8")
    return home


def test_relative_paths_read_the_trusted_working_folder(settings: Settings, folder: Path) -> None:
    trusted = in_folder(settings, folder, True)
    make_docx(
        folder / "季度报告.docx",
        "季度报告",
        ["本季度营收增长百分之十二。"],
        [["地区", "营收"], ["华东", "120"]],
    )
    text, _ = run_tool(trusted, "read_file", {"path": "说明.txt"})
    assert text.startswith("说明.txt: lines 1-2 of 2") and "营收增长" in text
    text, _ = run_tool(trusted, "read_file", {"path": "季度报告.docx"})
    assert "季度报告.docx (preview" in text and "百分之十二" in text
    text, _ = run_tool(trusted, "search_file", {"file_path": "docs/notes.md", "query": "heron"})
    assert "heron" in text and "docs/notes.md" in text
    text, _ = run_tool(trusted, "read_file", {"path": str(folder / "docs" / "notes.md")})
    assert text.startswith("docs/notes.md: lines 1-2")  # an absolute path inside is shown relative


def test_workspace_names_mean_the_workspace_and_dot_slash_the_folder(
    settings: Settings, folder: Path
) -> None:
    trusted = in_folder(settings, folder, True)
    (workspace_root(trusted) / "outputs" / "mine.txt").write_text("the session's file\n", encoding="utf-8")
    text, _ = run_tool(trusted, "read_file", {"path": "outputs/mine.txt"})
    assert "the session's file" in text
    text, _ = run_tool(trusted, "read_file", {"path": "./outputs/mine.txt"})
    assert text.startswith("./outputs/mine.txt:") and "the user's own outputs folder" in text


def test_listing_and_finding_start_in_the_working_folder(settings: Settings, folder: Path) -> None:
    trusted = in_folder(settings, folder, True)
    listing, _ = run_tool(trusted, "list_workspace_files", {})
    assert "说明.txt" in listing and "docs/" in listing and "session workspace" in listing
    found, _ = run_tool(trusted, "find_files", {"pattern": "**/*.md"})
    assert found.splitlines()[0].startswith("docs/notes.md")
    uploads, _ = run_tool(trusted, "list_workspace_files", {"path": "uploads"})
    assert uploads == "uploads is empty."


def test_links_out_dotdot_and_keys_are_refused(settings: Settings, folder: Path, tmp_path: Path) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY\n", encoding="utf-8")
    os.symlink(secret, folder / "key.txt")
    (folder / ".env").write_text("OPENAI_API_KEY=sk-folder-SECRET\n", encoding="utf-8")
    os.symlink(folder / ".env", folder / "env-link.txt")
    trusted = in_folder(settings, folder, True)
    for path in ("key.txt", "../id_rsa", str(secret), ".env", "env-link.txt", "/etc/hostname"):
        text, _ = run_tool(trusted, "read_file", {"path": path})
        assert text.startswith("Error:"), path
        assert "PRIVATE KEY" not in text and "sk-folder-SECRET" not in text
    listing, _ = run_tool(trusted, "list_workspace_files", {})
    assert "key.txt  (a link to outside" in listing and ".env" not in listing


def test_an_untrusted_folder_is_not_read_and_the_error_says_how_to_trust(
    settings: Settings, folder: Path
) -> None:
    for decision in (None, False):
        untrusted = in_folder(settings, folder, decision)
        text, _ = run_tool(untrusted, "read_file", {"path": "说明.txt"})
        assert text.startswith("Error:") and "not trusted" in text and "generalagent trust" in text
        assert "#说明.txt" in text and "营收" not in text
        text, _ = run_tool(untrusted, "read_file", {"path": str(folder / "说明.txt")})
        assert text.startswith("Error:") and "not trusted" in text and "营收" not in text
        listing, _ = run_tool(untrusted, "list_workspace_files", {})
        assert "uploads/" in listing and "说明.txt" not in listing  # "." is the workspace then


def test_added_folders_are_read_by_absolute_path_whatever_the_trust(
    settings: Settings, folder: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    added = in_folder(settings, folder, None, added=(extra.resolve(),))
    text, _ = run_tool(added, "read_file", {"path": str(extra / "data.csv")})
    assert text.startswith(f"{extra.resolve() / 'data.csv'}: lines 1-2") and "1,2" in text
    found, _ = run_tool(added, "find_files", {"pattern": "*.csv", "path": str(extra)})
    assert str(extra.resolve() / "data.csv") in found


def approval_of(settings: Settings, name: str, args: dict) -> Reason | None:
    env = ToolEnvironment(settings=settings)
    tool = ToolRegistry.from_yaml(env).load_on_demand(name)
    return approval_reason(tool, args, CallContext(workspace=env.workspace_for("s1")))


def test_writing_in_the_working_folder_asks_with_a_diff(settings: Settings, folder: Path) -> None:
    trusted = in_folder(settings, folder, True)
    created = approval_of(trusted, "write_file", {"path": "summary.md", "content": "# 摘要\n营收增长 12%\n"})
    assert created is not None and created.text == f"creates {folder.resolve() / 'summary.md'} in your folder"
    assert created.diff.splitlines()[:3] == ["--- a/summary.md", "+++ b/summary.md", "@@ -0,0 +1,2 @@"]
    assert "+营收增长 12%" in created.diff
    edited = approval_of(
        trusted, "edit_file", {"path": "说明.txt", "old_string": "第二行", "new_string": "第 2 行"}
    )
    assert (
        edited is not None and edited.text.startswith("changes ") and "说明.txt in your folder" in edited.text
    )
    assert "-第二行 营收增长" in edited.diff and "+第 2 行 营收增长" in edited.diff
    assert approval_of(trusted, "write_file", {"path": "outputs/free.md", "content": "x"}) is None
    assert approval_of(trusted, "write_file", {"path": "temp/free.md", "content": "x"}) is None


def test_an_approved_write_lands_in_the_folder_and_is_recorded(settings: Settings, folder: Path) -> None:
    trusted = in_folder(settings, folder, True)
    text, _ = run_tool(trusted, "write_file", {"path": "summary.md", "content": "# 摘要\n"})
    assert text == "Wrote summary.md (9 bytes, 1 lines)."
    assert (folder / "summary.md").read_text(encoding="utf-8") == "# 摘要\n"
    text, _ = run_tool(
        trusted, "edit_file", {"path": "summary.md", "old_string": "摘要", "new_string": "总结"}
    )
    assert (
        text.startswith("Edited summary.md")
        and (folder / "summary.md").read_text(encoding="utf-8") == "# 总结\n"
    )


def test_writes_never_leave_through_links_or_reach_keys_or_an_untrusted_folder(
    settings: Settings, folder: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, folder / "linked")
    trusted = in_folder(settings, folder, True)
    for path in ("linked/x.md", "../x.md", ".env", str(outside / "x.md")):
        text, _ = run_tool(trusted, "write_file", {"path": path, "content": "x"})
        assert text.startswith("Error:"), path
    assert list(outside.iterdir()) == [] and not (folder / ".env").exists()
    text, _ = run_tool(
        in_folder(settings, folder, None), "write_file", {"path": "summary.md", "content": "x"}
    )
    assert text.startswith("Error:") and "outputs/" in text and not (folder / "summary.md").exists()


@pytest.mark.parametrize(
    "name",
    ["ok.md\n  path: ok.md", "a\x1b[2Jb.md", "ok.md\u2028x", "ok\u202egnp.md", "\x07.md", "a\x85b.md"],
)
def test_a_name_with_a_line_break_or_control_is_never_written_nor_asked_about(
    settings: Settings, folder: Path, name: str
) -> None:
    # The question showed `creates …/ok.md` with the rest of the name on lines of its own,
    # looking like the question's next lines; approved, a file of that odd name was made.
    trusted = in_folder(settings, folder, True)
    assert approval_of(trusted, "write_file", {"path": name, "content": "x"}) is None
    for path in (name, f"outputs/{name}"):
        text, _ = run_tool(trusted, "write_file", {"path": path, "content": "x"})
        assert text.startswith("Error:") and "control character" in text, text
    assert sorted(p.name for p in folder.iterdir()) == ["docs", "outputs", "说明.txt"]
    assert list((workspace_root(trusted) / "outputs").iterdir()) == []
