"""query_table's database: sheets, CSVs and DOCX tables as typed SQLite tables, and only a bounded SELECT."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import START, StateGraph

from generalAgent.config.settings import Settings
from generalAgent.documents.extract import preview_document
from generalAgent.documents.reading import DocumentError
from generalAgent.documents.tables import QueryRefused, TableDatabase, load_tables, render_result
from generalAgent.graph.nodes.tools import build_tool_node
from generalAgent.graph.state import AgentState
from generalAgent.tools.environment import ToolEnvironment
from tests.support.documents import REGIONS, ROWS, make_docx, make_sales_sheet, make_xlsx
from tests.support.tools import run_tool, workspace_root


@pytest.fixture(scope="module")
def sales(tmp_path_factory: pytest.TempPathFactory) -> TableDatabase:
    path = make_sales_sheet(tmp_path_factory.mktemp("tables") / "sales.xlsx")
    return load_tables(path)


def test_a_group_by_over_50k_rows_is_exact_and_shows_its_sql(sales: TableDatabase):
    sql = 'SELECT "Region", SUM("Revenue Q1") AS q1, COUNT(*) AS n FROM "Sales" GROUP BY "Region" ORDER BY "Region"'
    result = sales.query(sql)
    expected = {
        region: (sum(i % 100 for i in range(ROWS) if i % 5 == k), ROWS // 5)
        for k, region in enumerate(REGIONS)
    }
    assert {row[0]: (row[1], row[2]) for row in result.rows} == expected
    text = render_result(result, "uploads/sales.xlsx")
    assert text.splitlines()[1] == sql
    assert "Region | q1 | n" in text and "(5 rows)" in text


def test_merged_headers_title_and_uncached_formulas_are_described(sales: TableDatabase):
    described = sales.describe()
    sheet = next(t for t in sales.tables if t.name == "Sales")
    assert [c.name for c in sheet.columns] == ["Region", "Product", "Revenue Q1", "Revenue Q2", "Total"]
    assert sheet.rows == ROWS and sheet.header_rows == 2
    assert [c.sql_type for c in sheet.columns[:4]] == ["TEXT", "TEXT", "INTEGER", "INTEGER"]
    assert "50,000 formula cells have no cached value" in described and "=C4+D4" in described
    assert 'table "Notes"' in described


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM Sales",
        "UPDATE Sales SET Region = 'x'",
        "INSERT INTO Sales (Region) VALUES ('x')",
        "DROP TABLE Sales",
        "CREATE TABLE t (x)",
        "ATTACH DATABASE '/tmp/evil.db' AS evil",
        "PRAGMA query_only = OFF",
        "SELECT load_extension('/tmp/evil.so')",
        "VACUUM INTO '/tmp/copy.db'",
    ],
)
def test_anything_but_a_select_is_refused(sales: TableDatabase, sql: str):
    with pytest.raises(QueryRefused, match="only a read-only SELECT|not authorized"):
        sales.query(sql)
    assert sales.query('SELECT COUNT(*) FROM "Sales"').rows == [(ROWS,)]


def test_a_second_statement_is_refused(sales: TableDatabase):
    with pytest.raises(QueryRefused, match="one statement"):
        sales.query("SELECT 1; DROP TABLE Sales")
    assert sales.query('SELECT COUNT(*) FROM "Sales"').rows == [(ROWS,)]


def test_a_query_running_for_minutes_is_stopped_at_its_time_limit(sales: TableDatabase):
    endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n"
    started = time.monotonic()
    with pytest.raises(QueryRefused, match="ran past 0.5 s and was stopped"):
        sales.query(endless, seconds=0.5)
    assert time.monotonic() - started < 60  # stopped: it counts for minutes otherwise
    doubling = "WITH RECURSIVE s(x) AS (SELECT 'ab' UNION ALL SELECT x || x FROM s) SELECT length(x) FROM s"
    with pytest.raises(QueryRefused, match="too big"):
        sales.query(doubling, seconds=5)


def test_rows_are_bounded_and_the_rest_announced(sales: TableDatabase):
    result = sales.query('SELECT * FROM "Sales"', max_rows=7)
    assert len(result.rows) == 7 and result.more
    assert "7 rows shown; more rows matched" in render_result(result, "s.xlsx")


def test_csv_numbers_thousands_gbk_and_a_mixed_column(tmp_path: Path):
    rows = ["地区,金额,备注", '华东,"1,200",12', "华南,300.5,n/a", "华东,500,7"]
    path = tmp_path / "销售.csv"
    path.write_bytes("\n".join(rows).encode("gb18030"))
    database = load_tables(path)
    table = database.tables[0]
    assert table.name == "销售" and [c.sql_type for c in table.columns] == ["TEXT", "REAL", "NUMERIC"]
    assert "mixed: 2 numbers and 1 text values" in table.columns[2].note
    result = database.query('SELECT "地区", SUM("金额") FROM "销售" GROUP BY 1 ORDER BY 1')
    assert result.rows == [("华东", 1700), ("华南", 300.5)]


def test_docx_tables_become_tables(tmp_path: Path):
    path = make_docx(
        tmp_path / "report.docx",
        "Report",
        ["Quarterly figures"],
        table=[["Region", "Revenue"], ["North", "120"]],
    )
    database = load_tables(path)
    assert database.query("SELECT Revenue * 2 FROM table_1").rows == [(240,)]


def test_files_without_tables_are_refused_clearly(tmp_path: Path):
    (tmp_path / "notes.md").write_text("# no table", encoding="utf-8")
    with pytest.raises(DocumentError, match="not a table file"):
        load_tables(tmp_path / "notes.md")
    (tmp_path / "empty.csv").write_text("\n\n", encoding="utf-8")
    with pytest.raises(DocumentError, match="no table with data"):
        load_tables(tmp_path / "empty.csv")


def test_xlsx_preview_names_the_sheets_shows_the_header_once_and_uncached_formulas(
    tmp_path: Path, settings: Settings
):
    rows = [["Region", "Q1", "Total"]] + [[f"r{i}", i, f"=B{i + 2}*2"] for i in range(45)]
    path = make_xlsx(tmp_path / "q.xlsx", {"Q": rows, "备注": [["note"]]})
    preview = preview_document(path, settings.documents)
    assert preview.startswith("Sheets (2): Q, 备注")
    assert preview.count("Region | Q1 | Total") == 1
    assert "## Sheet 1: Q" in preview and "## Sheet 2: 备注" in preview
    assert "r44 | 44 | =B46*2" in preview


def test_query_table_tool_lists_tables_then_answers(settings: Settings):
    root = workspace_root(settings)
    make_xlsx(root / "uploads" / "q.xlsx", {"Q": [["Region", "Q1"], ["N", 3], ["S", 4], ["N", 5]]})
    listing, _ = run_tool(settings, "query_table", {"file_path": "uploads/q.xlsx"})
    assert 'table "Q"' in listing and '"Q1" INTEGER' in listing
    sql = 'SELECT "Region", SUM("Q1") FROM "Q" GROUP BY 1 ORDER BY 1'
    answer, _ = run_tool(settings, "query_table", {"file_path": "uploads/q.xlsx", "sql": sql})
    assert sql in answer and "N | 8" in answer and "S | 4" in answer
    refused, _ = run_tool(settings, "query_table", {"file_path": "uploads/q.xlsx", "sql": "DELETE FROM Q"})
    assert refused.startswith("Error:") and "read-only SELECT" in refused and 'table "Q"' in refused


def test_query_table_keeps_a_file_loaded_by_its_bytes(settings: Settings, monkeypatch: pytest.MonkeyPatch):
    import generalAgent.documents.tables as tables
    from generalAgent.tools.builtin import query_table

    loads: list[Path] = []
    real_load = tables.load_tables

    def counted(path: Path, *args: Any, **kwargs: Any) -> TableDatabase:
        loads.append(path)
        return real_load(path, *args, **kwargs)

    monkeypatch.setattr(tables, "load_tables", counted)
    root = workspace_root(settings)
    make_xlsx(root / "uploads" / "q.xlsx", {"Q": [["Region", "Q1"], ["N", 3], ["S", 4]]})
    (root / "uploads" / "copy.xlsx").write_bytes((root / "uploads" / "q.xlsx").read_bytes())
    tool = query_table.create_tool(ToolEnvironment(settings=settings))  # one session's tool
    graph = StateGraph(AgentState)
    graph.add_node("tools", build_tool_node([tool], settings.tools.tool_result_max_chars))
    graph.add_edge(START, "tools")
    compiled = graph.compile()
    sql = 'SELECT SUM("Q1") FROM "Q"'

    def ask(name: str) -> str:
        call = {
            "id": "c1",
            "name": "query_table",
            "args": {"file_path": name, "sql": sql},
            "type": "tool_call",
        }
        final = compiled.invoke(
            {"messages": [AIMessage(content="", tool_calls=[call])]}, {"configurable": {"thread_id": "s1"}}
        )
        return str(final["messages"][-1].content)

    answers = [ask(name) for name in ("uploads/q.xlsx", "uploads/q.xlsx", "uploads/copy.xlsx")]
    assert all("\n7\n" in answer for answer in answers) and len(loads) == 1
    make_xlsx(root / "uploads" / "q.xlsx", {"Q": [["Region", "Q1"], ["N", 30]]})
    changed = ask("uploads/q.xlsx")
    assert "\n30\n" in changed and len(loads) == 2
