"""Re-ranking FTS5's best chunks into hits: one per place, body text before listings.

FTS5 scores each chunk on its own (BM25 over text and title, docs/benchmarks.md has the
field weights). Three facts it cannot see decide the order of what it found (measured on
the tuning halves of bench/retrieval_quality.py):

- **Document evidence.** A document with several chunks among the best is more likely the
  one the question is about than a document with a single chunk that happens to use the
  same words (passage retrieval's old lesson: combine a passage's score with its
  document's). Each candidate gains DOCUMENT_WEIGHT times the sum of its document's best
  DOCUMENT_CHUNKS candidate scores, so within one document the order is unchanged.
- **One hit per place.** A place is a PDF page, a slide or a sheet (the chunk's page), else
  the section under one heading. Five chunks of one page as the five best hits leave one
  guess; the best chunk of each place stands for it and the place's other candidates are
  folded into that hit (`folded`), to be shown as its context. Summing a place's chunks
  instead of taking the best measured no better.
- **Listings last.** A table of contents, an index or a command summary repeats every
  word of the body with page numbers beside it and often wins on bm25; a chunk that looks
  like one (dot leaders, runs of page references) is ranked after every chunk of body
  text, never above it.

All three only reorder and fold the candidates FTS5 found; they never add a chunk that
matched nothing. `fuse` then merges that order with plain BM25's (and, for a query given
as several phrasings, the orders of every phrasing) by reciprocal rank, place by place. Nothing here looks at the document's name: a question that names the
document gains only what the indexed title words give it, like any other word.
"""

from __future__ import annotations

import re
from collections.abc import Container, Mapping, Sequence
from typing import NamedTuple

from generalAgent.search.segmentation import CJK_CHARACTER

# How a chunk is scored: BM25 over (text, text_jieba, title). A word of the document's name
# or the section heading weighs 8 times a word of the passage: questions name what they are
# about ("tar ...", "ls ..."). Tuned on bench/retrieval_quality.py (docs/benchmarks.md has
# the figures). Queries ORDER BY this expression rather than by FTS5's `rank` column, which
# sorts through an inner statement and is ~40% slower on the same rows.
BM25_WEIGHTS = (1.0, 1.0, 8.0)
BM25 = f"bm25(chunks_fts, {', '.join(map(str, BM25_WEIGHTS))})"
# Plain chunk BM25: the passage's own words only, no title, the query a bag of the words the
# index holds (query.plain_query: jieba's search-mode words one by one, not the tuned query's
# phrases). Searches fuse the tuned ranking with this one (search/lookup.py), so what the
# tuning adds can reorder but never lose what plain BM25 finds.
PLAIN_BM25 = "bm25(chunks_fts, 1.0, 1.0, 0.0)"

DOCUMENT_WEIGHT = 0.3
DOCUMENT_CHUNKS = 2
# Reciprocal rank fusion: a place scores the sum of 1/(RRF_K + rank) over the rankings that
# hold it, so no ranking's scale matters; 60 is the constant of the original paper (Cormack,
# Clarke and Büttcher 2009) and of knowledge search's fusion with vectors.
RRF_K = 60
# The weight of plain BM25's ranking in the fusion (the tuned ranking's is 1). Measured on
# the tuning halves (docs/benchmarks.md): at 1.0 plain BM25 pulled back what the title weight
# had rightly put first when a question names its document (man-page set recall@5 0.975 →
# 0.912 English, 0.886 → 0.743 Chinese); at 0.5 it still lifts the passages the tuning
# buried (bilingual Chinese 0.80 → 0.84, documents Chinese 0.705 → 0.718) and costs the
# man-page set half as much. Every set stays above plain BM25.
PLAIN_WEIGHT = 0.5

# Seats in the first SEATED_TOP places that plain BM25's own first places always get: the
# fusion may reorder them but never push them out (`seat_plain`). Fusing by rank alone left
# plain BM25's answer outside the top 5 whenever the tuned ranking and the other phrasings
# agreed on other places, so on text nobody tuned for recall@5 fell below plain BM25's
# (issue 39: the English manual of set A, 0.883 against 0.917). With the seats, a question
# plain BM25 answers in its first PLAIN_SEATS places is answered in ours too, by construction.
PLAIN_SEATS = 3
SEATED_TOP = 5

