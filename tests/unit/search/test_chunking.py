"""Chunking examples: the levels (headings, paragraphs, sentences, fixed windows) in action."""

from __future__ import annotations

from generalAgent.search.chunking import (
    BLOCK_SEPARATOR,
    Block,
    ChunkingConfig,
    chunk_blocks,
    split_text,
)

CONFIG = ChunkingConfig(max_size=400, overlap=80, min_size=50)


def texts(text: str, config: ChunkingConfig = CONFIG) -> list[str]:
    return [text[s.start : s.end] for s in split_text(text, config)]


def test_short_paragraphs_share_a_chunk_and_headings_are_recorded():
    text = "# Intro\n\nFirst paragraph.\n\nSecond paragraph.\n\n## Details\n\nThe details."
    spans = split_text(text, CONFIG)
    assert [text[s.start : s.end] for s in spans] == [
        "# Intro\n\nFirst paragraph.\n\nSecond paragraph.",
        "## Details\n\nThe details.",
    ]
    assert [s.heading for s in spans] == ["Intro", "Details"]


def test_long_paragraph_is_cut_between_sentences_keeping_terminators():
    sentence = "营收增长了百分之二十，主要来自海外市场。"  # 20 chars
    text = sentence * 30
    chunks = texts(text)
    assert len(chunks) > 1
    assert all(len(c) <= 400 for c in chunks)
    assert all(c.endswith("。") and c.startswith("营收") for c in chunks)


def test_sentence_overlap_repeats_the_tail_of_the_previous_chunk():
    sentence = "The revenue grew by twenty percent this quarter. "  # 49 chars
    text = (sentence * 20).strip()
    spans = split_text(text, CONFIG)
    assert all(b.start < a.end for a, b in zip(spans, spans[1:], strict=False))
    for a, b in zip(spans, spans[1:], strict=False):
        assert a.end - b.start <= CONFIG.overlap


def test_a_sentence_longer_than_a_chunk_gets_fixed_windows_with_overlap():
    text = "x" * 1000
    spans = split_text(text, CONFIG)
    assert [(s.start, s.end) for s in spans] == [(0, 400), (320, 720), (640, 1000)]


def test_fixed_windows_prefer_to_end_at_a_space():
    text = " ".join(["word"] * 300)
    chunks = texts(text)
    assert all(c.startswith("word") or c.startswith("ord") or c[0] != " " for c in chunks)
    assert all(c.endswith("word") for c in chunks)


def test_headings_inside_code_fences_are_comments():
    text = "# Real\n\n```python\n# comment\nx = 1\n```\n"
    assert {s.heading for s in split_text(text, CONFIG)} == {"Real"}


def test_plain_text_has_no_headings():
    text = "# a shell comment\necho hi\n"
    assert [s.heading for s in split_text(text, CONFIG, markdown=False)] == [""]


def test_small_tail_merges_into_the_previous_chunk():
    text = "a" * 300 + "\n\n" + "b" * 20
    assert texts(text) == ["a" * 300 + "\n\n" + "b" * 20]


def test_blank_text_has_no_chunks():
    assert split_text("", CONFIG) == []
    assert split_text(" \n\n \t", CONFIG) == []


def test_blocks_keep_pages_and_offsets_into_the_joined_content():
    blocks = [Block("Page one text.", page=1), Block("第二页的内容。", page=2, heading="Slide")]
    content, chunks = chunk_blocks(blocks, CONFIG)
    assert content == "Page one text." + BLOCK_SEPARATOR + "第二页的内容。"
    assert [(c.index, c.page, c.heading) for c in chunks] == [(0, 1, ""), (1, 2, "Slide")]
    assert all(content[c.start : c.end] == c.text for c in chunks)


def test_whole_blocks_stay_whole_when_they_fit():
    rows = "Name | Score\n" + "\n".join(f"p{i} | {i}" for i in range(20))
    content, chunks = chunk_blocks([Block(rows, page=1, heading="Sheet1", whole=True)], CONFIG)
    assert [c.text for c in chunks] == [rows]
