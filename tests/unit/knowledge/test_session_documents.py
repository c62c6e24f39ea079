"""A file attached in a session is that session's document: indexed for it, but not part of
the knowledge base that every session searches; a file indexed elsewhere still is."""

from __future__ import annotations

from pathlib import Path

from generalAgent.config.settings import Settings
from generalAgent.documents import create_index
from generalAgent.knowledge import open_store, search_knowledge


def test_attachments_stay_out_of_the_knowledge_base(settings: Settings, tmp_path: Path) -> None:
    upload = settings.paths.workspaces_dir / "session-1" / "uploads" / "harbour.txt"
    upload.parent.mkdir(parents=True)
    upload.write_text("The harbour crane inspection is due in March.\n", encoding="utf-8")
    mine = tmp_path / "mine.txt"
    mine.write_text("The lighthouse crane was repainted in May.\n", encoding="utf-8")
    create_index(upload, settings)
    create_index(mine, settings)
    with open_store(settings) as store:  # where create_index put them: indexes.db or the team's store
        assert [item.title for item in store.list_knowledge()] == ["mine.txt"]
        assert store.count_knowledge() == 1
        found = search_knowledge(store, "crane")
        assert [hit.item.title for hit in found.results] == ["mine.txt"]
