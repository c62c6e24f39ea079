"""Builds the PDF table set of bench/pdf_tables.py from third-party data on a Debian machine.

Every table holds real data written by others, read here straight from its source, and that
same data is the ground truth (truth.json): nothing is typed in by hand. The sources:

- Debian's and Ubuntu's release history (/usr/share/distro-info/*.csv, distro-info-data, ISC);
- ISO 3166 countries, ISO 639-2 languages and ISO 4217 currencies with their Chinese names
  (/usr/share/iso-codes/json and the zh_CN catalogues of iso-codes, LGPL-2.1+ data);
- the installed packages' names, versions, sizes and summaries (`dpkg-query`, each package's
  own metadata), and the Chinese translations of apt's and coreutils' messages (GPL-2+/GPL-3+
  catalogues, quoted as data).

Each document is a DOCX written with python-docx (tables ruled, booktabs-style with
horizontal rules only, or unruled; a group header spanning columns; a header row repeated on
the next page or not; long cells that wrap; running heads, "Page N" footers and captions),
turned into a PDF by LibreOffice (`soffice --convert-to pdf`, the CJK font is WenQuanYi
Micro Hei). Documents come in pairs of the same make: the first of a pair is for
development, the second is held out (`split` in truth.json).

Questions (questions.jsonl) are drawn from truth.json: in each table, twelve rows spread
evenly, each asked for one of its cells by the row's key (its first cell) and the column's
name, the columns taken in turn; the answer is that one cell.

    python bench/data/pdf_tables/build.py               # the PDFs, truth.json, questions.jsonl
    python bench/data/pdf_tables/build.py --questions   # questions.jsonl only
    python bench/data/pdf_tables/build.py --extra       # the later dev documents only
"""

from __future__ import annotations

import csv
import gettext
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import docx
from docx.enum.section import WD_SECTION
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Pt

HERE = Path(__file__).resolve().parent
LOCALE = Path("/usr/share/locale/zh_CN/LC_MESSAGES")
ISO = Path("/usr/share/iso-codes/json")


# -- the data ------------------------------------------------------------------------------
def _catalog(name: str) -> dict[str, str]:
    with (LOCALE / f"{name}.mo").open("rb") as handle:
        return {k: v for k, v in gettext.GNUTranslations(handle)._catalog.items() if isinstance(k, str)}  # type: ignore[attr-defined]


def distro(name: str) -> list[list[str]]:
    with open(f"/usr/share/distro-info/{name}.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    return [[r[0], r[1], r[3], r[4] if len(r) > 4 else "", r[5] if len(r) > 5 else ""] for r in rows[1:]]


def countries() -> list[list[str]]:
    zh = _catalog("iso_3166-1")
    data = json.loads((ISO / "iso_3166-1.json").read_text())["3166-1"]
    return [[c["alpha_2"], c["alpha_3"], c["numeric"], c["name"], zh.get(c["name"], "")] for c in data]


def languages() -> list[list[str]]:
    zh = _catalog("iso_639-2")
    data = json.loads((ISO / "iso_639-2.json").read_text())["639-2"]
    return [
        [c["alpha_3"], c.get("alpha_2", ""), c["name"], zh.get(c["name"], "")]
        for c in data
        if zh.get(c["name"])
    ]


def currencies() -> list[list[str]]:
    data = json.loads((ISO / "iso_4217.json").read_text())["4217"]
    return [[c["alpha_3"], c["numeric"], c["name"]] for c in data]


def packages() -> list[list[str]]:
    out = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package}\t${Version}\t${Installed-Size}\t${binary:Summary}\n"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = [line.split("\t") for line in out.splitlines() if line.count("\t") == 3]
    return [r for r in rows if 40 <= len(r[3]) <= 75 and ":" not in r[0]]


def messages(name: str) -> list[list[str]]:
    cat = _catalog(name)
    rows = []
    for english, chinese in cat.items():
        e, c = " ".join(english.split()), " ".join(chinese.split())
        if 25 <= len(e) <= 70 and 10 <= len(c) <= 40 and "%" not in e and "\n" not in english.strip():
            rows.append([e, c])
    return rows


# -- the DOCX ------------------------------------------------------------------------------
def _borders(element: Any, tag: str, sides: dict[str, int]) -> None:
    box = OxmlElement(tag)
    for side in ("top", "left", "bottom", "right", "insideH", "insideV"):
        edge = OxmlElement(f"w:{side}")
        size = sides.get(side, 0)
        edge.set(qn("w:val"), "single" if size else "nil")
        if size:
            edge.set(qn("w:sz"), str(size))
            edge.set(qn("w:color"), "000000")
        box.append(edge)
    element.append(box)


