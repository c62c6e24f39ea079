"""XLSX sheets read through python-calamine (documents/workbook.py) behind the light look at
their XML (documents/sheet_xml.py): the values openpyxl gives, in every way writers write a
sheet, formulas without a cached value, and hostile sheets refused within the limits."""

from __future__ import annotations

import gc
import io
import sys
import zipfile
from datetime import date, datetime, timedelta
from datetime import time as day_time
from pathlib import Path

import pytest

from generalAgent.documents import sheet_xml
from generalAgent.documents.reading import DocumentError
from generalAgent.documents.tables import load_tables
from generalAgent.documents.workbook import SheetCells, read_sheets
from tests.support.documents import make_sales_sheet, make_xlsx
from tests.support.sheets import (
    MAIN,
    openpyxl_rows,
    read_all,
    rewrite_xlsx,
    with_prefix,
    with_shared_strings,
    xlsx_with_sheet,
)


def varied_rows() -> list[list[object]]:
    return [
        ["名称", "日期", "时刻", "金额", "是否", "备注", "时长"],
        ["A & B <c>", date(2024, 3, 1), day_time(9, 30), -1234.5, True, None, timedelta(hours=30)],
        [None, datetime(2024, 3, 2, 18, 5, 7), None, 1e-7, False, "  spaced  ", None],
        [],
        ["末行", None, None, 12345678901234, None, "引号 \" 和 '单引号'\n第二行", None],
        [None, None, None, None, None, None, None, "beyond"],
    ]


@pytest.fixture
def varied(tmp_path: Path) -> Path:
    return make_xlsx(tmp_path / "varied.xlsx", {"V": varied_rows(), "空": [["only"]]})


def test_the_values_are_openpyxls_as_openpyxl_excel_and_prefixed_writers_write_them(
    varied: Path, tmp_path: Path
):
    forms = [
        varied,
        with_shared_strings(varied, tmp_path / "shared.xlsx"),
        with_prefix(varied, tmp_path / "prefixed.xlsx"),
    ]
    for path in forms:
        expected = openpyxl_rows(path)
        assert expected["V"][1][1] == datetime(2024, 3, 1) and expected["V"][1][6] == timedelta(hours=30)
        assert read_all(path) == expected, path.name


@pytest.mark.filterwarnings("ignore:Workbook contains no default style")
def test_the_1904_date_system_is_followed(tmp_path: Path):
    import openpyxl
    from openpyxl.utils.datetime import CALENDAR_MAC_1904

    workbook = openpyxl.Workbook()
    workbook.epoch = CALENDAR_MAC_1904
    workbook.active.append([date(2001, 5, 6), datetime(1999, 12, 31, 23, 59, 59), 3])
    workbook.save(tmp_path / "mac.xlsx")
    expected = openpyxl_rows(tmp_path / "mac.xlsx")
    assert expected["Sheet"][0][:2] == [datetime(2001, 5, 6), datetime(1999, 12, 31, 23, 59, 59)]
    assert read_all(tmp_path / "mac.xlsx") == expected


@pytest.mark.filterwarnings("ignore:Workbook contains no default style")
def test_rich_text_phonetic_runs_booleans_errors_and_iso_dates(tmp_path: Path):
    """What openpyxl never writes but Excel does: rich-text runs in the shared strings
    (joined; the phonetic reading left out), `t="e"` errors, `t="d"` ISO dates, a cached
    formula result, and a numFmt of the workbook's own that shows a date."""
    source = make_xlsx(tmp_path / "plain.xlsx", {"S": [["x"]]})
    sheet = (
        f'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{MAIN}"><sheetData>'
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="e"><v>#N/A</v></c>'
        '<c r="C1" t="d"><v>2024-02-29T10:20:30</v></c><c r="D1" t="b"><v>0</v></c></row>'
        '<row r="3"><c r="A3" s="1"><v>45000.5</v></c><c r="B3" t="str"><f>A1&amp;"!"</f><v>漢字!</v></c>'
        '<c r="C3"><f>A3*2</f><v>90001</v></c><c r="D3"><f t="shared" si="0"/></c></row>'
        "</sheetData></worksheet>"
    )
    strings = (
        f'<sst xmlns="{MAIN}"><si><r><t>漢</t></r><r><rPr><b/></rPr><t xml:space="preserve">字 </t></r>'
        '<rPh sb="0" eb="1"><t>かん</t></rPh></si></sst>'
    )
    styles = (
        f'<styleSheet xmlns="{MAIN}"><numFmts count="1"><numFmt numFmtId="170" formatCode="dd/mm/yyyy hh:mm"/>'
        '</numFmts><cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="170" applyNumberFormat="1"/></cellXfs></styleSheet>'
    )

    def change(name: str, data: bytes) -> bytes:
        if name.startswith("xl/worksheets/sheet"):
            return sheet.encode()
        if name == "xl/styles.xml":
            return styles.encode()
        return data

    shared = with_shared_strings(
        rewrite_xlsx(source, tmp_path / "rich0.xlsx", change), tmp_path / "rich1.xlsx"
    )
    path = rewrite_xlsx(
        shared,
        tmp_path / "rich.xlsx",
        lambda name, data: strings.encode() if name == "xl/sharedStrings.xml" else data,
    )
    expected = openpyxl_rows(path)
    assert expected["S"][0] == ["漢字 ", "#N/A", datetime(2024, 2, 29, 10, 20, 30), False]
    assert expected["S"][2][0] == datetime(2023, 3, 15, 12, 0)
    assert read_all(path) == expected
    assert first_sheet(path, 100).uncached == {(2, 3): "(a shared formula)"}


