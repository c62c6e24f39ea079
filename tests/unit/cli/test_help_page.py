"""The command line's help pages and usage errors in the UI language (cli/help_page.py),
drawn from Click's public command API: no Typer or Click module is patched. Each error is
made by a real Typer command, so a Typer release that words one differently fails here."""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import pytest
import typer

from generalAgent import i18n
from generalAgent.cli.app import command_line, register_subcommands
from generalAgent.cli.help_page import USAGE_ERRORS, run, said_in_ui_language, speak_in_ui_language


class Colour(StrEnum):
    red = "red"
    blue = "blue"


demo = typer.Typer(context_settings={"help_option_names": ["-h", "--help"]})


@demo.command()
def paint(
    wall: Annotated[str, typer.Argument(help="The wall")],
    coats: Annotated[int, typer.Option("--coats", min=1, max=3, help="How many")] = 1,
    colour: Annotated[Colour, typer.Option("--colour")] = Colour.red,
    dry: Annotated[bool, typer.Option("--dry", help="Only say what would be done")] = False,
) -> None:
    """A command with one option of each kind a user can get wrong."""


def said(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")
    code = run(speak_in_ui_language(typer.main.get_command(demo)), args, "paint")
    captured = capsys.readouterr()
    return code, captured.out + captured.err


# What Typer says, in Chinese: its 0.28 words (its copy of Click) or its 0.29 ones (pydantic's).
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["kitchen", "--coat", "2"], ["没有这个选项：--coat（可能是这些选项：--coats）"]),
        (["kitchen", "--bogus"], ["没有这个选项：--bogus"]),
        (
            ["kitchen", "--coats", "many"],
            ["'--coats' 的值无效：'many' 不是有效的 整数。", "'--coats' 的值无效：不是有效的整数。"],
        ),
        (
            ["kitchen", "--coats", "9"],
            ["'--coats' 的值无效：9 不在 1<=x<=3 范围内。", "'--coats' 的值无效：应小于或等于 3。"],
        ),
        (["kitchen", "--colour", "green"], ["'--colour' 的值无效：'green' 不是 'red', 'blue' 之一。"]),
        (["kitchen", "--coats"], ["选项 '--coats' 需要一个值。"]),
        (["kitchen", "--dry=yes"], ["选项 '--dry' 不接受值。"]),
        (["kitchen", "hall"], ["多出了参数（hall）"]),
        ([], ["错误：缺少参数 'wall'。"]),
    ],
)
def test_usage_errors_are_said_in_chinese(
    chinese: None,
    args: list[str],
    expected: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, output = said(args, capsys, monkeypatch)
    assert code == 2
    assert any(words in output for words in expected), output
    assert "Input should" not in output and "Invalid value" not in output
    assert "错误：" in output and "错误:" not in output  # the language's own colon
    if args[1:2] in (["--coat"], ["--bogus"], ["hall"]):  # Click knows the command: the usage comes first
        assert "用法： paint [OPTIONS] " in output and "运行 'paint -h' 查看帮助。" in output


def test_in_english_the_errors_stay_as_typer_wrote_them(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, output = said(["kitchen", "--coat", "2"], capsys, monkeypatch)
    assert code == 2
    assert "Usage: paint [OPTIONS] " in output and "Try 'paint -h' for help." in output
    assert "Error: No such option: --coat (Possible options: --coats)" in output


def test_the_help_page_is_in_chinese_and_shows_flags_without_a_type(
    chinese: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, output = said(["-h"], capsys, monkeypatch)
    assert code == 0
    assert "用法：" in output and "选项" in output and "参数" in output and "显示此帮助信息后退出。" in output
    assert "[默认：1]" in output and "[必填]" in output
    assert "<bool>" not in output and "Usage:" not in output and "Options" not in output
    dry = next(line for line in output.splitlines() if "--dry" in line)
    assert "BOOLEAN" not in dry and "Only say what would be done" in dry


def test_the_agents_own_help_under_a_chinese_locale(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    i18n.use_language(i18n.choose_language(None, {"LANG": "zh_CN.UTF-8"}))
    try:
        register_subcommands()
        code = run(command_line(), ["kb", "-h"], "generalagent")
    finally:
        i18n.use_language("en")
    shown = capsys.readouterr().out
    assert (
        code == 0 and "用法： generalagent kb" in shown and "知识库：添加、搜索、列出、查看、删除。" in shown
    )


def test_a_path_argument_click_refuses_is_said_in_chinese(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`generalagent tables FILE` on a file the user may not read: Click's own check, which
    Typer asks for on every path argument, said "Path '…' is not readable." in English."""
    import click.types

    locked = tmp_path / "salaries.xlsx"
    locked.write_bytes(b"")
    real_access = click.types.os.access
    # The tests run as root, whom every file is readable to: the check is told otherwise.
    monkeypatch.setattr(
        click.types.os, "access", lambda path, mode: mode != os.R_OK and real_access(path, mode)
    )
    monkeypatch.setenv("COLUMNS", "200")
    i18n.use_language("zh")
    try:
        register_subcommands()
        code = run(command_line(), ["tables", str(locked)], "generalagent")
    finally:
        i18n.use_language("en")
    shown = "".join(capsys.readouterr().err.split())  # a long temporary path wraps the line
    assert code == 2
    assert f"路径'{locked}'不可读。".replace(" ", "") in shown and "readable" not in shown, shown


def test_a_message_of_no_known_shape_is_left_as_it_is(chinese: None) -> None:
    assert said_in_ui_language("The wall is wet.") == "The wall is wet."
    # Our own messages, already translated, pass through a shape unchanged.
    assert said_in_ui_language("Invalid value: 路径不存在") == "值无效：路径不存在"


def test_every_shape_has_a_translation_with_the_same_fields(chinese: None) -> None:
    for english in USAGE_ERRORS:
        assert i18n._(english) != english, english


def test_no_typer_or_click_module_is_changed() -> None:
    import typer.core

    command = command_line()
    assert "format_help" in vars(command)  # the page is drawn by our object, not a patched class
    assert not any(name.startswith(("typer._click", "click")) for name in sys.modules if "help_page" in name)
    assert type(command).format_help is typer.core.TyperGroup.format_help