def _cell_bottom(cell: Any, size: int) -> None:
    props = cell._tc.get_or_add_tcPr()
    box = OxmlElement("w:tcBorders")
    edge = OxmlElement("w:bottom")
    edge.set(qn("w:val"), "single")
    edge.set(qn("w:sz"), str(size))
    box.append(edge)
    props.append(box)


def _repeat_header(row: Any) -> None:
    flag = OxmlElement("w:tblHeader")
    flag.set(qn("w:val"), "true")
    row._tr.get_or_add_trPr().append(flag)


def _page_field(paragraph: Any) -> None:
    paragraph.add_run("Page ")
    field = OxmlElement("w:fldSimple")
    field.set(qn("w:instr"), "PAGE")
    run = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = "1"
    run.append(text)
    field.append(run)
    paragraph._p.append(field)


def add_table(
    document: Any,
    header: list[list[str]],
    rows: list[list[str]],
    style: str,
    repeat: bool,
    widths: list[float],
) -> None:
    """A table of `header` rows (a spanned label written once, then "" in the columns it
    covers) over `rows`, ruled, booktabs (horizontal rules only) or unruled."""
    width = len(header[-1])
    table = document.add_table(rows=0, cols=width)
    props = table._tbl.tblPr
    if style == "ruled":
        _borders(
            props, "w:tblBorders", {s: 4 for s in ("top", "left", "bottom", "right", "insideH", "insideV")}
        )
    elif style == "booktabs":
        _borders(props, "w:tblBorders", {"top": 12, "bottom": 12})
    else:
        _borders(props, "w:tblBorders", {})
    for depth, labels in enumerate(header):
        cells = table.add_row().cells
        if repeat:
            _repeat_header(table.rows[-1])
        column = 0
        while column < width:
            end = column + 1
            while end < width and labels[end] == "" and depth < len(header) - 1:
                end += 1
            cell = cells[column].merge(cells[end - 1]) if end - column > 1 else cells[column]
            cell.text = labels[column]
            for run in cell.paragraphs[0].runs:
                run.bold = True
            if style == "booktabs" and depth == len(header) - 1:
                for c in cells:
                    _cell_bottom(c, 6)
            column = end
    for values in rows:
        cells = table.add_row().cells
        for cell, value in zip(cells, values, strict=True):
            cell.text = value
    for row in table.rows:
        for cell, inches in zip(row.cells, widths, strict=False):
            cell.width = docx.shared.Inches(inches)


def spanned(header: list[list[str]]) -> list[list[str]]:
    """The header rows as a reader sees them: a label spanning columns stands in each."""
    out = []
    for depth, labels in enumerate(header):
        filled, carry = [], ""
        for value in labels:
            carry = value if value or depth == len(header) - 1 else carry
            filled.append(value if value or depth == len(header) - 1 else carry)
        out.append(filled)
    return out


def write(spec: dict[str, Any], folder: Path) -> dict[str, Any]:
    document = docx.Document()
    document.styles["Normal"].font.size = Pt(10)
    fonts = document.styles["Normal"].element.get_or_add_rPr().get_or_add_rFonts()
    fonts.set(qn("w:eastAsia"), "WenQuanYi Micro Hei")
    section = document.sections[0]
    section.header.paragraphs[0].text = spec["running_head"]
    _page_field(section.footer.paragraphs[0])
    document.add_heading(spec["title"], level=1)
    truth = []
    for number, table in enumerate(spec["tables"], start=1):
        for paragraph in table.get("before", []):
            document.add_paragraph(paragraph)
        if table.get("new_page"):
            document.add_section(WD_SECTION.NEW_PAGE)
        document.add_paragraph(table["caption"])
        add_table(
            document,
            table["header"],
            table["rows"],
            table["style"],
            table.get("repeat", False),
            table["widths"],
        )
        truth.append(
            {
                "caption": table["caption"],
                "style": table["style"],
                "language": spec["language"],
                "header": spanned(table["header"]),
                "rows": table["rows"],
                "number": number,
            }
        )
    for paragraph in spec.get("after", []):
        document.add_paragraph(paragraph)
    with tempfile.TemporaryDirectory() as work:
        source = Path(work) / f"{spec['name']}.docx"
        document.save(str(source))
        subprocess.run(
            ["soffice", "--headless", "--convert-to", "pdf", "--outdir", str(folder), str(source)],
            check=True,
            capture_output=True,
        )
    return {"file": f"{spec['name']}.pdf", "split": spec["split"], "tables": truth}


