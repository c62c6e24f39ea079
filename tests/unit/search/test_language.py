"""A document's main language, told from its characters at indexing and stored with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from generalAgent.documents.index import SearchIndex
from generalAgent.search.language import main_language, query_language


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("The kernel message is shown with dmesg and the log of the last boot.", "en"),
        ("使用 journalctl -b 命令查看从最后一次启动开始的日志，dmesg 显示内核消息。", "zh"),
        ("システムのログは journalctl で表示します。", "ja"),
        ("시스템 로그를 보려면 journalctl 명령을 사용합니다.", "ko"),
        ("Le noyau affiche ses messages avec dmesg pendant le démarrage du système.", "latin"),
        ("Журнал системы показывает команда journalctl.", "ru"),
        ("1234 5678 --- ...", ""),
    ],
)
def test_the_main_language_is_told_by_the_script(text: str, language: str):
    assert main_language(text) == language


def test_a_chinese_manual_full_of_english_commands_is_chinese():
    text = "设置默认编辑器：$ sudo update-alternatives --config editor /usr/bin/vim.basic 推荐给新手。" * 5
    assert main_language(text) == "zh"


def test_a_question_with_any_chinese_is_chinese():
    assert query_language("journalctl 上次启动的日志") == "zh"
    assert query_language("log since the last boot") == "en"


def test_indexing_stores_the_language_and_a_reused_index_reports_it(settings: Settings, tmp_path: Path):
    (tmp_path / "guide.md").write_text("# Boot\n\nShow the log of the last boot with journalctl.\n")
    (tmp_path / "指南.md").write_text("# 启动\n\n用 journalctl -b 查看上次启动以来的日志。\n")
    with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
        english = index.index_file(tmp_path / "guide.md")
        chinese = index.index_file(tmp_path / "指南.md")
        assert (english.language, chinese.language) == ("en", "zh")
        assert index.index_file(tmp_path / "指南.md").language == "zh"  # reused: read from the row
        assert index.language(english.item_id) == "en"
