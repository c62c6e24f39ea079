"""`generalagent kb ...` through Typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from generalAgent.cli.knowledge_commands import register
from generalAgent.config.settings import Settings, load_settings


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """Test app registering the kb sub-app as the real one does."""

    register(app)
    return app


def kb(app: typer.Typer, settings: Settings, *args: str):
    return CliRunner().invoke(app, ["kb", *args], obj=settings)


def test_add_search_list_show_delete(app, settings: Settings, tmp_path: Path):
    note = kb(
        app,
        settings,
        "add",
        "--title",
        "VPN",
        "--content",
        "Use the office VPN.",
        "--domain",
        "it",
        "--tag",
        "network",
        "--json",
    )
    assert note.exit_code == 0, note.output
    item = json.loads(note.stdout)
    assert (item["domain"], item["tags"], item["chunks"]) == ("it", ["network"], 1)

    page = tmp_path / "rules.md"
    page.write_text("# 报销规则\n\n差旅费用需要在三十天内提交。", encoding="utf-8")
    added = kb(app, settings, "add", str(page), "--domain", "finance", "--category", "policy")
    assert added.exit_code == 0 and "Added 'rules.md' to finance" in added.stdout

    found = json.loads(kb(app, settings, "search", "差旅 费用", "--json").stdout)
    assert [r["item"]["title"] for r in found["results"]] == ["rules.md"]
    assert kb(app, settings, "search", "VPN", "--domain", "finance").exit_code == 1

    listed = json.loads(kb(app, settings, "list", "--json").stdout)
    assert listed["total"] == 2 and "content" not in listed["items"][0]
    assert "VPN" in kb(app, settings, "list", "--domain", "it").stdout

    shown = json.loads(kb(app, settings, "show", item["id"], "--chunks", "0:1", "--json").stdout)
    assert shown["chunks"][0]["content"] == "Use the office VPN."
    assert "Use the office VPN." in kb(app, settings, "show", item["id"]).stdout

    domains = json.loads(kb(app, settings, "domains", "--json").stdout)
    assert [(d["domain"], d["items"]) for d in domains] == [("finance", 1), ("it", 1)]

    unasked = kb(app, settings, "delete", item["id"])  # a script: no terminal to ask at
    assert unasked.exit_code == 2 and "--yes" in unasked.output
    assert kb(app, settings, "delete", item["id"], "--yes").exit_code == 0
    assert kb(app, settings, "delete", item["id"], "--yes").exit_code == 1
    assert kb(app, settings, "show", item["id"]).exit_code == 1


def test_bad_input_is_explained(app, settings: Settings, tmp_path: Path):
    assert kb(app, settings, "add").exit_code == 2
    broken = tmp_path / "scan.pdf"
    broken.write_bytes(b"%PDF-1.4 garbage")
    result = kb(app, settings, "add", str(broken))
    assert result.exit_code == 1 and "scan.pdf is not a readable PDF" in result.output
    empty = kb(app, settings, "add", "--title", "x", "--content", "  ")
    assert empty.exit_code == 1 and "content is empty" in empty.output
    assert kb(app, settings, "search", "x", "--sort", "random").exit_code == 2


def test_search_takes_other_phrasings_with_or_as_generalagent_search_does(app, settings: Settings):
    for title, content in (("VPN", "Use the office VPN."), ("差旅", "差旅费用需要在三十天内提交。")):
        assert kb(app, settings, "add", "--title", title, "--content", content).exit_code == 0
    alone = json.loads(kb(app, settings, "search", "office VPN", "--json").stdout)
    assert [r["item"]["title"] for r in alone["results"]] == ["VPN"]
    both = kb(app, settings, "search", "office", "VPN", "--or", "差旅 费用", "--json")
    assert both.exit_code == 0, both.output
    found = json.loads(both.stdout)
    assert sorted(r["item"]["title"] for r in found["results"]) == ["VPN", "差旅"]
    assert found["query"] == "office VPN | 差旅 费用"
    # Six phrasings: refused before anything is searched, as `generalagent search` refuses them.
    more = [arg for word in ("seal", "otter", "orca", "whale", "puffin") for arg in ("--or", word)]
    refused = kb(app, settings, "search", "VPN", *more)
    assert refused.exit_code == 2
    assert "A search takes at most 5 phrasings (the words and 4 --or); 6 were given" in " ".join(
        refused.output.split()
    )


def test_sync_imports_built_in_knowledge_once(app, data_dir: Path, tmp_path: Path):
    root = tmp_path / "knowledge"
    (root / "ops").mkdir(parents=True)
    (root / "ops" / "oncall.md").write_text("# On-call\n\nPage the primary first.")
    settings = load_settings(env_file=None, paths={"data_dir": data_dir, "knowledge_dir": root})
    assert "1 added" in kb(app, settings, "sync").stdout
    assert "up to date" in kb(app, settings, "sync").stdout


def test_ids_as_kb_list_shows_them_work_in_show_and_delete(app, settings: Settings):
    for title in ("VPN", "Wi-Fi"):
        kb(app, settings, "add", "--title", title, "--content", f"How to use the {title}.")
    listed = CliRunner().invoke(app, ["kb", "list"], obj=settings, env={"COLUMNS": "80"}).stdout
    full_id = json.loads(kb(app, settings, "list", "--json").stdout)["items"][0]["id"]
    short = full_id[:12]
    assert short in listed and full_id not in listed  # the table shows the short id whole
    assert kb(app, settings, "show", short).exit_code == 0
    assert kb(app, settings, "delete", short, "--yes").exit_code == 0
    gone = kb(app, settings, "show", full_id)
    assert gone.exit_code == 1 and "No knowledge item id starts with" in gone.output


def test_a_shared_start_of_two_ids_is_refused_with_both_named(settings: Settings):
    from generalAgent.knowledge import KnowledgeError, open_store

    with open_store(settings) as store:
        for item_id in ("abcd0001", "abcd0002"):
            store.db.execute(
                "INSERT INTO items (id, domain, title, content, created_at, updated_at)"
                " VALUES (?, 'general', 't', 'c', '2026', '2026')",
                (item_id,),
            )
        with pytest.raises(KnowledgeError, match="matches several items .abcd0001, abcd0002"):
            store.resolve_id("abcd")
        assert store.resolve_id("ABCD0002") == "abcd0002"


def test_a_document_added_to_the_knowledge_base_keeps_its_pages(app, settings: Settings, tmp_path: Path):
    from tests.support.documents import make_pdf

    pdf = make_pdf(
        tmp_path / "handbook.pdf", [["Welcome to the handbook."], ["Expenses are filed within 30 days."]]
    )
    added = json.loads(kb(app, settings, "add", str(pdf), "--json").stdout)
    found = json.loads(kb(app, settings, "search", "expenses filed", "--json").stdout)
    matched = found["results"][0]["found"]["matched"][0]
    assert found["results"][0]["item"]["id"] == added["id"]
    assert matched["page"] == 2 and "30 days" in matched["text"]
