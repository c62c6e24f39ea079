"""An unreadable document's message: English for the model (the sentences it always read),
the same sentence with the same fields in the terminal's language."""

from __future__ import annotations

import copy
import io
import pickle
import re
import string
from pathlib import Path

import pytest

from generalAgent import i18n
from generalAgent.config.settings import load_settings
from generalAgent.documents import convert
from generalAgent.documents.extract import extract_document
from generalAgent.documents.reading import DocumentError
from generalAgent.documents.table_grids import csv_rows

# What str(exc) said before the messages became templates, byte for byte: tool answers,
# --json output and the prompt cache see no change.
ENGLISH = {
    "empty.pdf": (b"", "empty.pdf is empty (0 bytes)."),
    "broken.pdf": (b"%PDF-1.7 not a pdf", "broken.pdf is not a readable PDF (damaged, or not a PDF)."),
    "broken.xlsx": (
        b"just text",
        "broken.xlsx is not a valid .xlsx file (damaged, or another format renamed).",
    ),
    "locked.docx": (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600,
        "locked.docx is password-protected (or an old .doc/.xls/.ppt renamed); "
        "save an unprotected .docx copy and try again.",
    ),
    "image.png": (
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "image.png is a binary file, not text; supported are PDF, DOCX, XLSX, PPTX, Markdown, "
        "text and source code.",
    ),
    "季度{报告}.pdf": (b"%PDF-1.7 not", "季度{报告}.pdf is not a readable PDF (damaged, or not a PDF)."),
    "huge.txt": (
        b"a" * (3 * 1024 * 1024 + 1),
        "huge.txt is 3 MB, over the 1 MB limit; split it or raise INDEX_MAX_FILE_MB.",
    ),
}


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def unreadable(tmp_path: Path, name: str) -> DocumentError:
    content, _ = ENGLISH[name]
    (tmp_path / name).write_bytes(content)
    settings = load_settings(env_file=None, documents={"index_max_file_mb": 1})
    with pytest.raises(DocumentError) as raised:
        extract_document(tmp_path / name, settings.documents)
    return raised.value


@pytest.mark.parametrize("name", list(ENGLISH))
def test_the_model_reads_the_same_english_sentence(tmp_path: Path, name: str) -> None:
    error = unreadable(tmp_path, name)
    assert str(error) == ENGLISH[name][1]
    assert error.shown() == str(error)  # without the terminal's translator: English


@pytest.mark.parametrize("name", list(ENGLISH))
def test_the_terminal_says_it_in_chinese_with_the_same_fields(
    tmp_path: Path, name: str, chinese: None
) -> None:
    error = unreadable(tmp_path, name)
    assert isinstance(error.template, str)
    translated = i18n._(error.template)
    assert translated != error.template
    assert fields(translated) == fields(error.template) == set(error.fields)
    shown = error.shown(i18n._, i18n.ngettext)
    assert name in shown and re.search(r"[\u4e00-\u9fff]", shown.replace(name, "")), shown
    assert str(error) == ENGLISH[name][1]  # the model's sentence does not follow the UI


def test_a_few_sentences_in_chinese(tmp_path: Path, chinese: None) -> None:
    assert unreadable(tmp_path, "empty.pdf").shown(i18n._, i18n.ngettext) == "empty.pdf 是空文件（0 字节）。"
    assert unreadable(tmp_path, "huge.txt").shown(i18n._, i18n.ngettext) == (
        "huge.txt 有 3 MB，超过了 1 MB 的上限；请拆分该文件，或调高 INDEX_MAX_FILE_MB。"
    )


def test_a_count_takes_its_plural_form(chinese: None) -> None:
    with pytest.raises(DocumentError) as many:
        csv_rows(io.BytesIO(b"a,b\nc,d\n"), Path("表.csv"), ".csv", 2)
    assert str(many.value) == "表.csv has more than 2 cells, too many to load; split the file."
    assert (
        many.value.shown(i18n._, i18n.ngettext) == "表.csv 的单元格超过 2 个，太多而无法加载；请拆分该文件。"
    )
    with pytest.raises(DocumentError) as one:
        csv_rows(io.BytesIO(b"a,b\n"), Path("表.csv"), ".csv", 1)
    assert str(one.value) == "表.csv has more than 1 cell, too many to load; split the file."


def test_an_old_office_file_without_libreoffice(monkeypatch: pytest.MonkeyPatch, chinese: None) -> None:
    monkeypatch.setattr(convert, "soffice", lambda: None)
    problem = convert.legacy_office_problem(Path("旧.doc"))
    assert problem is not None
    assert str(problem) == (
        "旧.doc is an old or WPS Office file, read through LibreOffice, which is not installed; "
        f"{convert.INSTALL_HINT}, or save it as .docx."
    )
    assert problem.shown(i18n._, i18n.ngettext).startswith("旧.doc 是旧版或 WPS Office 文件")


def test_copied_and_pickled_with_its_template(tmp_path: Path) -> None:
    """dataclasses.asdict deep-copies a folder search's failed files: a name with braces
    must survive (the English sentence is no template)."""
    error = unreadable(tmp_path, "季度{报告}.pdf")
    for again in (copy.deepcopy(error), pickle.loads(pickle.dumps(error))):
        assert str(again) == str(error) and again.template == error.template and again.fields == error.fields