# With vectors (a `semantic` ranking per phrasing), the keyword search's own top five keep
# their seats in the first SEATED_TOP places the same way when its best phrasing has at least
# SEATED_COVERAGE of its words in the searched chunks: the vectors may reorder those places and
# fill the places the keywords leave empty, never push one out, so with vectors recall@5 is at
# least the keyword search's by construction. Fused by rank alone the vectors pushed keyword
# answers out (unseen dev halves: en 1.000 -> 0.962 with three seats, zh+en list queries
# 1.000 -> 0.962 without). A phrasing mostly absent there (a Chinese question over English
# documents, 11-33% of its words: the odd name) keeps only its first place's seat
# (UNCOVERED_SEATS) and the vectors lead (unseen zh-en dev, before the dictionary gloss:
# 0.808 against 0.769 with its keyword top five seated). Words are either there
# or not: on the dev halves a phrasing's share was 1.0 or at most 0.33, so 0.5 splits them.
SEATED_COVERAGE = 0.5
# Such a phrasing's keyword side still keeps one seat, for its first place: with the dictionary
# gloss (query_translation.py) that place is often the answer where the vectors put it far down
# or nowhere ("列出已加载的内核模块": the gloss's first place is the lsmod page, the vectors'
# 36th place, outside their VECTOR_CANDIDATES, so the fusion lost it). Measured on the tuning
# halves of the lone Chinese question over English documents, recall@5 with vectors: no seat
# 0.76 bilingual / 0.885 unseen dev; one seat 0.80 / 0.885; two 0.72 / 0.846; three 0.64 / 0.808
# (more seats take the places the vectors had right); every other row unchanged. So with vectors
# the keyword search's first place is always in the top five, whatever its coverage.
UNCOVERED_SEATS = 1
# Each phrasing's vector ranking weighs as much as its tuned keyword ranking (2.0 raised only
# the English MRR@10 on the dev half, 0.917 -> 0.933, and lowered zh+en's).
SEMANTIC_WEIGHT = 1.0
# The dictionary gloss of a lone Chinese query over documents that are not Chinese
# (search/query_translation.py) weighs this much times the share of the question's words it
# translates into words of the searched chunks. Below SEATED_COVERAGE, so the gloss never
# takes the keyword seats from the vectors (at 1.0 with vectors, tuning halves zh-en: unseen
# 0.885 -> 0.769). Since its words are chosen by the scope's chunks (round 7), with vectors,
# tuning halves zh-en bilingual / unseen: 0.25 0.84 / 0.923; 0.3, 0.4, 0.45 0.88 / 0.923
# (round 6's first-sense gloss was best at 0.25). docs/benchmarks.md has every variant.
GLOSS_WEIGHT = 0.4


def keyword_seats(coverage: float) -> int:
    """Seats the keyword-only ranking's first places keep when vectors join, for a query
    whose best phrasing has `coverage` of its words in the searched chunks."""
    return SEATED_TOP if coverage >= SEATED_COVERAGE else UNCOVERED_SEATS


# Dot leaders of a table of contents ("Key placement . . . . . 161", "第三章……12").
_LEADER = re.compile(r"(?:\.[ \t]?){5,}|[…·]{3,}")
# A page reference of an index or a summary: ", 161", ", 12–14", "(第 98 页)". Not "(1,2)":
# a number followed by ")" or more digits is a coordinate or a quantity, not a page.
_PAGE_REFERENCE = re.compile(r"[,，]\s*\d{1,4}(?:[–-]\d{1,4})?(?![\d.)\w])|[(（]第\s*\d{1,4}\s*页[)）]")
LEADERS_OF_A_LISTING = 2
REFERENCES_OF_A_LISTING = 6

# A word of a query: a run of Chinese characters, or of other letters and digits.
_WORD = re.compile(rf"{CJK_CHARACTER}+|(?:(?!{CJK_CHARACTER})[^\W_])+")


class Candidate(NamedTuple):
    rowid: int
    item_id: str
    score: float  # bm25, higher is better
    place: tuple[str, object] = ("", None)  # (item, page) or (item, heading)
    listing: bool = False


class Ranked(NamedTuple):
    rowid: int
    score: float
    folded: tuple[int, ...] = ()  # rowids of the place's other candidates, best first


def words(text: str) -> tuple[str, ...]:
    """Lower-cased words of `text` in order: Latin/digit runs and Chinese runs apart."""
    return tuple(match.group().lower() for match in _WORD.finditer(text))


def is_listing(text: str) -> bool:
    """True for a chunk of a table of contents, an index or a list of commands with pages.

    Counting characters first rules out nearly every chunk of body text without running
    the expressions (this runs on every candidate of every search): a leader needs five
    dots or a "…"/"·", a page reference a comma or a "页".
    """
    dots = text.count(".") >= 5 * LEADERS_OF_A_LISTING or "…" in text or "·" in text
    if dots and len(_LEADER.findall(text)) >= LEADERS_OF_A_LISTING:
        return True
    if text.count(",") + text.count("，") + text.count("页") < REFERENCES_OF_A_LISTING:
        return False
    return len(_PAGE_REFERENCE.findall(text)) >= REFERENCES_OF_A_LISTING


