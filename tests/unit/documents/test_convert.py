"""Old and WPS Office files: read through LibreOffice when it is installed, refused clearly when not.

The old-format files are made by LibreOffice itself from a .docx/.xlsx written here. CI
installs LibreOffice (.ci/run) and these tests must run there; elsewhere they are skipped
when `soffice` is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from generalAgent.agent.chat_input import upload
from generalAgent.cli.documents_commands import expand_paths
from generalAgent.config.settings import Settings
from generalAgent.documents.convert import convert_legacy_office, impress_missing, soffice
from generalAgent.documents.extract import extract_document
from generalAgent.documents.images import IMAGES_KEY, ImageLimits
from generalAgent.documents.reading import DocumentError
from generalAgent.documents.tables import load_tables
from generalAgent.tools.environment import ToolEnvironment
from tests.support.documents import make_docx, make_pptx, make_xlsx
from tests.support.libreoffice import without_impress
from tests.support.tools import run_tool, workspace_root


def need_libreoffice() -> None:
    if soffice() is None:
        if os.environ.get("CI"):
            pytest.fail("LibreOffice (soffice) must be installed in CI: .ci/run installs it")
        pytest.skip("LibreOffice (soffice) is not installed; .ci/run installs it for CI")


@pytest.fixture(scope="module")
def legacy_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.doc and sales.xls, converted by LibreOffice from files written here."""
    need_libreoffice()
    folder = tmp_path_factory.mktemp("legacy")
    make_docx(
        folder / "report.docx",
        "年度报告",
        ["营收增长百分之十二，主要来自华东市场。"],
        [["地区", "金额"], ["华东", "1200"]],
    )
    make_xlsx(
        folder / "sales.xlsx", {"销售": [["地区", "金额"], ["华东", 1200], ["华南", 300], ["华东", 500]]}
    )
    for name, target in (("report.docx", "doc"), ("sales.xlsx", "xls")):
        subprocess.run(
            [
                str(soffice()),
                f"-env:UserInstallation={(folder / 'profile').as_uri()}",
                "--headless",
                "--convert-to",
                target,
                "--outdir",
                str(folder),
                str(folder / name),
            ],
            check=True,
            capture_output=True,
            timeout=180,
        )
    (folder / "report.docx").unlink()
    (folder / "sales.xlsx").unlink()
    assert (folder / "report.doc").read_bytes()[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # a real OLE file
    return folder


def test_a_doc_and_a_wps_file_are_read_as_docx(legacy_files: Path, settings: Settings):
    document = extract_document(legacy_files / "report.doc", settings.documents)
    assert document.file_type == "docx"
    assert "# 年度报告" in document.text and "主要来自华东市场" in document.text
    wps = legacy_files / "report.wps"  # Kingsoft Writer files are Word-compatible binaries
    shutil.copy(legacy_files / "report.doc", wps)
    assert "主要来自华东市场" in extract_document(wps, settings.documents).text


def test_an_xls_attaches_is_searchable_and_answers_queries(legacy_files: Path, settings: Settings):
    workspace = ToolEnvironment(settings=settings).workspace_for("s1")
    report = upload(["sales.xls"], workspace, legacy_files)
    assert report.problems == [] and report.files[0]["type"] == "xlsx"
    found, _ = run_tool(settings, "search_file", {"file_path": "uploads/sales.xls", "query": "华南"})
    assert "华南 | 300" in found and "sheet 销售" in found
    answer, _ = run_tool(
        settings,
        "query_table",
        {
            "file_path": "uploads/sales.xls",
            "sql": 'SELECT "地区", SUM("金额") FROM "销售" GROUP BY 1 ORDER BY 1',
        },
    )
    assert "华东 | 1700" in answer and "华南 | 300" in answer
    assert load_tables(legacy_files / "sales.xls").tables[0].rows == 3


def test_a_damaged_old_file_is_refused_with_a_sentence(legacy_files: Path, tmp_path: Path):
    broken = tmp_path / "broken.doc"
    broken.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600)
    with pytest.raises(DocumentError, match="broken.doc"):
        convert_legacy_office(broken)


