"""A PDF's tables through the real CLI: `generalagent tables --json`, and `query_table`
answering a sum over a PDF table exactly, the model's SQL shown with the answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.support.history import tool_text
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.table_pdfs import make_table_pdf

pytestmark = pytest.mark.e2e

HEADER = ["Region", "Units", "区域"]
ROWS = [[f"Region {n}", n * 7, "华东" if n % 3 else "华北"] for n in range(1, 61)]


def test_tables_json_prints_each_pdf_table_once_with_the_pages_it_spans(
    workdir: Path, cli_env: dict[str, str]
) -> None:
    make_table_pdf(workdir / "report.pdf", HEADER, ROWS, style="none", repeat_header=False)
    result = run_cli(["tables", "report.pdf", "--json"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    (table,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert table["file"] == "report.pdf" and table["pages"] == [1, 2]
    assert table["caption"] == "Table 1: Units by region"
    assert table["header"] == HEADER and table["rows"] == ROWS

    missing = run_cli(["tables", "nothing.pdf"], cli_env, workdir)
    assert missing.returncode == 1 and "nothing.pdf" in missing.stderr and not missing.stdout


def test_query_table_sums_a_pdf_table_exactly_with_the_sql_shown(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    make_table_pdf(workdir / "report.pdf", HEADER, ROWS, style="grid")
    sql = 'SELECT SUM("Units") FROM table_1 WHERE "区域" = \'华东\''
    openai_server.add(
        Reply(tool_calls=[ToolCall("query_table", {"file_path": "uploads/report.pdf"})]),
        Reply(tool_calls=[ToolCall("query_table", {"file_path": "uploads/report.pdf", "sql": sql})]),
        Reply(text="华东合计见上。"),
    )
    result = run_cli(["-p", "华东的 Units 合计是多少？ #report.pdf"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    listing = tool_text(openai_server.chat_requests[1].messages[-1]["content"])
    assert 'table "table_1" (pages 1–2, "Table 1: Units by region"; 60 rows)' in listing
    assert '"Units" INTEGER' in listing
    answer = tool_text(openai_server.chat_requests[2].messages[-1]["content"])
    expected = sum(units for _, units, region in ROWS if region == "华东")
    assert answer.splitlines()[:2] == ["uploads/report.pdf: SQL", sql]
    assert f"\n{expected}\n" in answer


def test_tables_json_lists_a_scanned_pdfs_table_read_by_ocr(workdir: Path, cli_env: dict[str, str]) -> None:
    pytest.importorskip("rapidocr_onnxruntime", reason="the ocr extra reads scanned pages")
    from tests.support.documents import make_scanned_table_pdf

    rows = [["Region", "Units"], ["North", "120"], ["South", "95"], ["East", "143"]]
    make_scanned_table_pdf(workdir / "scan.pdf", ["Table 1: Units by region"], rows)
    result = run_cli(["tables", "scan.pdf", "--json"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    (table,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert table["ocr"] is True and table["pages"] == [1] and table["caption"] == "Table 1: Units by region"
    assert table["header"] == ["Region", "Units"] and table["rows"] == [
        ["North", 120],
        ["South", 95],
        ["East", 143],
    ]
    shown = run_cli(["tables", "scan.pdf"], cli_env, workdir)
    assert "read by OCR" in shown.stdout.splitlines()[0] and "| East | 143 |" in shown.stdout
