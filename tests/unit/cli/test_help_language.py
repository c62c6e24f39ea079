"""Typer's own usage errors in the UI language (cli/help_language.py): its copy of Click
writes them as English f-strings, matched here against the catalog's shapes. Each error
is made by a real Typer command, so a Typer release that words one differently fails here."""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from generalAgent import i18n
from generalAgent.cli.help_language import TYPERS_CLICK_ERRORS, _translate_typers_click, said_in_ui_language


class Colour(StrEnum):
    red = "red"
    blue = "blue"


demo = typer.Typer()


@demo.command()
def paint(
    wall: Annotated[str, typer.Argument()],
    coats: Annotated[int, typer.Option("--coats", min=1, max=3)] = 1,
    colour: Annotated[Colour, typer.Option("--colour")] = Colour.red,
    dry: Annotated[bool, typer.Option("--dry")] = False,
) -> None:
    """A command with one option of each kind a user can get wrong."""


@pytest.fixture
def chinese() -> Iterator[None]:
    _translate_typers_click()  # wraps with the translator of the moment: English says English
    i18n.use_language("zh")
    try:
        yield
    finally:
        i18n.use_language("en")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["kitchen", "--coat", "2"], "没有这个选项：--coat（可能是这些选项：--coats）"),
        (["kitchen", "--bogus"], "没有这个选项：--bogus"),
        (["kitchen", "--coats", "many"], "'--coats' 的值无效：'many' 不是有效的 整数。"),
        (["kitchen", "--coats", "9"], "'--coats' 的值无效：9 不在 1<=x<=3 范围内。"),
        (["kitchen", "--colour", "green"], "'--colour' 的值无效：'green' 不是 'red', 'blue' 之一。"),
        (["kitchen", "--coats"], "选项 '--coats' 需要一个值。"),
        (["kitchen", "--dry=yes"], "选项 '--dry' 不接受值。"),
        (["kitchen", "hall"], "多出了参数（hall）"),
        ([], "缺少参数 'wall'."),
    ],
)
def test_typers_usage_errors_are_said_in_chinese(chinese: None, args: list[str], said: str) -> None:
    result = CliRunner().invoke(demo, args, env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 2
    assert said in result.output, result.output


def test_in_english_the_errors_stay_as_typer_wrote_them() -> None:
    _translate_typers_click()
    result = CliRunner().invoke(demo, ["kitchen", "--coat", "2"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert "No such option: --coat (Possible options: --coats)" in result.output


def test_a_message_of_no_known_shape_is_left_as_it_is(chinese: None) -> None:
    assert said_in_ui_language("The wall is wet.") == "The wall is wet."
    # Our own messages, already translated, pass through a shape unchanged.
    assert said_in_ui_language("Invalid value: 路径不存在") == "值无效：路径不存在"


def test_every_shape_has_a_translation_with_the_same_fields(chinese: None) -> None:
    for english in TYPERS_CLICK_ERRORS:
        assert i18n._(english) != english, english