def specs() -> list[dict[str, Any]]:
    debian, ubuntu = distro("debian"), distro("ubuntu")
    land, tongue, money, pkgs = countries(), languages(), currencies(), packages()
    apt, core = messages("apt"), messages("coreutils")
    prose = [r[3] + "." for r in pkgs[200:260]]
    zh_prose = [r[1] for r in core[:60]]
    dist_header = [
        ["Release", "", "Dates", "", ""],
        ["Version", "Codename", "Created", "Released", "End of life"],
    ]
    out: list[dict[str, Any]] = []
    for half, split in ((0, "dev"), (1, "heldout")):
        distros = debian if half == 0 else ubuntu
        cut = slice(half * 60, half * 60 + 60)
        out.append(
            {
                "name": f"releases_{split}",
                "split": split,
                "language": "en",
                "title": "Release history",
                "running_head": "Distribution release report",
                "tables": [
                    {
                        "caption": "Table 1: Releases and their dates",
                        "style": "ruled",
                        "header": dist_header,
                        "rows": distros[:20],
                        "widths": [0.8, 1.6, 1.2, 1.2, 1.2],
                        "before": prose[half * 10 : half * 10 + 6],
                    },
                    {
                        "caption": "Table 2: Installed packages",
                        "style": "booktabs",
                        "header": [["Package", "Version", "Size (KiB)", "Summary"]],
                        "rows": pkgs[half * 40 : half * 40 + 14],
                        "widths": [1.4, 1.3, 0.8, 2.2],
                        "before": prose[half * 10 + 6 : half * 10 + 9],
                    },
                    {
                        "caption": "Table 3: Currencies",
                        "style": "unruled",
                        "header": [["Code", "Number", "Currency"]],
                        "rows": money[half * 12 : half * 12 + 12],
                        "widths": [1.0, 1.0, 3.0],
                        "before": prose[half * 10 + 9 : half * 10 + 10],
                    },
                ],
            }
        )
        out.append(
            {
                "name": f"countries_{split}",
                "split": split,
                "language": "zh",
                "title": "国家和地区代码",
                "running_head": "ISO 3166 代码表 · 内部资料",
                "tables": [
                    {
                        "caption": "表 1 国家和地区代码",
                        "style": "ruled",
                        "repeat": half == 0,
                        "header": [["二位代码", "三位代码", "数字代码", "英文名称", "中文名称"]],
                        "rows": land[cut],
                        "widths": [0.8, 0.8, 0.8, 2.2, 1.6],
                        "before": zh_prose[half * 20 : half * 20 + 8],
                    },
                    {
                        "caption": "表 2 软件包信息的中文翻译",
                        "style": "booktabs",
                        "repeat": True,
                        "header": [["英文原文", "中文译文"]],
                        "rows": apt[half * 40 : half * 40 + 40],
                        "widths": [3.2, 2.6],
                        "before": zh_prose[half * 20 + 8 : half * 20 + 12],
                    },
                ],
            }
        )
        out.append(
            {
                "name": f"languages_{split}",
                "split": split,
                "language": "zh",
                "title": "语言代码",
                "running_head": "ISO 639-2 语言代码",
                "tables": [
                    {
                        "caption": "表 1 语言代码（节选）",
                        "style": "unruled",
                        "repeat": False,
                        "header": [["三字母代码", "二字母代码", "英文名称", "中文名称"]],
                        "rows": tongue[half * 70 : half * 70 + 70],
                        "widths": [1.0, 1.0, 2.2, 1.8],
                        "before": zh_prose[half * 20 + 12 : half * 20 + 16],
                    },
                    {
                        "caption": "Table 2: Core utilities messages",
                        "style": "ruled",
                        "header": [["Message", "中文"]],
                        "rows": core[100 + half * 15 : 100 + half * 15 + 15],
                        "widths": [3.0, 2.8],
                        "before": prose[40 + half * 5 : 40 + half * 5 + 3],
                    },
                ],
            }
        )
    return out


