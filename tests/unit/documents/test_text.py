"""Plain text, Markdown and code in the encodings our users' files come in."""

from __future__ import annotations

from pathlib import Path

from generalAgent.config.settings import Settings
from generalAgent.documents.extract import extract_document


def test_text_utf8_gb18030_markdown_and_code(tmp_path: Path, settings: Settings):
    (tmp_path / "notes.md").write_text("# 标题\n\n正文内容", encoding="utf-8")
    (tmp_path / "legacy.txt").write_bytes("营收增长报告".encode("gb18030"))
    (tmp_path / "tool.py").write_text("# not a heading\nprint('hi')\n", encoding="utf-8")
    assert extract_document(tmp_path / "notes.md", settings.documents).file_type == "markdown"
    assert extract_document(tmp_path / "legacy.txt", settings.documents).text == "营收增长报告"
    code = extract_document(tmp_path / "tool.py", settings.documents)
    assert code.blocks[0].markdown is False
