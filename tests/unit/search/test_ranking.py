"""Re-ranking FTS5's candidates: document evidence and documents named by the query."""

from __future__ import annotations

from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from generalAgent.documents.index import SearchIndex
from generalAgent.search.lookup import find_chunks
from generalAgent.search.ranking import Candidate, name_words, names_document, rerank, words


def test_words_split_latin_from_chinese():
    assert words("Q3营收 baseline multi-agent 4.1 查看员工手册") == (
        "q3",
        "营收",
        "baseline",
        "multi",
        "agent",
        "4",
        "1",
        "查看员工手册",
    )


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("tar.1.md", ("tar",)),
        ("IPC::System::Simple.3pm.md", ("ipc", "system", "simple")),
        ("员工手册.pdf", ("员工手册",)),
        ("Q3 report.final.docx", ("q3", "report", "final")),
        ("Deploy guide", ("deploy", "guide")),
    ],
)
def test_a_name_is_the_title_without_its_extensions(title: str, expected: tuple[str, ...]):
    assert name_words(title) == expected


@pytest.mark.parametrize(
    ("query", "title", "named"),
    [
        ("tar 列出归档内容", "tar.1.md", True),
        ("xargs run commands in parallel", "xargs.1.md", True),
        ("查看员工手册里的年假", "员工手册.pdf", True),
        ("ipc system simple examples", "IPC::System::Simple.3pm", True),
        ("a simple system", "IPC::System::Simple.3pm", False),  # every word, in order
        ("start the tarball", "tar.1.md", False),  # whole words only
        ("what changed in 2024", "2024.pdf", False),  # numbers name too much
        ("表格", "表.md", False),  # so do single characters
    ],
)
def test_a_query_names_a_document_with_all_its_words_in_order(query: str, title: str, named: bool):
    assert names_document(words(query), name_words(title)) is named


def test_a_document_with_several_good_chunks_beats_a_lone_chunk():
    candidates = [
        Candidate(1, "stray", 10.0),
        Candidate(2, "manual", 9.0),
        Candidate(3, "manual", 8.0),
    ]
    assert [rowid for rowid, _ in rerank(candidates, named=())] == [2, 3, 1]


def test_a_named_documents_best_passage_comes_first_and_each_document_keeps_its_order():
    candidates = [
        Candidate(1, "other", 10.0),
        Candidate(2, "other", 9.0),
        Candidate(3, "tar", 7.0),
        Candidate(4, "tar", 6.0),
    ]
    ranked = rerank(candidates, named={"tar"})
    assert [rowid for rowid, _ in ranked] == [3, 1, 4, 2]
    assert [score for _, score in ranked] == sorted((score for _, score in ranked), reverse=True)


def test_the_query_naming_a_document_finds_its_passage_first(settings: Settings, tmp_path: Path):
    """Two manuals use the same words; the one the query names wins."""
    (tmp_path / "cpio.md").write_text(
        "# OPTIONS\n\n-t, --list print a table of contents of the archive input.\n", encoding="utf-8"
    )
    (tmp_path / "tar.md").write_text(
        "# OPTIONS\n\n-t, --list list the contents of an archive.\n", encoding="utf-8"
    )
    with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
        for name in ("cpio.md", "tar.md"):
            index.index_file(tmp_path / name)
        hits = find_chunks(index.conn, "tar list the contents of an archive", index.segmenter, 2)
        assert "list the contents of an archive" in hits[0].text
        hits = find_chunks(index.conn, "cpio list the contents of an archive", index.segmenter, 2)
        assert "table of contents" in hits[0].text