def test_without_libreoffice_old_files_are_refused_at_attach_time_and_skipped_by_index(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    assert soffice() is None
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("old.doc", "old.ppt", "photo.png", "notes.md"):
        (folder / name).write_bytes(
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 old" if name.startswith("old") else b"# notes"
        )
    workspace = ToolEnvironment(settings=settings).workspace_for("s1")
    report = upload(["old.doc"], workspace, folder)
    assert report.files == [] and len(report.problems) == 1
    assert (
        "LibreOffice" in report.problems[0]
        and "apt install" in report.problems[0]
        and ".docx" in report.problems[0]
    )
    with pytest.raises(DocumentError, match="LibreOffice, which is not installed"):
        extract_document(folder / "old.doc", settings.documents)
    skipped: list[tuple[Path, str]] = []
    files, _, _ = expand_paths([str(folder)], skipped)
    assert [p.name for p in files] == ["notes.md"]
    reasons = {p.name: why for p, why in skipped}
    assert "install LibreOffice" in reasons["old.doc"] and "install LibreOffice" in reasons["old.ppt"]
    assert "image" in reasons["photo.png"]
    assert not (workspace_root(settings) / "uploads" / "old.doc").exists()


def test_view_page_shows_a_slide_as_an_image_or_its_text(settings: Settings):
    need_libreoffice()
    root = workspace_root(settings)
    make_pptx(
        root / "uploads" / "deck.pptx", [("Roadmap", "Ship search in May", ""), ("路线图", "五月发布", "")]
    )
    args = {"file_path": "uploads/deck.pptx", "page": 2}
    seeing = ToolEnvironment(settings=settings, image_limits=ImageLimits(max_side=1024))
    answer, state = run_tool(settings, "view_page", args, env=seeing)
    binary = soffice()
    assert binary is not None
    if impress_missing(binary):  # Writer and Calc only: the slide's text, and why
        assert "installed without Impress (libreoffice-impress)" in answer and "五月发布" in answer
        return
    assert "uploads/deck.pptx slide 2 of 2" in answer and "the image follows" in answer
    (ref,) = state["messages"][-1].artifact[IMAGES_KEY]
    assert max(ref["width"], ref["height"]) == 1024 and (root / ref["file"]).is_file()
    text_only, _ = run_tool(settings, "view_page", args)
    assert "this model does not take images" in text_only and "五月发布" in text_only


def test_without_impress_a_slide_is_given_as_its_text_and_the_missing_part_named(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # LibreOffice with Writer and Calc only said "source file could not be loaded" and
    # called the deck damaged or password-protected.
    need_libreoffice()
    binary = soffice()
    assert binary is not None
    monkeypatch.setenv("PATH", f"{without_impress(binary, tmp_path)}{os.pathsep}{os.environ['PATH']}")
    assert impress_missing(str(soffice()))
    root = workspace_root(settings)
    make_pptx(
        root / "uploads" / "deck.pptx", [("Roadmap", "Ship search in May", ""), ("路线图", "五月发布", "")]
    )
    seeing = ToolEnvironment(settings=settings, image_limits=ImageLimits(max_side=1024))
    answer, state = run_tool(settings, "view_page", {"file_path": "uploads/deck.pptx", "page": 2}, env=seeing)
    assert (
        "LibreOffice is installed without Impress (libreoffice-impress); slides cannot be rendered" in answer
    )
    assert "apt install libreoffice-impress-nogui" in answer
    assert "uploads/deck.pptx slide 2 of 2" in answer and "五月发布" in answer and "Ship search" not in answer
    assert not state["messages"][-1].artifact  # no picture promised
    # The copy is a working LibreOffice: a Word page (Writer) is still shown as a picture.
    make_docx(
        root / "uploads" / "report.docx",
        "年度报告",
        ["营收增长百分之十二。"],
        [["地区", "金额"], ["华东", "1200"]],
    )
    word, state = run_tool(settings, "view_page", {"file_path": "uploads/report.docx"}, env=seeing)
    assert "uploads/report.docx page 1 of 1" in word and "the image follows" in word, word
    # An old slide file cannot even be read without Impress, and says so by name.
    (root / "uploads" / "old.ppt").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600)
    with pytest.raises(DocumentError, match="installed without Impress"):
        convert_legacy_office(root / "uploads" / "old.ppt")
