"""A long text file is read, chunked and indexed in pieces: what the pieces make is the file.

TEXT_PIECE_BYTES is made small here so a few kilobytes cross many piece boundaries: a
CRLF, a multi-byte character and a Markdown section cut by one, and the encoding of a file
whose first piece is plain ASCII.
"""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generalAgent.config.settings import Settings
from generalAgent.documents import text as text_reader
from generalAgent.documents.extract import extract_document
from generalAgent.documents.index import SearchIndex
from generalAgent.documents.reading import Reading
from generalAgent.search.storage import content_text


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(text_reader, "TEXT_PIECE_BYTES", 256)
    return 256


def pieces(data: bytes) -> list[tuple[str, bool]]:
    return list(text_reader._text_pieces(io.BytesIO(data), "notes.txt", Reading(total=len(data))))


def test_pieces_end_at_paragraph_breaks_and_give_the_text_back(small_pieces: int):
    paragraphs = [f"Paragraph {n}: the quarterly revenue grew by {n} percent." for n in range(60)]
    text = "\n\n".join(paragraphs)
    got = pieces(text.encode())
    assert len(got) > 5
    assert [continues for _, continues in got] == [False] + [True] * (len(got) - 1)
    assert "\n\n".join(piece for piece, _ in got) == text  # cut at breaks: nothing added, nothing lost


def test_a_crlf_and_a_chinese_character_cut_by_a_piece_boundary_survive(small_pieces: int):
    line = "营收增长百分之二十，客户满意度持续提升。\r\n"  # 3-byte characters, CRLF line ends
    text = line * 40
    got = "".join(piece for piece, _ in pieces(text.encode("utf-8")))
    assert "\r" not in got and "\ufffd" not in got
    assert got.replace("\n", "") == text.replace("\r\n", "")


def test_an_ascii_start_longer_than_a_piece_does_not_decide_the_encoding(small_pieces: int):
    text = "plain ASCII log line\n" * 40 + "第一季度营收报告，繁體字也可以。\n" * 5
    got = "".join(piece for piece, _ in pieces(text.encode("gb18030")))
    assert got.replace("\n", "") == text.replace("\n", "")


def test_utf16_is_read_in_pieces(small_pieces: int):
    text = "第一季度营收增长 revenue grew\n" * 50
    for encoded in (text.encode("utf-16"), text.encode("utf-16-le")):
        assert "".join(p for p, _ in pieces(encoded)).replace("\n", "") == text.replace("\n", "")


@given(
    text=st.lists(
        st.sampled_from(["a", "Z", " ", "\n", "\r\n", "\t", "营", "收", "é", "😀"]), max_size=600
    ).map("".join),
    piece=st.integers(min_value=4, max_value=64),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]),
)
def test_pieces_hold_every_character_of_the_file(text: str, piece: int, encoding: str):
    """Whatever the cut points, the pieces hold the file's characters in order (line ends
    as "\n"), every piece but the first continues, and no piece is blank. (Encodings without
    a byte-order mark are guessed from a sample, which pieces of a few bytes cannot give:
    see the tests above for them at real sizes.)"""
    data = text.encode(encoding)
    if not text.strip():
        return
    original = text_reader.TEXT_PIECE_BYTES
    text_reader.TEXT_PIECE_BYTES = piece
    try:
        got = pieces(data)
    finally:
        text_reader.TEXT_PIECE_BYTES = original
    assert all(p.strip() for p, _ in got)
    assert [c for _, c in got] == [False] + [True] * (len(got) - 1)
    assert "".join("".join(p for p, _ in got).split()) == "".join(text.split())


def test_damage_past_the_first_piece_is_replaced_and_noted_with_its_line(small_pieces: int):
    data = ("营收增长。\n" * 100).encode("utf-8") + b"\xff\xfe\xfd broken\n" + "利润。\n".encode()
    reading = Reading(total=len(data))
    got = list(text_reader._text_pieces(io.BytesIO(data), "notes.txt", reading))
    text = "\n".join(p for p, _ in got)
    assert "\ufffd\ufffd\ufffd broken" in text and text.rstrip().endswith("利润。")
    assert [note.english() for note in reading.notes] == [
        "notes.txt is utf-8 text with damage: 3 invalid byte sequences were replaced by U+FFFD "
        "(the first on line 101); the rest reads normally."
    ]


def test_every_chunk_of_an_indexed_long_file_is_its_stored_text(
    tmp_path: Path, settings: Settings, small_pieces: int
):
    lines = []
    for section in range(12):
        lines.append(f"# Section {section}\n")
        lines.extend(f"第{section}节第{n}段：营收增长 revenue grew {n} percent.\n\n" for n in range(8))
    path = tmp_path / "long.md"
    path.write_text("".join(lines), encoding="utf-8")
    with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
        document = index.index_file(path)
        content = content_text(index.conn, document.item_id)
        rows = index.conn.execute(
            "SELECT c.start_position, c.end_position, c.heading, f.text FROM chunks c"
            " JOIN chunks_fts f ON f.rowid = c.rowid WHERE c.item_id = ? ORDER BY c.chunk_index",
            (document.item_id,),
        ).fetchall()
        hits = index.search(path, "第11节第7段")
    assert content is not None and document.total_chunks == len(rows) > 12
    assert all(content[start:end] == text for start, end, _, text in rows)
    # A section cut by a piece boundary keeps its heading on the far side.
    assert all(heading.startswith("Section") for _, _, heading, _ in rows)
    assert hits and hits[0].heading == "Section 11"
    assert extract_document(path, settings.documents).text.replace("\n", "") == path.read_text().replace(
        "\n", ""
    )


def test_the_text_lives_apart_from_the_item_and_goes_with_it(tmp_path: Path, settings: Settings):
    path = tmp_path / "notes.txt"
    path.write_text("The quarterly revenue grew by twenty percent.\n", encoding="utf-8")
    with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
        document = index.index_file(path)
        conn: sqlite3.Connection = index.conn
        assert conn.execute("SELECT content FROM items WHERE id = ?", (document.item_id,)).fetchone()[0] == ""
        assert content_text(conn, document.item_id) == "The quarterly revenue grew by twenty percent.\n"
        assert [hit.chunk_index for hit in index.search(path, "revenue.*percent", regex=True)] == [0]
        conn.execute("DELETE FROM items WHERE id = ?", (document.item_id,))
        assert conn.execute("SELECT COUNT(*) FROM document_texts").fetchone()[0] == 0


def test_a_regex_search_of_a_long_file_reads_it_in_pieces(
    tmp_path: Path, settings: Settings, small_pieces: int, monkeypatch: pytest.MonkeyPatch
):
    from generalAgent.search import regex_scan, storage

    monkeypatch.setattr(storage, "CONTENT_READ_BYTES", 100)
    monkeypatch.setattr(regex_scan, "REGEX_WINDOW_CHARS", 300)
    monkeypatch.setattr(regex_scan, "REGEX_REACH_CHARS", 60)
    path = tmp_path / "long.log"
    path.write_text("".join(f"line {n}: 营收 grew {n % 7} percent\n" for n in range(400)), encoding="utf-8")
    with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
        index.index_file(path)
        hits = index.search(path, r"^line 3\d\d: 营收 grew 6", max_results=50, regex=True)
    expected = {f"line {n}: 营收 grew 6" for n in range(300, 400) if n % 7 == 6}
    found = {line[: len("line 300: 营收 grew 6")] for hit in hits for line in hit.text.splitlines()}
    assert expected <= found and len(hits) <= 50
