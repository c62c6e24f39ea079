"""The working folder indexed in the background: every document once, bounded, cancellable,
and the folder search afterwards reads nothing new."""

from __future__ import annotations

from pathlib import Path

from generalAgent.cli.folder_indexing import BackgroundWork, FolderIndexingView, ended_line
from generalAgent.config.settings import load_settings
from generalAgent.documents.background_indexing import MAX_FILES, FolderIndexer, IndexingProgress
from generalAgent.documents.folder import MAX_FOLDER_FILES, search_folder


def _folder(tmp_path: Path, count: int) -> Path:
    folder = tmp_path / "docs"
    (folder / ".hidden").mkdir(parents=True)
    (folder / ".hidden" / "secret.md").write_text("# hidden\n\nnot indexed", encoding="utf-8")
    for n in range(count):
        (folder / f"note{n:02}.md").write_text(
            f"# Note {n}\n\nwalrus survey {n} of the season\n", encoding="utf-8"
        )
    return folder


def test_a_pass_indexes_every_document_once_and_the_search_then_reads_nothing(tmp_path: Path) -> None:
    settings = load_settings(env_file=None, paths={"data_dir": tmp_path / "data"})
    folder = _folder(tmp_path, 6)
    ended: list[IndexingProgress] = []
    indexer = FolderIndexer(settings.paths.indexes_db, settings.documents, folder, on_done=ended.append)
    assert indexer.start().wait(60)
    progress = indexer.progress()
    assert (progress.done, progress.total, progress.indexed, progress.failed) == (6, 6, 6, 0)
    assert progress.finished and not progress.stopped and ended == [progress]
    found = search_folder(settings.paths.indexes_db, settings.documents, folder, "walrus survey")
    assert (found.indexed, found.unchanged) == (0, 6)  # the first question paid no indexing
    again = FolderIndexer(settings.paths.indexes_db, settings.documents, folder).start()
    assert again.wait(60) and again.progress().indexed == 0
    assert ended_line(again.progress()) is None  # nothing new: no line for it


def test_a_cancelled_or_timed_out_pass_stops_between_files_and_says_where(tmp_path: Path) -> None:
    settings = load_settings(env_file=None, paths={"data_dir": tmp_path / "data"})
    folder = _folder(tmp_path, 5)
    indexer = FolderIndexer(settings.paths.indexes_db, settings.documents, folder)
    indexer.cancel()  # before it starts: not one file is read
    assert indexer.start().wait(60)
    progress = indexer.progress()
    assert (progress.done, progress.stopped) == (0, "cancelled")
    assert ended_line(progress) == (
        "dim",
        "Indexing this folder paused at 0/5 files; a search goes on from there.",
    )
    timed = FolderIndexer(settings.paths.indexes_db, settings.documents, folder, max_seconds=0).start()
    assert timed.wait(60) and timed.progress().stopped == "time"
    bounded = FolderIndexer(settings.paths.indexes_db, settings.documents, folder, max_files=2).start()
    assert bounded.wait(60) and (bounded.progress().total, bounded.progress().indexed) == (2, 2)
    assert MAX_FILES == MAX_FOLDER_FILES


def test_the_prompt_shows_the_pass_on_its_toolbar_and_says_its_end_once(tmp_path: Path) -> None:
    settings = load_settings(env_file=None, paths={"data_dir": tmp_path / "data"})
    indexer = FolderIndexer(settings.paths.indexes_db, settings.documents, _folder(tmp_path, 3))
    view = FolderIndexingView(indexer)
    work = BackgroundWork([view])
    assert work.toolbar() == "Indexing this folder: 0/0 files" and work.running() == [indexer]
    assert not work.has_news()
    indexer.start().wait(60)
    assert work.toolbar() == "" and work.running() == []
    assert work.has_news()
    (line,) = work.news()
    assert line[1].startswith("Indexed 3 documents of this folder in the background (")
    assert not work.has_news() and work.news() == []
