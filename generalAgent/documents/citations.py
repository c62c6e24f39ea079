"""Checking a citation: does a quoted sentence really occur at the cited place of a document?

The model (or the user) names a place the way search hits name it — "page 12", "p. 12",
"第 12 页", "page 12, table 2, row 5", "slide 3", "sheet Sales", "§ Installing" or just
"12" — and a quote. The text
of that place is cut from the indexed document (the item's content, between its first
and last chunk there), and the quote is looked for in it with the differences that
extraction introduces ironed out on both sides: Unicode compatibility forms (full-width
letters), typographic quotes and dashes, soft hyphens, case, and all whitespace (a PDF
line break, or a space pdfium put between two Chinese characters, is not a difference a
reader sees). When the quote is not at the cited place, the places where it does occur
are named, so a wrong page number can be corrected instead of the whole citation dropped.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from generalAgent.search.storage import content_text

# A quote shorter than this (after normalising) proves nothing: "the" occurs everywhere.
MIN_QUOTE_CHARS = 8
MAX_QUOTE_CHARS = 2_000
MAX_OTHER_PLACES = 5

_PAGE = re.compile(
    r"^\s*(?:(?:p|pp|pg|page|slide|sheet)\.?\s*|第\s*)?(\d{1,6})\s*(?:页|頁|张|張)?\s*$", re.IGNORECASE
)
# A PDF table's row cited within its page: ", table 2, row 5" (or "rows 5–9", "表 2").
_TABLE_ROWS = re.compile(r"\s*[,，]\s*(?:table|表)\s*\d+.*$", re.IGNORECASE)
_TYPOGRAPHY = str.maketrans(
    {
        "‘": "'",
        "’": "'",
        "‚": "'",
        "“": '"',
        "”": '"',
        "„": '"',
        "「": '"',
        "」": '"',
        "『": '"',
        "』": '"',
        "–": "-",
        "—": "-",
        "‐": "-",
        "‑": "-",
        "−": "-",
        "\u00ad": None,
        "\x02": None,
        "\ufffe": None,
    }
)


class CitationError(Exception):
    """The citation cannot be checked as given; the message says what to give instead."""


@dataclass(frozen=True)
class QuoteCheck:
    place: str  # the cited place as understood ("page 12", "§ Installing")
    found: bool  # the quote occurs there
    elsewhere: list[str] = field(default_factory=list)  # other places where it occurs


def normalise(text: str) -> str:
    """`text` as compared: NFKC, plain quotes and hyphens, lower case, no whitespace."""
    text = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHY).casefold()
    return "".join(text.split())


def check_quote(conn: Any, item_id: str, quote: str, place: str) -> QuoteCheck:
    """Whether `quote` occurs at `place` in the indexed item `item_id` (and where else)."""
    wanted = normalise(quote)
    if len(wanted) < MIN_QUOTE_CHARS:
        raise CitationError(
            f"the quote is too short to check ({len(wanted)} characters); quote a whole sentence"
        )
    if len(quote) > MAX_QUOTE_CHARS:
        raise CitationError(f"the quote is longer than {MAX_QUOTE_CHARS:,} characters; quote one sentence")
    content = content_text(conn, item_id)
    if content is None:
        raise CitationError("the document is not indexed; search it once, then check the quote")
    spans = conn.execute(
        "SELECT page, heading, metadata, start_position, end_position FROM chunks"
        " WHERE item_id = ? ORDER BY chunk_index",
        (item_id,),
    ).fetchall()
    places, numbered = _places(spans)
    cited = _resolve(place, places, numbered)
    texts = {name: normalise("\n".join(content[s:e] for s, e in runs)) for name, runs in places.items()}
    found = wanted in texts.get(cited, "")
    elsewhere = [name for name, text in texts.items() if name != cited and wanted in text]
    return QuoteCheck(cited, found, elsewhere[:MAX_OTHER_PLACES])


def _places(
    spans: list[tuple[int | None, str, str, int, int]],
) -> tuple[dict[str, list[tuple[int, int]]], dict[int, str]]:
    """Place name -> runs (start, end) of content of its consecutive chunks, in order; and
    page, slide or sheet number -> its place name."""
    places: dict[str, list[tuple[int, int]]] = {}
    numbered: dict[int, str] = {}
    previous = None
    for page, heading, metadata, start, end in spans:
        if page is None:
            name = f"§ {heading}" if heading else "§"
        elif '"sheet ' in metadata:
            name = f"sheet {heading}"
        else:
            name = f"page {page}"
        if page is not None:
            numbered.setdefault(page, name)
        runs = places.setdefault(name, [])
        if name == previous and runs:
            runs[-1] = (runs[-1][0], max(runs[-1][1], end))
        else:
            runs.append((start, end))
        previous = name
    return places, numbered


def _resolve(place: str, places: dict[str, list[tuple[int, int]]], numbered: dict[int, str]) -> str:
    """The name in `places` that the cited `place` means; CitationError if none does."""
    page = _PAGE.match(_TABLE_ROWS.sub("", place))  # "page 12, table 2, row 5" is on page 12
    if page is not None:
        number = int(page.group(1))
        if number in numbered:
            return numbered[number]
        if not numbered:
            raise CitationError("this document has no pages; cite the section (§ heading) instead")
        raise CitationError(f"there is no page {number} in this document; it has 1 to {max(numbered)}")
    wanted = place.strip().removeprefix("§").strip().casefold()
    if wanted.startswith("sheet "):
        wanted = "sheet " + wanted.removeprefix("sheet ").split(",")[0].strip()
    else:
        wanted = "§ " + wanted
    names = [n for n in places if not n.startswith("page ")]
    for name in names:
        if name.casefold() == wanted:
            return name
    close = [n for n in names if len(wanted) > 2 and wanted in n.casefold()]
    if len(close) == 1:
        return close[0]
    raise CitationError(
        f"no page or section '{place}' in this document; cite a page number or a section "
        "heading as the search hits name them"
    )
