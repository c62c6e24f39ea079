"""Hostile tables and images (issue 25): a SELECT that writes, attaches or runs without end,
and an image that would inflate to gigabytes, each as a fault case."""

from __future__ import annotations

import struct
import time
import zlib
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from generalAgent.documents.images import ImageError, ImageLimits, prepare_image
from generalAgent.documents.tables import load_tables
from tests.support.documents import make_xlsx
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
