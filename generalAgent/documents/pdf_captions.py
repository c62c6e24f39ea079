"""Captions in a PDF: "Table 3: ..." / "表 3 ..." with its table, "Figure 2 ..." / "图 2 ..."
a paragraph of its own, and running text that only mentions a table not taken for one.

A caption opens with its label and number; so does a sentence about the table ("表 4.2 中的
\\mathbf 命令只能获得直立、加粗的字母。如果想得到粗斜体，可以使用 ams-", "Table 3 shows
..."). Taken for the caption, such a sentence left its paragraph (cutting "amsmath" in two)
and was repeated above every block of the table's rows, while the real caption, set over
the table's columns, was read as a header row. Pure text and grid rules, no geometry: the
table finder (pdf_tables.py) says where a table is, this module what its caption is.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from generalAgent.documents.pdf_tables import PageTable

_NUMBER = r"(?:\d+(?:[.\-–]\d+)*[a-z]?|[IVX]+\b|[一二三四五六七八九十百]+)"
_TABLE_LABEL = re.compile(rf"^\s*(?:table|tab\.|tbl\.|表)\s*{_NUMBER}", re.IGNORECASE)
_FIGURE_LABEL = re.compile(rf"^\s*(?:figure|fig\.|图|圖)\s*{_NUMBER}", re.IGNORECASE)
# What follows the number in a sentence that mentions the table or figure rather than
# titling it: an English word in lower case ("Table 3 shows"), a Chinese particle or verb
# ("表 3 中的", "图 2 所示", "表 4 列出了").
_MENTION = re.compile(
    r"^\s*(?:[a-z]|中(?=[的列给所可，,。\s])|[的所是为和与及里内或]|列出|给出|显示|说明|展示|可见|可以)"
)
# A separator after the number makes a title of what follows ("Table 3: ...", "图 2. ...").
_SEPARATOR = re.compile(r"^\s*[:：.．—–]")
# A sentence that ends inside the line: what follows is more running text.
_SENTENCE_INSIDE = re.compile(r"[。！？]\s*\S|[.!?]\s+[A-Z\u4e00-\u9fff]")
_CUT_WORD = re.compile(r"[-\u00ad\ufffe\x02]\s*$")


def is_caption(text: str, figure: bool = False) -> bool:
    """Whether a line is a table's (or with `figure`, a figure's) caption: its label and
    number, then nothing, a separator and a title, or a title that is no sentence about it."""
    match = (_FIGURE_LABEL if figure else _TABLE_LABEL).match(text)
    if match is None:
        return False
    rest = text[match.end() :]
    if not rest.strip():
        return True
    if _SEPARATOR.match(rest):
        return _CUT_WORD.search(rest) is None
    return _MENTION.match(rest) is None and _plain_title(rest)


def _plain_title(rest: str) -> bool:
    return _SENTENCE_INSIDE.search(rest) is None and _CUT_WORD.search(rest) is None


def take_caption_row(table: PageTable) -> None:
    """A caption the table finder read as the first (or last) row of the grid, set over the
    table's columns so that it fell inside one of them, made the table's caption (when it
    has none): a row of one cell that is a caption is no row of the table."""
    grid = table.grid
    if len(grid) < 3:
        return
    for index in (0, len(grid) - 1):
        cells = [cell for cell in grid[index] if cell.strip()]
        if len(cells) == 1 and is_caption(cells[0]):
            if not table.caption:
                table.caption = " ".join(cells[0].split())
            del grid[index]
            if index == 0:
                table.header_count = max(1, table.header_count - 1)
            return


def set_captions_apart(raw: str) -> str:
    """A page's text (lines as pdfium gives them) with each caption line and the lines
    that continue it set apart by blank lines, so that rebuilding paragraphs
    (pdf.join_pdf_lines) glues neither the text above to it nor the text below. A caption
    ends at its first line that ends a sentence or is shorter than the page's lines."""
    if not _ANY_LABEL.search(raw):
        return raw
    lines = raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    longest = max((len(line.strip()) for line in lines), default=0)
    out: list[str] = []
    inside = False
    for line in lines:
        text = line.strip()
        if not inside and text and (is_caption(text, figure=True) or is_caption(text)):
            if out and out[-1].strip():
                out.append("")
            inside = True
        out.append(line)
        if inside and (not text or text[-1] in ".。!?！？" or len(text) < 0.7 * longest):
            if text:
                out.append("")
            inside = False
    return "\n".join(out)


_ANY_LABEL = re.compile(
    r"(?:^|\n)\s*(?:table|tab\.|tbl\.|表|figure|fig\.|图|圖)\s*[\dIVX一二三四五六七八九十]", re.I
)
