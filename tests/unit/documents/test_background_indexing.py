"""The working folder indexed in the background: every document once, bounded, cancellable,
and the folder search afterwards reads nothing new."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

import pytest

from generalAgent.cli.folder_indexing import BackgroundWork, FolderIndexingView, ended_line
from generalAgent.config.settings import load_settings
from generalAgent.documents.background_indexing import MAX_FILES, FolderIndexer, IndexingProgress
from generalAgent.documents.folder import MAX_FOLDER_FILES, search_folder
from generalAgent.search import connection


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


def _large_folder(tmp_path: Path, megabytes: int) -> Path:
    """Two small notes around one large text file (sorted: a.md, big.txt, z.md)."""
    folder = tmp_path / "large"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nwalrus survey of the spring\n", encoding="utf-8")
    (folder / "z.md").write_text("# Z\n\nwalrus survey of the autumn\n", encoding="utf-8")
    lines = (f"Line {n}: the harbour ledger of the walrus survey, season {n % 97}.\n" for n in range(10**8))
    with (folder / "big.txt").open("w", encoding="utf-8") as out:
        written = 0
        while written < megabytes << 20:
            written += out.write("".join(next(lines) for _ in range(1_000)))
    return folder


def _whole(db: Path) -> dict[str, int]:
    """Documents by name with their chunk counts, after checking that every item has its
    document, every chunk its item, and every document exactly the chunks it counts."""
    with closing(sqlite3.connect(db)) as conn:
        assert (
            conn.execute("SELECT COUNT(*) FROM items").fetchone()
            == conn.execute("SELECT COUNT(*) FROM documents").fetchone()
        )
        assert conn.execute(
            "SELECT COUNT(*) FROM chunks WHERE item_id NOT IN (SELECT id FROM items)"
        ).fetchone() == (0,)
        rows = conn.execute(
            "SELECT d.file_name, d.total_chunks, (SELECT COUNT(*) FROM chunks c WHERE c.item_id = d.item_id)"
            " FROM documents d"
        ).fetchall()
        assert conn.execute("SELECT COUNT(*) FROM chunks").fetchone() == (
            conn.execute("SELECT COUNT(*) FROM chunks_fts").fetchone()[0],
        )
    assert all(counted == stored for _name, counted, stored in rows)
    return {name: counted for name, counted, _stored in rows}


def test_a_cancel_stops_the_pass_within_a_second_inside_a_large_file_which_the_next_pass_indexes_whole(
    tmp_path: Path,
) -> None:
    settings = load_settings(env_file=None, paths={"data_dir": tmp_path / "data"})
    folder = _large_folder(tmp_path, 24)  # ~10 s of reading here
    indexer = FolderIndexer(settings.paths.indexes_db, settings.documents, folder).start()
    began = time.monotonic()
    while indexer.progress().current != "big.txt" and time.monotonic() - began < 60:
        time.sleep(0.01)
    time.sleep(1.0)  # well inside the file: reading, chunking and segmenting it
    asked = time.monotonic()
    indexer.cancel()
    assert indexer.wait(30)
    stopped_after = time.monotonic() - asked
    progress = indexer.progress()
    assert (progress.done, progress.indexed, progress.failed, progress.stopped) == (1, 1, 0, "cancelled")
    # The reading stops at the next 1 MB piece: ~0.3 s of CPU, under a second on a free core
    # (1.4 s at worst at load 10 on two cores); the whole file takes 10+ s.
    assert stopped_after < 2.5, f"the pass went on {stopped_after:.1f} s after the cancel"
    assert _whole(settings.paths.indexes_db) == {"a.md": 1}  # nothing of big.txt, not even its path
    again = FolderIndexer(settings.paths.indexes_db, settings.documents, folder).start()
    assert again.wait(120) and again.progress().indexed == 2 and not again.progress().stopped
    documents = _whole(settings.paths.indexes_db)
    assert set(documents) == {"a.md", "big.txt", "z.md"} and documents["big.txt"] > 10_000
    found = search_folder(settings.paths.indexes_db, settings.documents, folder, "harbour ledger season 42")
    assert found.indexed == 0 and any(Path(document.file).name == "big.txt" for document in found.documents)


def test_a_cancel_while_a_file_is_written_rolls_its_transaction_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings(env_file=None, paths={"data_dir": tmp_path / "data"})
    folder = _large_folder(tmp_path, 1)
    indexer = FolderIndexer(settings.paths.indexes_db, settings.documents, folder)
    opened = connection.connect

    def connect_watching_writes(path: Path, tracks: Sequence[connection.Track] = ()) -> sqlite3.Connection:
        conn = opened(path, tracks)

        def cancel_at_the_document_row(statement: str) -> None:
            # The last write of big.txt's transaction: its chunks are written by then.
            if statement.startswith("INSERT INTO documents") and indexer.progress().current == "big.txt":
                indexer.cancel()

        conn.set_trace_callback(cancel_at_the_document_row)
        return conn

    monkeypatch.setattr(connection, "connect", connect_watching_writes)
    assert indexer.start().wait(120)
    progress = indexer.progress()
    assert (progress.done, progress.indexed, progress.stopped) == (1, 1, "cancelled")
    assert _whole(settings.paths.indexes_db) == {"a.md": 1}
    monkeypatch.setattr(connection, "connect", opened)
    again = FolderIndexer(settings.paths.indexes_db, settings.documents, folder).start()
    assert again.wait(120) and again.progress().indexed == 2
    assert set(_whole(settings.paths.indexes_db)) == {"a.md", "big.txt", "z.md"}