def first_sheet(path: Path, max_cells: int) -> SheetCells:
    with path.open("rb") as handle:
        return next(read_sheets(handle, path, max_cells))[1]


def test_formulas_without_a_cached_value_are_reported_in_any_writers_form(tmp_path: Path):
    path = make_sales_sheet(tmp_path / "sales.xlsx", rows=30)
    prefixed = with_prefix(path, tmp_path / "prefixed.xlsx")
    for each in (path, prefixed):
        cells = first_sheet(each, 10_000)
        assert len(cells.uncached) == 30 and cells.uncached[(3, 4)] == "=C4+D4", each.name


def test_the_query_table_database_is_what_it_was_with_openpyxl(tmp_path: Path):
    path = make_sales_sheet(tmp_path / "sales.xlsx", rows=200)
    shared = with_shared_strings(path, tmp_path / "shared.xlsx")
    first, second = load_tables(path), load_tables(shared)
    assert first.describe() == second.describe()
    assert "200 formula cells have no cached value" in first.describe()
    sql = 'SELECT * FROM "Sales" ORDER BY rowid'
    assert first.query(sql, max_rows=1000).rows == second.query(sql, max_rows=1000).rows


def test_loading_a_sheet_imports_no_openpyxl(tmp_path: Path):
    import subprocess

    path = make_xlsx(tmp_path / "q.xlsx", {"Q": [["a", "b"], [1, 2]]})
    code = (
        "import sys; from pathlib import Path; from generalAgent.documents.tables import load_tables;"
        f"db = load_tables(Path({str(path)!r})); assert db.query('SELECT b FROM Q').rows == [(2,)];"
        "print('openpyxl' in sys.modules, 'numpy' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.split() == ["False", "False"]


# -- hostile sheets --------------------------------------------------------------------------
def test_more_cells_than_the_limit_stop_the_reading_with_the_sheet_named(tmp_path: Path):
    rows = b"".join(
        f'<row r="{r}">'.encode()
        + b"".join(f'<c r="{c}{r}"><v>{r}</v></c>'.encode() for c in "ABCDEFGHIJ")
        + b"</row>"
        for r in range(1, 301)
    )
    path = xlsx_with_sheet(
        tmp_path, f'<worksheet xmlns="{MAIN}"><sheetData>'.encode() + rows + b"</sheetData></worksheet>"
    )
    assert load_tables(path, max_cells=3_000).tables[0].rows == 299
    with pytest.raises(DocumentError, match=r"hostile.xlsx: sheet H has more than 1,000 cells"):
        load_tables(path, max_cells=1_000)
    assert gc.isenabled()  # paused while the cells were read, resumed though the load failed
    prefixed = with_prefix(path, tmp_path / "prefixed.xlsx")  # a prefixed sheet keeps the same limit
    with pytest.raises(DocumentError, match=r"sheet H has more than 1,000 cells"):
        load_tables(prefixed, max_cells=1_000)


def test_a_sheet_of_empty_cell_elements_is_refused_at_twice_the_cell_limit(tmp_path: Path):
    cells = b"".join(f'<c r="A{r}" s="0"/>'.encode() for r in range(1, 5_001))
    path = xlsx_with_sheet(
        tmp_path,
        f'<worksheet xmlns="{MAIN}"><sheetData><row r="1">'.encode()
        + cells
        + b"</row></sheetData></worksheet>",
    )
    with pytest.raises(DocumentError, match=r"more than 2,000 cell elements"):
        load_tables(path, max_cells=1_000)


def test_a_giant_token_and_a_giant_cell_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sheet_xml, "MAX_TOKEN_BYTES", 1 << 20)
    monkeypatch.setattr(sheet_xml, "MAX_CELL_CHARS", 10_000)
    long_attribute = (
        f'<worksheet xmlns="{MAIN}" junk="'.encode() + b"j" * (3 << 20) + b'"><sheetData/></worksheet>'
    )
    long_cell = (
        f'<worksheet xmlns="{MAIN}"><sheetData><row r="1"><c r="A1" t="str"><v>'.encode()
        + b"v" * 20_000
        + b"</v></c></row></sheetData></worksheet>"
    )
    for text, message in (
        (long_attribute, "single XML token over 1 MB"),
        (long_cell, "longer than 10,000 characters"),
    ):
        archive_bytes = io.BytesIO()
        base = make_xlsx(tmp_path / "b.xlsx", {"H": [["x"]]})
        with zipfile.ZipFile(archive_bytes, "w") as archive, zipfile.ZipFile(base) as source:
            for name in source.namelist():
                archive.writestr(name, text if name.startswith("xl/worksheets/sheet") else source.read(name))
        with pytest.raises(DocumentError, match=message):
            list(read_sheets(archive_bytes, Path("b.xlsx"), 100))


