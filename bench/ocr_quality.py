"""How well the offline OCR reads real Chinese and English pages, against their text layer.

    python -m bench.ocr_quality [--pages 8]

Pages of two documents of bench/document_corpus.py (《TeX 急就帖》 in Chinese, the gnuplot
manual in English; both embed their fonts, so pdfium renders them as printed) are rendered
at the scale generalAgent.documents.ocr uses and read by the same OCR (RapidOCR, PP-OCRv4),
as if they had been scanned. The text OCR reads is compared with the page's own text layer,
both without whitespace: character accuracy is 1 - (edit distance / length of the text
layer), from difflib's matching blocks. Also reported: seconds per page, and the share of
English words read with the space before them kept (the model's known weakness). Needs the
`ocr` extra. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import statistics
import sys
import time
from typing import Any

from bench.document_corpus import BY_KEY, document_path
from generalAgent.documents.ocr import ENGINE, RENDER_SCALE, lines_in_reading_order

# Body pages spread over each book (contents and index left out: OCR reads them fine too,
# but they are mostly dots and numbers).
PAGES = {"tex-impatient": range(60, 300), "gnuplot": range(40, 280)}
_WORD = re.compile(r"[A-Za-z]{2,}")


def accuracy(truth: str, read: str) -> float:
    """1 - edit distance / len(truth), whitespace ignored on both sides."""
    truth, read = "".join(truth.split()), "".join(read.split())
    if not truth:
        return 1.0
    matcher = difflib.SequenceMatcher(None, truth, read, autojunk=False)
    matched = sum(block.size for block in matcher.get_matching_blocks())
    edits = max(len(truth), len(read)) - matched
    return max(0.0, 1 - edits / len(truth))


def spaced_words(truth: str, read: str) -> float:
    """Share of the text layer's English words that OCR wrote with a space or line break
    before them (the first word of a line always counts as spaced)."""
    words = _WORD.findall(truth)
    if not words:
        return 1.0
    spaced = sum(1 for word in set(words) if re.search(rf"(^|\s){re.escape(word)}", read, re.MULTILINE))
    return spaced / len(set(words))


def measure(key: str, pages: int) -> dict[str, Any]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(document_path(BY_KEY[key])))
    chosen = list(PAGES[key])[:: max(1, len(PAGES[key]) // pages)][:pages]
    scores, spacing, seconds = [], [], []
    for index in chosen:
        page = pdf[index]
        textpage = page.get_textpage()
        truth = textpage.get_text_range()
        textpage.close()
        began = time.perf_counter()
        image = page.render(scale=RENDER_SCALE, grayscale=True).to_numpy()
        read = lines_in_reading_order(ENGINE.read(image))
        seconds.append(time.perf_counter() - began)
        page.close()
        scores.append(accuracy(truth, read))
        spacing.append(spaced_words(truth, read))
    pdf.close()
    return {
        "pages": [i + 1 for i in chosen],
        "character_accuracy_mean": round(statistics.fmean(scores), 3),
        "character_accuracy_min": round(min(scores), 3),
        "english_words_spaced": round(statistics.fmean(spacing), 3),
        "seconds_per_page": round(statistics.median(seconds), 2),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=8, help="pages per document")
    args = parser.parse_args(argv)
    report = {key: measure(key, args.pages) for key in PAGES}
    print(json.dumps(report, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
