"""The gloss dictionary read early: only where the index holds a document of the chat's
folder in another language than Chinese, once, and not after the chat has ended."""

from __future__ import annotations

from pathlib import Path

from generalAgent.config.settings import Settings
from generalAgent.documents.background_indexing import FolderIndexer
from generalAgent.documents.gloss_warmup import GlossWarmup, foreign_documents_under


def indexed(settings: Settings, folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    assert FolderIndexer(settings.paths.indexes_db, settings.documents, folder.resolve()).start().wait(60)
    return folder.resolve()


def test_only_a_folder_with_a_document_in_another_language_asks_for_the_dictionary(
    settings: Settings, tmp_path: Path
) -> None:
    db = settings.paths.indexes_db
    assert not foreign_documents_under(db, tmp_path)  # no index yet
    english = indexed(
        settings, tmp_path / "manuals", {"modules.md": "# Kernel modules\n\nUse lsmod to list them.\n"}
    )
    chinese = indexed(
        settings, tmp_path / "制度", {"报销.md": "# 报销\n\n差旅报销需要经理审批，三十天内提交。\n"}
    )
    assert foreign_documents_under(db, english)
    assert not foreign_documents_under(db, chinese)
    assert not foreign_documents_under(db, tmp_path / "man")  # a prefix of the name is not the folder
    assert foreign_documents_under(db, tmp_path.resolve())  # a parent holds them too

    quiet = GlossWarmup(db, chinese)
    thread = quiet.request()
    assert thread is not None
    thread.join(30)
    assert not quiet.started

    warm = GlossWarmup(db, english)
    thread = warm.request()
    assert thread is not None
    thread.join(60)
    assert warm.started and warm.request() is None  # once per chat

    ended = GlossWarmup(db, english)
    ended.cancel()
    assert ended.request() is None and not ended.started