def extra_specs() -> list[dict[str, Any]]:
    """Development documents added after the first measurement, with rows neither half
    has: a ruled Chinese table whose header is not repeated on the next pages (the dev half
    had that style only with the header repeated), and a booktabs one likewise."""
    land, apt, core = countries(), messages("apt"), messages("coreutils")
    return [
        {
            "name": "territories_dev",
            "split": "dev",
            "language": "zh",
            "title": "国家和地区代码（续）",
            "running_head": "ISO 3166 代码表 · 第二部分",
            "tables": [
                {
                    "caption": "表 1 国家和地区代码（第二部分）",
                    "style": "ruled",
                    "repeat": False,
                    "header": [["二位代码", "三位代码", "数字代码", "英文名称", "中文名称"]],
                    "rows": land[120:180],
                    "widths": [0.8, 0.8, 0.8, 2.2, 1.6],
                    "before": [r[1] for r in core[60:68]],
                },
                {
                    "caption": "表 2 软件包信息的中文翻译（第二部分）",
                    "style": "booktabs",
                    "repeat": False,
                    "header": [["英文原文", "中文译文"]],
                    "rows": apt[80:120],
                    "widths": [3.2, 2.6],
                    "before": [r[1] for r in core[68:72]],
                },
            ],
        }
    ]


QUESTIONS_PER_TABLE = 12


def questions(truth: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for document in truth:
        for table in document["tables"]:
            names = [
                " ".join(dict.fromkeys(h[c] for h in table["header"] if h[c]))
                for c in range(len(table["header"][-1]))
            ]
            rows = table["rows"]
            keys = [r[0] for r in rows]
            step = max(1, len(rows) // QUESTIONS_PER_TABLE)
            turn = 0
            for n in range(0, len(rows), step)[:QUESTIONS_PER_TABLE]:
                row = rows[n]
                if keys.count(row[0]) > 1:
                    continue
                for _ in range(len(row) - 1):
                    turn += 1
                    column = 1 + turn % (len(row) - 1)
                    if row[column].strip():
                        break
                else:
                    continue
                chinese = any("\u4e00" <= ch <= "\u9fff" for ch in names[column])
                question = (
                    f"{row[0]}的{names[column]}是什么？"
                    if chinese
                    else f"What is the {names[column]} of {row[0]}?"
                )
                out.append(
                    {
                        "id": f"{document['file']}#{table['number']}.{n + 1}",
                        "file": document["file"],
                        "split": document["split"],
                        "language": table["language"],
                        "table": table["number"],
                        "question": question,
                        "key": row[0],
                        "answer": row[column],
                    }
                )
    return out


def locate(truth: list[dict[str, Any]]) -> None:
    """Each table's pages: from its caption's page to the last page before the next
    caption's (or the document's end) holding its last row's key, found in the PDF's text
    layer (whitespace ignored)."""
    import pypdfium2 as pdfium

    for document in truth:
        pdf = pdfium.PdfDocument(str(HERE / document["file"]))
        pages = ["".join(pdf[n].get_textpage().get_text_range().split()) for n in range(len(pdf))]
        firsts = []
        for table in document["tables"]:
            caption = "".join(table["caption"].split())
            firsts.append(
                next(n for n in range(firsts[-1] if firsts else 0, len(pages)) if caption in pages[n])
            )
        for number, table in enumerate(document["tables"]):
            bound = firsts[number + 1] if number + 1 < len(firsts) else len(pages) - 1
            key = "".join(table["rows"][-1][0].split())[:12]
            last = max(n for n in range(firsts[number], bound + 1) if key in pages[n])
            table["pages"] = [firsts[number] + 1, last + 1]


def main() -> int:
    if "--extra" in sys.argv:  # the later development documents only; the others untouched
        truth = json.loads((HERE / "truth.json").read_text())
        made = [write(spec, HERE) for spec in extra_specs()]
        locate(made)
        names = {m["file"] for m in made}
        truth = [t for t in truth if t["file"] not in names] + made
        (HERE / "truth.json").write_text(json.dumps(truth, ensure_ascii=False, indent=1) + "\n")
    elif "--questions" not in sys.argv:
        truth = [write(spec, HERE) for spec in specs() + extra_specs()]
        locate(truth)
        (HERE / "truth.json").write_text(json.dumps(truth, ensure_ascii=False, indent=1) + "\n")
    truth = json.loads((HERE / "truth.json").read_text())
    asked = questions(truth)
    (HERE / "questions.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in asked))
    print(
        json.dumps(
            {"documents": len(truth), "tables": sum(len(t["tables"]) for t in truth), "questions": len(asked)}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
