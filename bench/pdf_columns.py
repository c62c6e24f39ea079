"""Pages in columns: sentences read whole, ours beside the PDF's own text order and
poppler's pdftotext, in one run, printed as JSON.

Documents:

- `ltnews`: LaTeX News (Debian's texlive-latex-base-doc, 85 pages, two columns set by
  LaTeX: drawn a column at a time, its words in several runs a line), pinned by package,
  version and the SHA-256 of the .deb and of the file, fetched like
  bench/document_corpus.py's documents;
- `drawn_across_en2`, `drawn_across_en3`, `drawn_across_zh2`: one page each made by
  tests/support/column_pdfs.py, two and three English columns and two Chinese ones, drawn
  across the page a line at a time (the left column's line, then the next one's).

Truth: a page's columns cut apart by pdftotext's crop box (`-x -W`, at the middle of
the gutter for ltnews: x=298 on its A4 pages) and read one after the other; for the
made pages, the sentences written. Sentences of 40 characters or more (English, split
after `.!?`; Chinese after `。！？`), compared with every character but letters and digits
removed and case folded, so that line breaks, hyphenation and spacing do not count.

Systems, each the page's text joined from its search passages:

- `ours`: extract_document (documents/pdf.py: pdf_columns.py's reading order);
- `pdfium_order`: pypdfium2's text of the page as it comes, running heads left out and
  paragraphs rebuilt as ours are: the order the product read before columns (it also took
  such pages for tables, which this leaves out, so it is the kinder baseline);
- `pdftotext`: poppler's pdftotext, default mode (it has its own column heuristics).

Figure: the share of the truth's sentences found whole in the system's page text.

    python -m bench.pdf_columns
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import unicodedata
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.document_corpus import SourceDocument, document_path  # noqa: E402

LTNEWS = SourceDocument(
    key="ltnews",
    lang="en",
    package="texlive-latex-base-doc",
    version="2022.20230122-3",
    deb_sha256="122dbbe00bd22f872b1837eb86bd76fbac6ec84dd4f5f0c76cc9c18484485848",
    member="usr/share/doc/texlive-doc/latex/base/ltnews.pdf",
    sha256="d72282cce772fee744bcf9597b4f08704ec1c321d7dacc26a413177770fd8c3a",
    file_name="ltnews.pdf",
    labels="page",
)
LTNEWS_GUTTER = 298  # points from the left edge: the middle of LaTeX News' gutter
MIN_SENTENCE = 40


def folded(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())


def sentences(text: str) -> list[str]:
    text = re.sub(r"(?<=[a-z])-\n(?=[a-z])", "", text)
    flat = " ".join(text.split())
    pieces = re.split(r"(?<=[.!?])\s+|(?<=[。！？])", flat)
    return [piece for piece in pieces if len(piece) >= MIN_SENTENCE or (_cjk(piece) and len(piece) >= 12)]


def _cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def pdftotext(path: Path, page: int, crop: tuple[int, int] | None = None) -> str:
    command = ["pdftotext", "-q", "-f", str(page), "-l", str(page)]
    if crop is not None:
        command += ["-r", "72", "-x", str(crop[0]), "-y", "0", "-W", str(crop[1]), "-H", "5000"]
    return subprocess.run([*command, str(path), "-"], capture_output=True, text=True, check=False).stdout


def ours(path: Path) -> dict[int, str]:
    from generalAgent.config.settings import load_settings
    from generalAgent.documents.extract import extract_document

    with tempfile.TemporaryDirectory() as data:
        settings = load_settings(env_file=None, paths={"data_dir": Path(data)})
        pages: dict[int, list[str]] = {}
        for block in extract_document(path, settings.documents).blocks:
            pages.setdefault(block.page or 0, []).append(block.text)
    return {page: "\n".join(texts) for page, texts in pages.items()}


def pdfium_order(path: Path) -> dict[int, str]:
    import pypdfium2 as pdfium

    from generalAgent.documents.pdf import join_pdf_lines
    from generalAgent.documents.pdf_layout import running_keys, strip_running

    pdf = pdfium.PdfDocument(str(path))
    try:
        raw = [pdf[n].get_textpage().get_text_range() for n in range(len(pdf))]
    finally:
        pdf.close()
    keys = running_keys(raw)
    return {n + 1: join_pdf_lines(strip_running(text, keys)) for n, text in enumerate(raw)}


def page_count(path: Path) -> int:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        return len(pdf)
    finally:
        pdf.close()


def poppler(path: Path) -> dict[int, str]:
    return {page: pdftotext(path, page) for page in range(1, page_count(path) + 1)}


SYSTEMS: dict[str, Callable[[Path], dict[int, str]]] = {
    "ours": ours,
    "pdfium_order": pdfium_order,
    "pdftotext": poppler,
}


def score(truth: dict[int, list[str]], read: dict[int, str]) -> dict[str, float | int]:
    total = found = 0
    for page, expected in truth.items():
        text = folded(read.get(page, ""))
        for sentence in expected:
            total += 1
            found += folded(sentence) in text
    return {"sentences": total, "whole": found, "share": round(found / max(total, 1), 3)}


def made_pages(folder: Path) -> dict[str, tuple[Path, dict[int, list[str]]]]:
    from tests.support.column_pdfs import make_column_pdf

    english = [
        f"Sentence number {n} says that the river {['flows', 'bends', 'floods', 'dries'][n % 4]} "
        f"near the old mill {n * 7}."
        for n in range(50)
    ]
    chinese = [
        f"第{n}段说明河流在旧磨坊附近{['流淌', '转弯', '泛滥', '干涸'][n % 4]}，水位记录为{n * 7}厘米。"
        for n in range(60)
    ]
    return {
        "drawn_across_en2": (make_column_pdf(folder / "en2.pdf", " ".join(english), columns=2), {1: english}),
        "drawn_across_en3": (make_column_pdf(folder / "en3.pdf", " ".join(english), columns=3), {1: english}),
        "drawn_across_zh2": (
            make_column_pdf(folder / "zh2.pdf", "".join(chinese), columns=2, chinese=True),
            {1: chinese},
        ),
    }


def main() -> None:
    report: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        documents = made_pages(Path(tmp))
        ltnews = document_path(LTNEWS)
        truth = {
            page: sentences(
                pdftotext(ltnews, page, (0, LTNEWS_GUTTER))
                + "\n"
                + pdftotext(ltnews, page, (LTNEWS_GUTTER, 5000))
            )
            for page in range(1, page_count(ltnews) + 1)
        }
        documents["ltnews"] = (ltnews, truth)
        for name, (path, expected) in documents.items():
            report[name] = {system: score(expected, read(path)) for system, read in SYSTEMS.items()}
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
