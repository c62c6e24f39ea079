"""One search result, typed, from the lookup to every renderer.

The lookup finds `ChunkHit`s (search/lookup.py: rowids, fused scores, folded chunks, what
ranking needs); what a search answers with is a `SearchResult`: a place in a document or
knowledge item, its matched passages (best first) and the passages around them, with the
item's own text when it is shown. The content budget (search/budgets.py) cuts these and
says so in `cut`; the model's text (documents/search.py, documents/folder.py,
knowledge/render.py), the terminal view (cli/search_view.py) and `--json`
(`dataclasses.asdict`) all read the same fields.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Passage:
    """One chunk as a search shows it: its text and where it is."""

    chunk_id: str  # the chunk's id in the index ("" for a passage cut from an item's content)
    chunk_index: int  # its number within its document or item (-1: cut from the content)
    text: str
    start: int  # character offsets in the item's content
    end: int
    page: int | None = None  # PDF page, slide or sheet number, when the format has pages
    heading: str = ""  # the section it is in
    place: str = ""  # what a citation names: "page 12", "slide 3", "sheet S, rows 2–21", "§ Setup"
    ocr: bool = False  # read from an image by OCR: may hold misreadings
    figure: bool = False  # its page is mostly a picture: view_page shows what the text cannot
    score: float = 0.0  # the lookup's score (fused rank score; 0 for context)
    truncated: bool = False  # the budget shortened `text`


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One answer of a search: a place (documents) or an item (knowledge) with its passages."""

    item_id: str
    score: float
    matched: tuple[Passage, ...]  # best first
    context: tuple[Passage, ...] = ()  # neighbours and the place's other matches, in order
    content: str = ""  # the item's own text shown with it (knowledge; whole or a preview)
    cut: str = ""  # what the budget left out, and the call that reads on ("" if nothing)
    # The best passage's place and number, kept when the budget leaves its text out.
    place: str = ""
    chunk_index: int = -1

    @classmethod
    def of(
        cls, item_id: str, score: float, matched: tuple[Passage, ...], context: tuple[Passage, ...] = ()
    ) -> SearchResult:
        """A result about its best matched passage (the first)."""
        best = matched[0] if matched else None
        return cls(
            item_id,
            score,
            matched,
            context,
            place=best.place if best else "",
            chunk_index=best.chunk_index if best else -1,
        )

    @property
    def hit(self) -> Passage | None:
        """The passage the result is about, if the budget kept it."""
        return self.matched[0] if self.matched else None
