"""`generalagent index` and `generalagent search` through Typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from generalAgent.cli.documents_commands import register
from generalAgent.config.settings import Settings


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """Test app that registers the document commands as the real one does."""

    register(app)
    return app


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("# Alpha\n\nThe baseline is stable.", encoding="utf-8")
    (root / "sub" / "b.txt").write_text("营收增长百分之二十。", encoding="utf-8")
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "c.md").write_text("secret", encoding="utf-8")
    return root


def invoke(app: typer.Typer, settings: Settings, *args: str):
    return CliRunner().invoke(app, list(args), obj=settings)


def test_index_folders_then_skip_unchanged_files(app, settings: Settings, corpus: Path):
    first = invoke(app, settings, "index", str(corpus), "--json")
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    assert sorted(Path(r["path"]).name for r in report["files"]) == ["a.md", "b.txt"]
    assert {r["status"] for r in report["files"]} == {"indexed"}
    again = json.loads(invoke(app, settings, "index", str(corpus), "--json").stdout)
    assert {r["status"] for r in again["files"]} == {"unchanged"}


def test_index_globs_and_stats(app, settings: Settings, corpus: Path):
    result = invoke(app, settings, "index", str(corpus / "**" / "*.txt"), "--stats", "--json")
    report = json.loads(result.stdout)
    assert [Path(r["path"]).name for r in report["files"]] == ["b.txt"]
    assert report["stats"]["total_files"] == 1
    table = invoke(app, settings, "index", "--stats")
    assert "Documents" in table.stdout and "Chunks" in table.stdout


def test_index_reports_failures_and_keeps_going(app, settings: Settings, corpus: Path):
    broken = corpus / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 nonsense")
    result = invoke(app, settings, "index", str(broken), str(corpus / "a.md"), "nope.md")
    assert result.exit_code == 1
    assert "broken.pdf is not a readable PDF" in result.output
    assert "nope.md: no such file or folder" in result.output
    assert "1 indexed, 0 unchanged, 1 failed" in result.output


def test_cleanup(app, settings: Settings, corpus: Path):
    invoke(app, settings, "index", str(corpus))
    report = json.loads(invoke(app, settings, "index", "--cleanup", "--days", "0", "--json").stdout)
    assert report["removed"] == 2


def test_nothing_to_do(app, settings: Settings):
    result = invoke(app, settings, "index")
    assert result.exit_code == 2 and "Nothing to do" in result.output


def test_search_prints_passages_and_json(app, settings: Settings, corpus: Path):
    text = invoke(app, settings, "search", str(corpus / "sub" / "b.txt"), "营收")
    assert text.exit_code == 0 and "\n    营收增长百分之二十。\n" in text.stdout
    result = invoke(app, settings, "search", str(corpus / "a.md"), "baselines", "--json")
    data = json.loads(result.stdout)
    assert data["results"][0]["matched"][0]["heading"] == "Alpha"
    assert data["results"][0]["matched"][0]["text"].endswith("The baseline is stable.")


def test_search_errors_and_no_match(app, settings: Settings, corpus: Path):
    missing = invoke(app, settings, "search", str(corpus / "missing.pdf"), "x")
    assert missing.exit_code == 1 and "missing.pdf does not exist" in missing.output
    none = invoke(app, settings, "search", str(corpus / "a.md"), "zebra")
    assert none.exit_code == 1 and "No passage" in none.stdout
    assert "regex=" not in none.stdout and "--regex" in none.stdout  # hints a person can type


def test_search_a_folder_groups_per_document_and_the_working_folder_is_the_default(
    app, settings: Settings, corpus: Path, monkeypatch: pytest.MonkeyPatch
):
    found = invoke(app, settings, "search", str(corpus), "baseline", "--or", "营收增长")
    assert found.exit_code == 0, found.output
    flat = " ".join(found.stdout.split())  # the terminal wraps long lines
    assert f'2 passages in 2 of 2 documents under {corpus} for "baseline" | "营收增长"' in flat
    unwrapped = "".join(found.stdout.split())  # a long path may be wrapped anywhere in it
    assert str(corpus / "a.md") in unwrapped and str(corpus / "sub" / "b.txt") in unwrapped
    assert "secret" not in flat
    monkeypatch.chdir(corpus / "sub")
    data = json.loads(invoke(app, settings, "search", "营收", "--json").stdout)
    assert data["folder"] == "." and [d["file"] for d in data["documents"]] == ["b.txt"]
    assert (data["indexed"], data["unchanged"]) == (0, 1)  # indexed by the first search
    none = invoke(app, settings, "search", str(corpus), "zebra")
    assert none.exit_code == 1 and "No passage in 2 documents" in " ".join(none.stdout.split())
    assert invoke(app, settings, "search", str(corpus), "x", "--regex").exit_code == 2


def test_index_reads_every_files_text_then_the_pdfs_tables(app, settings: Settings, corpus: Path):
    from generalAgent.documents import open_index
    from tests.support.table_pdfs import make_table_pdf

    pdf = make_table_pdf(
        corpus / "report.pdf", ["Region", "Units"], [[f"Region {n}", n] for n in range(1, 30)]
    )
    result = invoke(app, settings, "index", str(corpus), "--json")
    assert result.exit_code == 0, result.output
    report = {Path(r["path"]).name: r for r in json.loads(result.stdout)["files"]}
    assert "tables_seconds" in report["report.pdf"] and "tables_seconds" not in report["a.md"]
    # The text pass said each file, then the tables pass said the PDF (a long path may be
    # wrapped anywhere in it, so the words are read with every space taken out).
    said = "".join(result.stderr.split())
    assert said.index("a.md") < said.index("tablesread"), said
    with open_index(settings) as index:
        assert not index.tables_pending(pdf)
        assert any(", table 1, " in hit.place for hit in index.search(pdf, "Region 12", 5))
