"""The built-in commands and the user's own show their argument hint the same way, in both languages."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from generalAgent.cli.builtin_commands import COMMANDS, help_text, translated_commands
from generalAgent.cli.custom_commands import CustomCommand
from generalAgent.i18n import use_language

MINE = CustomCommand("/总结", Path("总结.md"), "b", description="总结报告", argument_hint="#文件")


def shown_help() -> list[str]:
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(help_text((MINE,)))
    return [" ".join(line.split()) for line in out.getvalue().splitlines()]


def test_a_hint_is_its_own_field_never_part_of_the_description() -> None:
    for entry in translated_commands():
        assert not entry.description.startswith(("[", entry.argument_hint or "\0")), entry
    hints = {command.name: command.argument_hint for command in COMMANDS if command.argument_hint}
    assert hints == {
        "/resume": "[ID]",
        "/rename": "TITLE",
        "/rewind": "[N]",
        "/compact": "[FOCUS]",
        "/upload": "PATH",
        "/model": "[NAME]",
        "/thinking": "[full|collapsed|off]",
    }


def test_help_shows_the_usage_then_the_description_for_both_kinds() -> None:
    lines = shown_help()
    assert "/resume [ID] continue a session (a unique prefix of its id is enough; alone, pick one)" in lines
    assert "/thinking [full|collapsed|off] how reasoning is shown; alone, the last turn's in full" in lines
    assert "/help this help" in lines
    assert "/总结 #文件 总结报告 (yours)" in lines


def test_in_chinese_hints_and_descriptions_are_translated_and_values_are_not() -> None:
    use_language("zh")
    try:
        entries = {entry.name: entry for entry in translated_commands()}
        assert entries["/compact"].argument_hint == "[重点]" and "重点" in entries["/compact"].description
        assert entries["/rename"].argument_hint == "标题" and not entries["/rename"].description.startswith(
            "标题"
        )
        assert entries["/thinking"].argument_hint == "[full|collapsed|off]"  # the values typed
        assert entries["/resume"].argument_hint == "[ID]" and "继续" in entries["/resume"].description
        lines = shown_help()
        assert any(line.startswith("/upload 路径 ") for line in lines)
        assert "/总结 #文件 总结报告 (你的)" in lines
    finally:
        use_language("en")
