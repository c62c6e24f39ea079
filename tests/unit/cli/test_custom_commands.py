"""The user's slash commands (cli/custom_commands.py) and the registry the chat dispatches
through (cli/command_registry.py)."""

from __future__ import annotations

import os
from pathlib import Path

from generalAgent.cli.builtin_commands import COMMANDS, custom_command_record
from generalAgent.cli.command_registry import CommandRegistry, MenuEntry
from generalAgent.cli.custom_commands import CustomCommand, load_custom_commands
from generalAgent.config.trust import FolderTrust

BUILTIN = CommandRegistry(COMMANDS).names()


def command(body: str) -> CustomCommand:
    return CustomCommand("/x", Path("x.md"), body)


def test_arguments_and_positions_are_substituted() -> None:
    assert command("总结 $ARGUMENTS，要简短").expand("#报告.pdf") == "总结 #报告.pdf，要简短"
    assert (
        command("Compare $1 with $2; ignore $3.").expand('"a b.pdf" c.pdf')
        == "Compare a b.pdf with c.pdf; ignore ."
    )
    # No placeholder: what was typed is kept, on its own line.
    assert command("Review the draft.").expand("#draft.md") == "Review the draft.\n\n#draft.md"
    assert command("Unclosed $1").expand('"oops') == 'Unclosed "oops'


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_namespaces_front_matter_and_which_folders_are_read(tmp_path: Path) -> None:
    user, folder = tmp_path / "user", tmp_path / "project"
    write(
        user / "commands" / "总结.md",
        "---\ndescription: 总结\nargument-hint: '#文件'\nmodel: m2\nallowed-tools: now, read_file\n---\nbody $ARGUMENTS\n",
    )
    write(user / "commands" / "review" / "pdf.md", "plain body\n")
    write(user / "commands" / "help.md", "not mine to redefine\n")
    write(user / "commands" / "shared.md", "the user's\n")
    write(folder / ".generalagent" / "commands" / "shared.md", "the folder's\n")
    write(
        folder / ".generalagent" / "commands" / "deploy.md",
        "---\nallowed-tools: [run_bash_command]\n---\ndeploy\n",
    )
    untrusted = load_custom_commands(
        user, FolderTrust(folder.resolve(), (".generalagent",), False), folder, BUILTIN
    )
    by_name = {c.name: c for c in untrusted.commands}
    assert sorted(by_name) == ["/review:pdf", "/shared", "/总结"]
    summary = by_name["/总结"]
    assert (summary.description, summary.argument_hint, summary.model, summary.allowed_tools) == (
        "总结",
        "#文件",
        "m2",
        ("now", "read_file"),
    )
    assert any("/help is a built-in command" in p.english() for p in untrusted.problems)
    trusted = load_custom_commands(
        user, FolderTrust(folder.resolve(), (".generalagent",), True), folder, BUILTIN
    )
    by_name = {c.name: c for c in trusted.commands}
    assert by_name["/shared"].body == "the user's\n"  # the folder cannot redefine the user's
    assert by_name["/deploy"].scope == "folder" and by_name["/deploy"].allowed_tools == ("run_bash_command",)


def test_a_command_linked_out_of_its_folder_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("PRIVATE")
    (tmp_path / "user" / "commands").mkdir(parents=True)
    os.symlink(secret, tmp_path / "user" / "commands" / "leak.md")
    loaded = load_custom_commands(tmp_path / "user", FolderTrust(), tmp_path, BUILTIN)
    assert loaded.commands == () and "leads outside" in loaded.problems[0].english()


def test_the_registry_finds_builtins_aliases_and_the_users_commands() -> None:
    mine = custom_command_record(
        CustomCommand("/总结", Path("总结.md"), "b", description="总结报告", argument_hint="#文件")
    )
    registry = CommandRegistry([*COMMANDS, mine])
    assert registry.find("/HELP") is registry.find("/help")
    assert registry.find("/exit") is registry.find("/quit")
    assert registry.find("/总结") is mine and registry.find("/nope") is None
    assert MenuEntry("/总结", "#文件", "总结报告") in registry.menu()
