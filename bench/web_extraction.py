"""fetch_web's page reading: the main content kept and the boilerplate dropped, by the
extractor fetch_web uses (readability-lxml + markdownify) beside the plain HTMLParser
reading it replaced, and trafilatura when it is installed, on the page set of
tests/support/web_pages.py; with milliseconds per page (imports excluded).

    python -m bench.web_extraction [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    from generalAgent.tools.builtin.fetch_web import ReadableText, html_to_text
    from tests.support.web_pages import BOILERPLATE, MAIN, page, scores

    def plain(html: str) -> str:
        reader = ReadableText()
        reader.feed(html)
        reader.close()
        return reader.text()

    readers: dict[str, Callable[[str], str]] = {
        "fetch_web (readability-lxml + markdownify)": lambda html: html_to_text(html)[1],
        "plain HTMLParser (before)": plain,
    }
    try:
        import trafilatura

        readers["trafilatura"] = lambda html: (
            trafilatura.extract(html, output_format="markdown", include_links=True, include_tables=True) or ""
        )
    except ImportError:
        pass
    pages = {kind: page(kind) for kind in MAIN}
    figures: dict[str, dict[str, object]] = {}
    for name, read in readers.items():
        texts = {kind: read(html) for kind, html in pages.items()}  # imports happen here, untimed
        started = time.perf_counter()
        for _ in range(args.runs):
            for html in pages.values():
                read(html)
        per_page = (time.perf_counter() - started) * 1000 / (args.runs * len(pages))
        figures[name] = {**scores(texts), "ms_per_page": round(per_page, 2)}
    print(
        json.dumps(
            {
                "pages": len(pages),
                "main_sentences": sum(len(v) for v in MAIN.values()),
                "boilerplate_sentences": len(BOILERPLATE) * len(pages),
                "readers": figures,
            },
            indent=2,
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()
