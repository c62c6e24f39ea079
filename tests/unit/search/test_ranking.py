"""Re-ranking FTS5's candidates: document evidence, one hit per place, listings last, and the
fusion with plain BM25 (and with other phrasings of the question)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from generalAgent.documents.index import SearchIndex
from generalAgent.search.lookup import find_chunks, fused_places
from generalAgent.search.ranking import (
    Candidate,
    Ranked,
    by_place,
    fuse,
    is_listing,
    rerank,
    seat_plain,
    words,
)


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


def test_a_document_with_several_good_chunks_beats_a_lone_chunk():
    candidates = [
        Candidate(1, "stray", 10.0, ("stray", 1)),
        Candidate(2, "manual", 9.0, ("manual", 1)),
        Candidate(3, "manual", 8.0, ("manual", 2)),
    ]
    assert [entry.rowid for entry in rerank(candidates)] == [2, 3, 1]


def test_the_best_chunk_of_a_page_stands_for_it_and_the_others_fold_into_it():
    candidates = [
        Candidate(1, "book", 10.0, ("book", 7)),
        Candidate(2, "book", 9.0, ("book", 7)),
        Candidate(3, "book", 8.0, ("book", 9)),
        Candidate(4, "book", 7.0, ("book", 7)),
    ]
    ranked = rerank(candidates)
    assert [(entry.rowid, entry.folded) for entry in ranked] == [(1, (2, 4)), (3, ())]


def test_a_listing_never_outranks_body_text():
    candidates = [
        Candidate(1, "book", 30.0, ("book", 3), listing=True),
        Candidate(2, "book", 2.0, ("book", 40)),
    ]
    assert [entry.rowid for entry in rerank(candidates)] == [2, 1]


@pytest.mark.parametrize(
    "text",
    [
        "Key . . . . . . . . . . 158\nKey placement . . . . . . . . 161\nKey samples . . . . . 162",
        "第一章 LaTeX 的基本概念…………13\n1.1 概述……………13",
        "\\hrule, 89, 178, 291, 348 \\hrulefill, 181, 348 \\hsize, 93, 103, 114",
        "\\advance 给寄存器加上一个数 (第 261 页) \\afterassignment 赋值后插入记号 (第 244 页)"
        " \\atop 分式 (第 211 页) \\badness 盒子的劣度 (第 176 页) \\batchmode 不停顿 (第 269 页)"
        " \\begingroup 开始一个组 (第 241 页)",
    ],
)
def test_tables_of_contents_and_indexes_are_listings(text: str):
    assert is_listing(text)


@pytest.mark.parametrize(
    "text",
    [
        "The set key command enables a key (or legend) describing plots on a plot. See also"
        " set style (p. 197) and plot with (p. 125).",
        "\\draw (0,0) -- (1,2) -- (3,4) -- (5,6) -- (7,8) -- (9,10) -- (11,12);",
        "版本 1.2, 2.0, 3.1 和 4.5 都支持这个选项。",
    ],
)
def test_body_text_is_not_a_listing(text: str):
    assert not is_listing(text)


def test_a_word_of_the_documents_title_counts_like_any_other(settings: Settings, tmp_path: Path):
    """Two manuals use the same words; the title column tells them apart."""
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


PLACES = {1: ("a", 1), 2: ("a", 1), 3: ("a", 2), 4: ("b", 9), 5: ("b", 10)}


def test_fusion_keeps_what_either_ranking_puts_first():
    tuned = [Ranked(1, 9.0, (2,)), Ranked(3, 8.0), Ranked(4, 7.0)]
    plain = [Ranked(5, 3.0), Ranked(3, 2.0)]
    fused = fuse([tuned, plain], PLACES)
    # page a/2 is in both (ranks 2 and 2): first; then each ranking's first place.
    assert [PLACES[entry.rowid] for entry in fused] == [("a", 2), ("a", 1), ("b", 10), ("b", 9)]
    assert fused[1].folded == (2,)  # the tuned head stands for its page, the rest folds in


def test_fusion_shows_a_place_by_the_tuned_rankings_chunk_and_folds_the_others():
    tuned = [Ranked(1, 9.0)]
    plain = [Ranked(2, 5.0)]  # another chunk of the same page
    (only,) = fuse([tuned, plain], PLACES)
    assert only.rowid == 1 and only.folded == (2,)
    assert only.score == pytest.approx(2 / 61)


def test_plain_bm25_ranks_places_with_listings_last():
    scored = [(4, 9.0), (1, 8.0), (2, 7.0), (3, 6.0)]
    assert [(e.rowid, e.folded) for e in by_place(scored, PLACES)] == [(4, ()), (1, (2,)), (3, ())]
    assert [e.rowid for e in by_place(scored, PLACES, listings={4})] == [1, 3, 4]


def test_a_passage_the_title_weight_buries_is_still_in_the_top_five(settings: Settings, tmp_path: Path):
    """Sections whose headings repeat the question's words win the tuned ranking (title
    weight 8) and put it 7th; the one passage that answers in its body, under an unrelated
    heading, is plain BM25's first and so the fusion keeps it among the first five."""
    sections = [f"# Backup options part {n}\n\nSee the general notes in chapter {n}.\n" for n in range(6)]
    sections.insert(
        3,
        "# Miscellany\n\nTo make a backup keep every option: rsync -aHAX backup options "
        "backup options preserve hard links.\n",
    )
    (tmp_path / "guide.md").write_text("\n".join(sections), encoding="utf-8")
    with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
        document = index.index_file(tmp_path / "guide.md")
        hits = index.search_item(document.item_id, "backup options", 5)
        assert any("rsync -aHAX" in hit.text for hit in hits)


