"""Whether reading a PDF's tables after its text gives the one-pass index byte for byte, printed as JSON.

A PDF is indexed text first (as with PDF_TABLES off) and its tables read by a second
pass that replaces its chunks whole (documents/index.py, `tables_pending`). The promise
is that the second pass leaves exactly what indexing with tables in one pass leaves.
Each PDF here is indexed both ways into two fresh indexes.db, and everything a search
reads of the document is compared: the document's row (chunks, language, file type),
its text, and each chunk's text, segmented words, title column, positions, page, heading
and metadata (its citable place). Chunk ids are random per indexing and left out.

The second pass is run twice: in the index of the first (`identical`), taking the pages
without a candidate for a table from what that pass kept, and in another index
(`identical_read_whole`), reading the file whole. `tables_on_candidates_only`: every page
where the one-pass reading found a table was a candidate of the first pass (pdf.py
`PdfFirstPass`), so that the second pass, which reads only those, misses none.

The PDFs: the table set of bench/pdf_tables.py, the manuals of bench/indexing.py, and
the PDFs of the bilingual and documents retrieval sets (bench/document_corpus.py).

    python -m bench.pdf_two_pass
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.document_corpus import BILINGUAL, DOCUMENTS, document_path  # noqa: E402

PLAIN_MANUALS = (
    Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),
    Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
)


def pdfs() -> list[Path]:
    table_set = sorted((ROOT / "bench" / "data" / "pdf_tables").glob("*.pdf"))
    corpus = [document_path(d) for d in (*DOCUMENTS, *BILINGUAL) if d.file_name.endswith(".pdf")]
    return [*table_set, *(p for p in PLAIN_MANUALS if p.exists()), *corpus]


def dump(db: Path, path: Path) -> dict[str, Any]:
    """What a search can read of the document at `path` in the index at `db`."""
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        row = conn.execute(
            "SELECT d.item_id, d.file_name, d.file_type, d.total_chunks, d.language, d.tables_pending"
            " FROM documents d JOIN document_paths p ON p.file_hash = d.file_hash WHERE p.path = ?",
            (str(path.resolve()),),
        ).fetchone()
        item_id, *facts = row
        content = conn.execute("SELECT content FROM document_texts WHERE item_id = ?", (item_id,)).fetchone()
        chunks = conn.execute(
            "SELECT c.chunk_index, f.text, f.text_jieba, f.title, c.start_position, c.end_position, c.page,"
            " c.heading, c.metadata FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid"
            " WHERE c.item_id = ? ORDER BY c.chunk_index",
            (item_id,),
        ).fetchall()
        return {"document": facts, "content": bytes(content[0]) if content else b"", "chunks": chunks}
    finally:
        conn.close()


def compare(path: Path) -> dict[str, Any]:
    from generalAgent.config.settings import load_settings
    from generalAgent.documents.index import SearchIndex

    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            env_file=None, paths={"data_dir": Path(tmp)}, documents={"embedding_model": None}
        )
        one, two, apart = Path(tmp) / "one.db", Path(tmp) / "two.db", Path(tmp) / "apart.db"
        with SearchIndex(one, settings.documents) as index:
            index.index_file(path, tables_later=False)
        with SearchIndex(two, settings.documents) as index:
            first = index.index_file(path, tables_later=True)
            kept = index.first_passes.take(first.file_hash)
            candidates = sorted(kept.candidates) if kept is not None else []
            if kept is not None:
                index.first_passes.keep(first.file_hash, kept)
            index.index_file(path, tables_later=False)
        # The second pass in another index (another process, or a first pass past the kept
        # bound): it reads the file whole.
        with SearchIndex(apart, settings.documents) as index:
            index.index_file(path, tables_later=True)
        with SearchIndex(apart, settings.documents) as index:
            index.index_file(path, tables_later=False)
        a, b, c = dump(one, path), dump(two, path), dump(apart, path)
    differing = [n for n, (x, y) in enumerate(zip(a["chunks"], b["chunks"], strict=False)) if x != y]
    # Every page where the one-pass reading found a table was a candidate of the first pass.
    table_pages = sorted({chunk[6] - 1 for chunk in a["chunks"] if ", table " in chunk[8]})
    missed = [page + 1 for page in table_pages if page not in candidates]
    return {
        "file": path.name,
        "chunks": len(a["chunks"]),
        "tables_were_pending": first.tables_pending,
        "identical": a == b,
        "identical_read_whole": a == c,
        "pages_with_tables": len(table_pages),
        "candidate_pages": len(candidates),
        "tables_on_candidates_only": not missed,
        **({"missed_pages": missed[:20]} if missed else {}),
        **(
            {}
            if a == b
            else {"documents": [a["document"], b["document"]], "first_differing_chunk": differing[:1]}
        ),
    }


def main() -> None:
    results = [compare(path) for path in pdfs()]
    print(
        json.dumps(
            {
                "pdfs": len(results),
                "identical": sum(r["identical"] for r in results),
                "identical_read_whole": sum(r["identical_read_whole"] for r in results),
                "pending_after_text": sum(r["tables_were_pending"] for r in results),
                "tables_on_candidates_only": sum(r["tables_on_candidates_only"] for r in results),
                "differing": [r for r in results if not r["identical"]],
                "files": results,
            },
            indent=2,
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()