def rerank(candidates: Sequence[Candidate]) -> list[Ranked]:
    """One entry per place, best first, scored and ordered as the module docstring says.

    Ties go to the higher bm25, then to FTS5's order.
    """
    best: dict[str, list[float]] = {}
    for candidate in candidates:
        best.setdefault(candidate.item_id, []).append(candidate.score)
    evidence = {
        item_id: sum(sorted(scores, reverse=True)[:DOCUMENT_CHUNKS]) for item_id, scores in best.items()
    }
    scored = [c.score + DOCUMENT_WEIGHT * evidence[c.item_id] for c in candidates]
    order = sorted(
        range(len(candidates)),
        key=lambda i: (candidates[i].listing, -scored[i], -candidates[i].score, i),
    )
    places: dict[tuple[str, object], list[int]] = {}
    for i in order:
        places.setdefault(candidates[i].place, []).append(i)
    ranked = []
    for members in places.values():
        head = members[0]
        folded = tuple(candidates[i].rowid for i in members[1:])
        ranked.append(Ranked(candidates[head].rowid, scored[head], folded))
    return ranked


def by_place(
    scored: Sequence[tuple[int, float]],
    place_of: Mapping[int, tuple[str, object]],
    listings: Container[int] = (),
) -> list[Ranked]:
    """A ranking of chunks (best first) as a ranking of places: each place at the rank of its
    best chunk, its other chunks folded into it; places whose best chunk is one of the
    `listings` after the others (a table of contents holds every word of the question and
    would take a fused top-5 place from body text: on the tuning halves recall@5 of the
    fusion was 0.04 lower with them in their bm25 rank). Chunks without a place are left out."""
    places: dict[tuple[str, object], list[tuple[int, float]]] = {}
    for rowid, score in scored:
        if rowid in place_of:
            places.setdefault(place_of[rowid], []).append((rowid, score))
    ranked = [
        Ranked(members[0][0], members[0][1], tuple(rowid for rowid, _ in members[1:]))
        for members in places.values()
    ]
    return sorted(ranked, key=lambda entry: entry.rowid in listings)


def fuse(
    rankings: Sequence[Sequence[Ranked]],
    place_of: Mapping[int, tuple[str, object]],
    weights: Sequence[float] | None = None,
) -> list[Ranked]:
    """Reciprocal rank fusion of rankings of places, best first; score = the fused score
    (each ranking's 1/(RRF_K + rank) times its weight, 1 unless `weights` says).

    A place is shown by its head in the first ranking that holds it (the tuned ranking
    comes first, so its choice of chunk wins), with every other chunk any ranking saw there
    folded into it. Ties go to the place met first.
    """
    scores: dict[tuple[str, object], float] = {}
    heads: dict[tuple[str, object], int] = {}
    folded: dict[tuple[str, object], list[int]] = {}
    for number, ranking in enumerate(rankings):
        weight = weights[number] if weights is not None else 1.0
        for rank, entry in enumerate(ranking, start=1):
            place = place_of[entry.rowid]
            scores[place] = scores.get(place, 0.0) + weight / (RRF_K + rank)
            head = heads.setdefault(place, entry.rowid)
            members = folded.setdefault(place, [])
            for rowid in (entry.rowid, *entry.folded):
                if rowid != head and rowid not in members:
                    members.append(rowid)
    order = sorted(scores, key=lambda place: -scores[place])  # stable: first met wins a tie
    return [Ranked(heads[place], scores[place], tuple(folded[place])) for place in order]


def seat_plain(
    fused: Sequence[Ranked],
    plain: Sequence[Ranked],
    place_of: Mapping[int, tuple[str, object]],
    seats: int = PLAIN_SEATS,
    top: int = SEATED_TOP,
) -> list[Ranked]:
    """`fused` with the first `seats` places of `plain` inside its first `top` entries: each
    one missing there is moved up, in plain's order, into the last places of the window,
    pushing the fused places it passes down by one; the rest keeps its order. Every entry
    of `plain` must be in `fused` (plain BM25 is one of the fused rankings). A moved entry
    takes the score of the best entry after it, so the scores still never rise down the
    list (knowledge search orders items by their hits' scores)."""
    window = min(top, len(fused))
    wanted = [place_of[entry.rowid] for entry in plain[:seats]]
    shown = {place_of[entry.rowid] for entry in fused[:window]}
    missing = [place for place in wanted if place not in shown]
    if not missing:
        return list(fused)
    by_place = {place_of[entry.rowid]: entry for entry in fused}
    moved = [by_place[place] for place in missing if place in by_place]
    # The window keeps the seated places it already shows (a moved one must not push
    # another seated one out) and as many of the others, in order, as the rest leaves.
    seated = set(wanted)
    free = window - len(moved) - sum(1 for entry in fused[:window] if place_of[entry.rowid] in seated)
    head: list[Ranked] = []
    for entry in fused[:window]:
        if place_of[entry.rowid] in seated:
            head.append(entry)
        elif free > 0:
            head.append(entry)
            free -= 1
    head += moved
    order = [*head, *(entry for entry in fused if entry not in head)]
    floor = 0.0
    for n in range(len(order) - 1, -1, -1):
        floor = max(floor, order[n].score)
        order[n] = order[n]._replace(score=floor)
    return order