SEATS = {n: ("doc", n) for n in range(1, 12)}


def test_plain_bm25s_first_places_keep_seats_in_the_top_five():
    """The fusion put plain BM25's 2nd and 3rd places 6th and 8th; seating moves them into
    the last places of the top five, in plain's order, and pushes the others down."""
    fused = [Ranked(n, 1.0 - n / 100) for n in (1, 2, 3, 4, 5, 6, 7, 8)]
    plain = [Ranked(1, 9.0), Ranked(6, 8.0), Ranked(8, 7.0), Ranked(2, 6.0)]
    seated = seat_plain(fused, plain, SEATS)
    assert [entry.rowid for entry in seated] == [1, 2, 3, 6, 8, 4, 5, 7]
    scores = [entry.score for entry in seated]
    assert scores == sorted(scores, reverse=True)  # moved entries never break the order


def test_seating_changes_nothing_when_plain_bm25s_places_are_already_shown():
    fused = [Ranked(n, 1.0 - n / 100) for n in (3, 1, 2, 4, 5, 6)]
    plain = [Ranked(1, 9.0), Ranked(2, 8.0), Ranked(3, 7.0)]
    assert seat_plain(fused, plain, SEATS) == fused


def test_plain_bm25s_answer_outvoted_by_the_title_weight_and_other_pages_stays_in_the_top_five(
    settings: Settings, tmp_path: Path
):
    """Eight sections whose headings hold the question's words win the tuned ranking; plain
    BM25, blind to headings, ranks the two passages that say it in their text first and
    third. Fused by rank alone the third one fell to 6th; it keeps a seat in the top five."""
    sections = [f"# Rotate logs section {n}\n\nThe notes of chapter {n} say little.\n" for n in range(8)]
    sections.insert(2, "# Misc one\n\nrotate logs: rotate logs daily with logrotate, keep logs a week.\n")
    sections.insert(6, "# Misc two\n\nrotate the logs of the daemon; logs rotate under logrotate.\n")
    (tmp_path / "guide.md").write_text("\n".join(sections), encoding="utf-8")
    with SearchIndex(settings.paths.indexes_db, settings.documents) as index:
        document = index.index_file(tmp_path / "guide.md")
        hits = index.search_item(document.item_id, "rotate logs", 5)
        assert {hit.heading for hit in hits} >= {"Misc one", "Misc two"}


def test_a_moved_place_never_pushes_another_seated_place_out_of_the_top_five():
    """Plain BM25's first place is 5th in the fusion and its second is 6th: moving the
    second into the window used to push the first one out."""
    fused = [Ranked(n, 1.0 - n / 100) for n in (1, 2, 3, 4, 5, 6, 7)]
    plain = [Ranked(5, 9.0), Ranked(6, 8.0)]
    seated = seat_plain(fused, plain, SEATS)
    assert [entry.rowid for entry in seated] == [1, 2, 3, 5, 6, 4, 7]


def _pages(rowids: range) -> list[tuple[int, str, int, str, int, str]]:
    """Candidate rows for fused_places: one chunk per page of one document."""
    return [(rowid, "doc", rowid, "", rowid, f"body text {rowid}") for rowid in rowids]


def test_with_vectors_the_keyword_searchs_top_five_keeps_its_seats():
    """The tuned ranking puts pages 1 and 2 first, plain BM25 page 3; two phrasings' vectors
    agree on pages 11-15. Fused by rank the vectors took the top five and only plain BM25's
    seat came back, so the keyword search's own first two answers were lost; now its places
    keep their seats and the vectors fill the rest."""
    tuned = [(1, 9.0), (2, 8.0)]
    plain = [(3, 9.0)]
    vectors = [(rowid, 0.9 - rowid / 100) for rowid in (11, 12, 13, 14, 15)]
    rows = _pages(range(1, 16))
    keyword = [entry.rowid for entry, _ in fused_places([(tuned, plain, 1.0)], rows, 10)]
    both = [entry.rowid for entry, _ in fused_places([(tuned, plain, 1.0)], rows, 10, [vectors, vectors])]
    assert sorted(keyword) == [1, 2, 3]
    assert set(both[:5]) == {1, 2, 3, 11, 12}


def test_a_question_whose_words_are_not_in_the_documents_leaves_the_top_five_to_its_vectors():
    """A Chinese question over English pages shares one stray name with them (a fifth of
    its words): the vectors' places come first, and of its keyword places only the first
    keeps a seat (ranking.UNCOVERED_SEATS), the last of the five."""
    tuned = [(rowid, 10.0 - rowid) for rowid in (1, 2, 3)]
    vectors = [(rowid, 0.9 - rowid / 100) for rowid in (11, 12, 13, 14, 15)]
    both = fused_places([(tuned, tuned, 0.2)], _pages(range(1, 16)), 10, [vectors])
    assert [entry.rowid for entry, _ in both][:5] == [11, 12, 13, 14, 1]
