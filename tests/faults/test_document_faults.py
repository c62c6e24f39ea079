"""Hostile tables and images (issue 25): a SELECT that writes, attaches or runs without end,
a sheet that would be billions of cells, expand entities or inflate from a zip bomb, and an
image that would inflate to gigabytes, each as a fault case."""

from __future__ import annotations

import struct
import time
import tracemalloc
import zlib
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from generalAgent.documents.images import ImageError, ImageLimits, prepare_image
from generalAgent.documents.reading import DocumentError
from generalAgent.documents.tables import load_tables
from tests.support.documents import make_xlsx
from tests.support.sheets import MAIN, xlsx_with_sheet
from tests.support.tools import run_tool, workspace_root

fault = pytest.mark.fault


@fault(
    area="security",
    fault="query_table with a SELECT that writes, ATTACHes a file, turns query_only off or loads an extension",
    outcome="Refused before it runs (an error answer naming what is allowed); the table and the file are unchanged.",
)
def test_query_table_refuses_every_statement_but_a_select(settings: Settings, tmp_path: Path):
    root = workspace_root(settings)
    make_xlsx(root / "uploads" / "t.xlsx", {"T": [["k", "v"], ["a", 1], ["b", 2]]})
    before = (root / "uploads" / "t.xlsx").read_bytes()
    evil = tmp_path / "evil.db"
    for sql in (
        "DELETE FROM T",
        f"ATTACH DATABASE '{evil}' AS evil",
        "PRAGMA query_only = OFF",
        "SELECT load_extension('/tmp/x.so')",
        "SELECT 1; DROP TABLE T",
    ):
        answer, _ = run_tool(settings, "query_table", {"file_path": "uploads/t.xlsx", "sql": sql})
        assert answer.startswith("Error:"), sql
    assert not evil.exists()
    total, _ = run_tool(
        settings, "query_table", {"file_path": "uploads/t.xlsx", "sql": "SELECT SUM(v) FROM T"}
    )
    assert "| 3" in total or "\n3\n" in total
    assert (root / "uploads" / "t.xlsx").read_bytes() == before


@fault(
    area="security",
    fault="query_table with a recursive CTE that would count for minutes, and one that doubles a string",
    outcome="Stopped at the time limit (5 s in the tool) or at the 1 MB value cap, with advice; the database stays usable.",
)
def test_query_table_stops_a_query_that_would_run_for_minutes(tmp_path: Path):
    path = tmp_path / "t.csv"
    path.write_text("k,v\na,1\n", encoding="utf-8")
    database = load_tables(path)
    started = time.monotonic()
    with pytest.raises(Exception, match="stopped"):
        database.query(
            "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT max(x) FROM n", seconds=1
        )
    assert time.monotonic() - started < 60  # stopped: it counts for minutes otherwise
    with pytest.raises(Exception, match="too big"):
        database.query(
            "WITH RECURSIVE s(x) AS (SELECT 'ab' UNION ALL SELECT x || x FROM s) SELECT length(x) FROM s"
        )
    assert database.query("SELECT v FROM t").rows == [(1,)]


def _png_header_only(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )


@fault(
    area="security",
    fault="An attached PNG of 50 KB whose header claims 12,000 x 9,000 pixels (108 MP), and one claiming 60,000 x 60,000",
    outcome="Refused from its header, before a pixel is decoded: the image is not sent and the user is told why.",
)
def test_an_image_that_would_inflate_to_gigabytes_is_refused_from_its_header(monkeypatch: pytest.MonkeyPatch):
    from PIL import ImageFile

    # Not a clock (Pillow's import under load took longer): no pixel data is ever loaded.
    decoded: list[object] = []
    load = ImageFile.ImageFile.load
    monkeypatch.setattr(ImageFile.ImageFile, "load", lambda self: decoded.append(self) or load(self))
    for width, height in ((12_000, 9_000), (60_000, 60_000)):
        with pytest.raises(ImageError):
            prepare_image(_png_header_only(width, height), ImageLimits())
    assert decoded == []


@fault(
    area="security",
    fault="query_table on an XLSX of a few KB whose only cells are A1 and XFD1048576 (17 billion cells as a grid)",
    outcome="Refused by name as more than 5,000,000 cells while the sheet is read, before a row is padded: under 50 MB of memory.",
)
def test_query_table_refuses_a_billion_cell_sheet_before_building_it(tmp_path: Path):
    sheet = f'<worksheet xmlns="{MAIN}"><dimension ref="A1:XFD1048576"/><sheetData>'.encode()
    sheet += b'<row r="1"><c r="A1"><v>1</v></c></row><row r="1048576"><c r="XFD1048576"><v>2</v></c></row>'
    sheet += b"</sheetData></worksheet>"
    path = xlsx_with_sheet(tmp_path, sheet)
    tracemalloc.start()
    with pytest.raises(
        DocumentError, match=r"more than 5,000,000 cells \(1,048,576 rows by 16,384 columns\)"
    ):
        load_tables(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50_000_000  # a padded grid would be terabytes; the refusal costs a few MB


@fault(
    area="security",
    fault="query_table on an XLSX whose sheet XML declares entities that expand exponentially (billion laughs)",
    outcome="Refused at its DOCTYPE, which no spreadsheet writes; nothing is expanded.",
)
def test_query_table_refuses_a_sheet_with_entity_expansion(tmp_path: Path):
    laughs = (
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
        + f'<worksheet xmlns="{MAIN}"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>&lol2;</t></is></c>'.encode()
        + b"</row></sheetData></worksheet>"
    )
    with pytest.raises(DocumentError, match="DOCTYPE"):
        load_tables(xlsx_with_sheet(tmp_path, laughs))


@fault(
    area="security",
    fault="query_table on an XLSX whose sheet inflates from a few KB to 20 MB (a zip bomb)",
    outcome="Refused from the archive's directory before a byte is inflated (compression over 200:1).",
)
def test_query_table_refuses_a_zip_bomb_sheet_unopened(tmp_path: Path):
    cell = b'<c r="A1" t="inlineStr"><is><t>' + b"A" * 1000 + b"</t></is></c>"
    bomb = (
        f'<worksheet xmlns="{MAIN}"><sheetData><row r="1">'.encode()
        + cell * 20_000
        + b"</row></sheetData></worksheet>"
    )
    with pytest.raises(DocumentError, match="would inflate"):
        load_tables(xlsx_with_sheet(tmp_path, bomb))
