"""Every spreadsheet format python-calamine reads (documents/workbook.py): .xls, WPS's .et and
.ods without LibreOffice, with the values of the same sheet saved as .xlsx, and hostile
files refused without harming the agent's process (read in a child under a memory limit).

The .xls and .ods files are made by LibreOffice from an .xlsx written here (CI installs it);
they are then read with LibreOffice out of reach (PATH emptied). LibreOffice cannot write
.xlsb: that workbook is committed with its .xlsx twin (tests/fixtures/sheets/README.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from datetime import datetime, time, timedelta
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from generalAgent.documents import workbook
from generalAgent.documents.convert import soffice
from generalAgent.documents.extract import extract_document, preview_document
from generalAgent.documents.reading import DocumentError
from generalAgent.documents.tables import load_tables
from tests.support.documents import make_xlsx
from tests.support.sheets import read_all

ROWS = [
    ["地区", "金额", "日期", "备注"],
    ["华东", 1200, datetime(2024, 3, 1), "A & B <c>"],
    ["华南", 300.5, datetime(2024, 3, 2, 18, 5, 7), None],
    ["华东", 500, None, "  第二行\n"],
]


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if soffice() is None:
        if os.environ.get("CI"):
            pytest.fail("LibreOffice (soffice) must be installed in CI: .ci/run installs it")
        pytest.skip("LibreOffice (soffice) makes the .xls and .ods files; it is not installed")
    folder = tmp_path_factory.mktemp("formats")
    make_xlsx(folder / "sales.xlsx", {"销售": ROWS, "备忘": [["only"]]})
    for target in ("xls", "ods"):
        subprocess.run(
            [str(soffice()), f"-env:UserInstallation={(folder / 'profile').as_uri()}", "--headless",
             "--convert-to", target, "--outdir", str(folder), str(folder / "sales.xlsx")],
            check=True, capture_output=True, timeout=180,
        )  # fmt: skip
    shutil.copy(folder / "sales.xls", folder / "sales.et")  # a WPS spreadsheet is an .xls inside
    return folder


def test_xls_et_and_ods_read_without_libreoffice_as_their_xlsx_reads(
    converted: Path, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    assert soffice() is None
    expected = read_all(converted / "sales.xlsx")
    assert expected["销售"][1] == ["华东", 1200, datetime(2024, 3, 1), "A & B <c>"]
    for name in ("sales.xls", "sales.et", "sales.ods"):
        assert read_all(converted / name) == expected, name
        document = extract_document(converted / name, settings.documents)
        assert document.file_type == "xlsx" and "华南 | 300.5" in document.text, name
        assert preview_document(converted / name, settings.documents).startswith("Sheets (2): 销售, 备忘")
        database = load_tables(converted / name)
        answer = database.query('SELECT "地区", SUM("金额") FROM "销售" GROUP BY 1 ORDER BY 1')
        assert answer.rows == [("华东", 1700), ("华南", 300.5)], name


FIXTURES = Path(__file__).parents[2] / "fixtures" / "sheets"


def test_an_xlsb_reads_as_its_xlsx_twin_without_libreoffice(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    assert soffice() is None
    workbook_xlsb = FIXTURES / "base.xlsb"
    values = read_all(workbook_xlsb)
    assert values == read_all(FIXTURES / "base.xlsx")
    assert values["Sheet1"][1] == [
        "String", 1, 1.1, True, False, datetime(2010, 10, 10), datetime(2010, 10, 10, 10, 10, 10),
        time(10, 10, 10), timedelta(hours=10, minutes=10, seconds=10, microseconds=100000),
        timedelta(hours=255, minutes=10, seconds=10),
    ]  # fmt: skip
    assert values["Sheet3"][3] == [None, "line3", "line3", "line3"]
    document = extract_document(workbook_xlsb, settings.documents)
    assert document.file_type == "xlsx" and "line2" in document.text
    assert preview_document(workbook_xlsb, settings.documents).startswith(
        "Sheets (4): Sheet1, Sheet2, Sheet3"
    )
    answer = load_tables(workbook_xlsb).query('SELECT "line1_2" FROM "Sheet3"')  # its first row names columns
    assert answer.rows == [("line2",), ("line3",)]


def _ods_with_rows(source: Path, out: Path, rows: str) -> Path:
    """`source` (an .ods) with its first table's rows replaced by `rows` (content.xml)."""
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in archive.infolist():
            data = archive.read(info.filename)
            if info.filename == "content.xml":
                text = data.decode()
                start, end = text.index("<table:table-row"), text.index("</table:table>")
                data = (text[:start] + rows + text[end:]).encode()
            stored = zipfile.ZIP_STORED if info.filename == "mimetype" else zipfile.ZIP_DEFLATED
            target.writestr(info, data, compress_type=stored)
    return out


def test_an_ods_of_17_billion_repeated_cells_is_refused_and_the_agent_lives_on(converted: Path):
    """A1 and XFD1048576 only, by repeat counts: calamine's grid would be 512 GB."""
    hostile = _ods_with_rows(
        converted / "sales.ods",
        converted / "hostile.ods",
        '<table:table-row table:number-rows-repeated="1048575"><table:table-cell office:value-type="float" '
        'office:value="1"/></table:table-row><table:table-row><table:table-cell table:number-columns-repeated='
        '"16383"/><table:table-cell office:value-type="float" office:value="2"/></table:table-row>',
    )
    with pytest.raises(DocumentError, match="hostile.ods could not be read.*Cell limit exceeded"):
        load_tables(hostile)


def test_a_sheet_past_the_childs_memory_ends_the_child_not_the_agent(
    converted: Path, monkeypatch: pytest.MonkeyPatch
):
    """50 million cells (under calamine's own limit of 100 million) need 1.6 GB of grid: with
    the child's address space at 1 GB the allocation fails, and Rust aborts the child."""
    monkeypatch.setattr(workbook, "CHILD_MEMORY_BYTES", 1 << 30)
    hostile = _ods_with_rows(
        converted / "sales.ods",
        converted / "wide.ods",
        '<table:table-row table:number-rows-repeated="5000"><table:table-cell table:number-columns-repeated='
        '"10000" office:value-type="float" office:value="1"/></table:table-row>',
    )
    with pytest.raises(DocumentError, match="wide.ods needs more than 1 GB of memory to read"):
        load_tables(hostile, max_cells=100_000_000)


def test_an_ods_sheet_past_the_cell_limit_is_refused_by_name(converted: Path):
    with pytest.raises(DocumentError, match=r"sheet 销售 has more than 10 cells \(4 rows by 4 columns\)"):
        load_tables(converted / "sales.ods", max_cells=10)
