"""Chunking invariants for any text and any valid configuration (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from generalAgent.search.chunking import Block, ChunkingConfig, chunk_blocks, split_text

WORDS = st.sampled_from(
    [
        "baseline",
        "4.1",
        "multi-agent",
        "营收增长",
        "客户满意度",
        "。",
        "！",
        ". ",
        "? ",
        "\n",
        "\n\n",
        "# 标题\n",
        "## Heading\n",
        "```\n",
        "  ",
        "x" * 120,
        "数据" * 90,
        "🙂",
        "\t",
    ]
)
TEXT = st.one_of(
    st.text(max_size=3_000),
    st.lists(WORDS, max_size=200).map("".join),
)


@st.composite
def configs(draw: st.DrawFn) -> ChunkingConfig:
    max_size = draw(st.integers(min_value=20, max_value=800))
    overlap = draw(st.integers(min_value=0, max_value=(max_size - 1) // 2))
    min_size = draw(st.integers(min_value=0, max_value=max_size))
    return ChunkingConfig(max_size=max_size, overlap=overlap, min_size=min_size)


@settings(max_examples=300, deadline=None)
@given(text=TEXT, config=configs(), markdown=st.booleans())
def test_chunks_are_non_empty_bounded_and_cover_the_text(text: str, config: ChunkingConfig, markdown: bool):
    spans = split_text(text, config, markdown=markdown)
    covered = [False] * len(text)
    for span in spans:
        piece = text[span.start : span.end]
        assert piece.strip(), "chunk is blank"
        assert 0 < span.end - span.start <= config.max_size
        for i in range(span.start, span.end):
            covered[i] = True
    missing = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert not missing, f"characters not in any chunk: {missing[:5]}"
    starts = [s.start for s in spans]
    assert starts == sorted(starts)


@settings(max_examples=150, deadline=None)
@given(
    pages=st.lists(st.tuples(TEXT, st.booleans()), min_size=1, max_size=5),
    config=configs(),
)
def test_document_chunks_are_numbered_from_zero_and_point_into_the_content(
    pages: list[tuple[str, bool]], config: ChunkingConfig
):
    blocks = [Block(text, page=n, whole=whole) for n, (text, whole) in enumerate(pages, 1)]
    content, chunks = chunk_blocks(blocks, config)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert content[chunk.start : chunk.end] == chunk.text
        assert 0 < len(chunk.text) <= config.max_size
        assert chunk.text.strip()