def test_the_libreoffice_written_sheet_reads_as_openpyxl_reads_it(tmp_path: Path, varied: Path):
    import shutil
    import subprocess

    from generalAgent.documents.convert import soffice

    if soffice() is None:
        pytest.skip("LibreOffice (soffice) is not installed; .ci/run installs it for CI")
    out = tmp_path / "out"
    subprocess.run(
        [str(soffice()), f"-env:UserInstallation={(tmp_path / 'p').as_uri()}", "--headless", "--convert-to", "xlsx",
         "--outdir", str(out), str(varied)],
        check=True, capture_output=True, timeout=180,
    )  # fmt: skip
    converted = out / "varied.xlsx"
    with zipfile.ZipFile(converted) as archive:
        assert "xl/sharedStrings.xml" in archive.namelist()
    expected = openpyxl_rows(converted)
    assert read_all(converted) == expected
    shutil.rmtree(out)


@pytest.mark.parametrize(
    "cells",
    [
        # a streaming writer: no references on cells or rows
        '<row><c t="inlineStr"><is><t>a</t></is></c><c><v>1</v></c></row><row><c/><c><v>2.5</v></c></row>',
        # pretty-printed, with a comment and CDATA
        '<row r="1">\n  <c r="A1" t="inlineStr">\n    <is><t><![CDATA[x < y]]></t></is>\n  </c>\n'
        '  <!-- a note -->\n  <c r="B1">\n    <v>7</v>\n  </c>\n</row>',
        # rich inline text with a phonetic run, attributes in another order and quoted with '
        "<row r='2'><c t='inlineStr' r='C2'><is><r><t>漢</t></r><r><t>字</t></r><rPh sb='0' eb='1'><t>かん</t></rPh>"
        "</is></c><c s='0' r='D2' t='b'><v>1</v></c></row>",
        # entities and character references, a CR LF inside a value
        '<row r="3"><c r="A3" t="str"><v>&lt;&amp;&#x4E2D;&#25991;&#128;</v></c>'
        '<c r="B3" t="inlineStr"><is><t>one\r\ntwo</t></is></c></row>',
    ],
)
def test_sheets_written_other_ways_read_as_openpyxl_reads_them(tmp_path: Path, cells: str):
    path = xlsx_with_sheet(
        tmp_path, f'<worksheet xmlns="{MAIN}"><sheetData>{cells}</sheetData></worksheet>'.encode()
    )
    expected = openpyxl_rows(path)
    assert any(v is not None for row in expected["H"] for v in row)
    assert read_all(path) == expected


def test_a_strict_ooxml_workbook_reads_as_its_transitional_twin(varied: Path, tmp_path: Path):
    """ISO 29500 Strict names every part in other namespaces (openpyxl cannot read it);
    the sheet names, the values and their dates are the same as in the transitional file."""
    strict = {
        b"http://schemas.openxmlformats.org/spreadsheetml/2006/main": b"http://purl.oclc.org/ooxml/spreadsheetml/main",
        b"http://schemas.openxmlformats.org/officeDocument/2006/relationships": (
            b"http://purl.oclc.org/ooxml/officeDocument/relationships"
        ),
    }

    def change(name: str, data: bytes) -> bytes:
        for transitional, iso in strict.items():
            data = data.replace(transitional, iso)
        return data

    path = rewrite_xlsx(varied, tmp_path / "strict.xlsx", change)
    assert b"purl.oclc.org" in zipfile.ZipFile(path).read("xl/workbook.xml")
    assert read_all(path) == read_all(varied) == openpyxl_rows(varied)


def test_a_chart_sheet_is_named_but_holds_no_table(tmp_path: Path):
    import openpyxl
    from openpyxl.chart import BarChart, Reference

    from generalAgent.documents.sheets import xlsx_sheet_names

    workbook = openpyxl.Workbook()
    data = workbook.active
    data.title = "Data"
    for row in (["a", "b"], [1, 2], [3, 4]):
        data.append(row)
    chart = BarChart()
    chart.add_data(Reference(data, min_col=2, min_row=1, max_row=3))
    workbook.create_chartsheet("Chart").add_chart(chart)
    workbook.save(tmp_path / "chart.xlsx")
    names = openpyxl.load_workbook(tmp_path / "chart.xlsx", read_only=True).sheetnames
    assert xlsx_sheet_names(tmp_path / "chart.xlsx") == names == ["Data", "Chart"]
    assert [t.name for t in load_tables(tmp_path / "chart.xlsx").tables] == ["Data"]
