"""The dispatcher: a clear message for every unreadable file, size limits, previews."""

from __future__ import annotations

from pathlib import Path

import pytest

from generalAgent.config.settings import Settings, load_settings
from generalAgent.documents.extract import extract_document, preview_document
from generalAgent.documents.reading import DocumentError
from tests.support.documents import (
    make_docx,
    make_pdf,
)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("empty.pdf", b"", "is empty"),
        ("broken.pdf", b"%PDF-1.7 this is not really a pdf", "not a readable PDF"),
        ("broken.docx", b"PK\x03\x04 truncated zip", "not a valid .docx"),
        ("broken.xlsx", b"just text", "not a valid .xlsx"),
        ("broken.pptx", b"just text", "not a valid .pptx"),
        ("locked.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600, "password-protected"),
        ("old.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600, "save it as .docx"),
        ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
        ("blank.txt", b"   \n\n  ", "contains no text"),
        (
            "latin1.txt",
            bytes([0x81, 0x30, 0x81]) + b"\xff\xfe\xfd",
            "not text in an encoding generalAgent knows",
        ),
    ],
)
def test_unreadable_files_give_one_clear_message(
    tmp_path: Path, settings: Settings, name: str, content: bytes, expected: str
):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DocumentError) as error:
        extract_document(path, settings.documents)
    message = str(error.value)
    assert expected in message
    assert name in message
    assert "Traceback" not in message


def test_huge_files_are_refused_before_reading(tmp_path: Path, data_dir: Path):

    settings = load_settings(env_file=None, documents={"index_max_file_mb": 1})
    path = tmp_path / "huge.txt"
    path.write_bytes(b"a" * (1024 * 1024 + 1))
    with pytest.raises(DocumentError, match="over the 1 MB limit; split it or raise INDEX_MAX"):
        extract_document(path, settings.documents)


def test_missing_file_and_folder(tmp_path: Path, settings: Settings):
    with pytest.raises(DocumentError, match="does not exist"):
        extract_document(tmp_path / "nope.pdf", settings.documents)
    with pytest.raises(DocumentError, match="is a folder"):
        extract_document(tmp_path, settings.documents)


def test_preview_respects_the_page_and_character_limits(tmp_path: Path):

    settings = load_settings(env_file=None, documents={"pdf_preview_pages": 2, "pdf_preview_chars": 1_000})
    pages = [[f"Page {n} line {i} with some words" for i in range(40)] for n in range(1, 5)]
    path = make_pdf(tmp_path / "long.pdf", pages)
    preview = preview_document(path, settings.documents)
    body, note = preview.rsplit("\n\n[preview:", 1)
    assert len(body) <= 1_000
    assert "Page 3" not in body
    assert "search the file for the rest" in note


def test_a_preview_reads_only_the_start_of_a_document(tmp_path: Path):
    """read_file's preview of a long document extracts its first pages, not all of it."""
    from generalAgent.documents.reading import ReadLimit

    settings = load_settings(env_file=None, documents={"pdf_preview_pages": 2}).documents
    pdf = make_pdf(tmp_path / "long.pdf", [[f"Page {n} text"] for n in range(1, 41)])
    limit = ReadLimit(units=2, chars=10_000)
    document = extract_document(pdf, settings, limit=limit)
    assert [b.page for b in document.blocks] == [1, 2] and limit.stopped
    assert "the document goes on" in preview_document(pdf, settings)

    docx = make_docx(
        tmp_path / "long.docx", "Report", [f"Paragraph {i} " + "x" * 80 for i in range(3000)], [["a", "b"]]
    )
    limit = ReadLimit(chars=2_000)
    text = extract_document(docx, settings, limit=limit).text
    assert limit.stopped and len(text) < 3_000 and "Paragraph 2999" not in text

    big = tmp_path / "big.log"
    big.write_text("one log line of forty characters or so\n" * 500_000, encoding="utf-8")  # 20 MB
    preview = preview_document(big, settings)
    assert "the document goes on" in preview and len(preview) < settings.text_preview_chars + 200
