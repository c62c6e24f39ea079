"""A team's knowledge base in one PostgreSQL, as two people at two machines use it: separate
`generalagent kb` processes, each with its own DATA_DIR (nothing shared on disk), the same
SEARCH_DATABASE_URL and their own SEARCH_USER. Alice adds a PDF to the team space and a
private note; Bob finds the PDF's page with `kb search --space team` and never sees the note.

Runs when GENERALAGENT_TEST_DATABASE_URL names a server (`.ci/run` starts one); skipped
without it, failing under CI=1 (tests/support/postgres.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.support.documents import make_pdf
from tests.support.postgres import fresh_schema_url


@pytest.fixture
def team_url() -> Iterator[str]:
    """SEARCH_DATABASE_URL of a fresh schema, dropped afterwards."""
    yield from fresh_schema_url()


def test_a_team_space_is_shared_between_processes_and_a_private_note_is_not(
    cli_env: dict[str, str], team_url: str, tmp_path: Path, workdir: Path
) -> None:
    def person(user: str) -> dict[str, str]:
        return {
            **cli_env,
            "DATA_DIR": str(tmp_path / f"data-{user}"),  # each on a machine of their own
            "SEARCH_DATABASE_URL": team_url,
            "SEARCH_USER": user,
            "SEARCH_TEAMS": "team",
        }

    alice, bob = person("alice"), person("bob")
    pdf = make_pdf(
        workdir / "q3.pdf", [["Intro page."], ["第三季度营收增长百分之二十，walrus sales doubled."]]
    )
    shared = run_cli(["kb", "add", str(pdf), "--space", "team", "--json"], alice, workdir)
    assert shared.returncode == 0, shared.stderr
    private = run_cli(
        ["kb", "add", "--title", "Alice's salary", "--content", "My salary is 9000 walrus coins.", "--json"],
        alice,
        workdir,
    )
    assert private.returncode == 0, private.stderr
    private_id = json.loads(private.stdout)["id"]

    found = run_cli(["kb", "search", "营收增长", "--space", "team", "--json"], bob, workdir)
    assert found.returncode == 0, found.stderr
    [result] = json.loads(found.stdout)["results"]
    assert result["item"]["title"] == "q3.pdf"
    assert result["found"]["matched"][0]["page"] == 2  # the page is cited
    everything = run_cli(["kb", "search", "walrus", "--json"], bob, workdir)
    assert [r["item"]["title"] for r in json.loads(everything.stdout)["results"]] == ["q3.pdf"]
    assert run_cli(["kb", "search", "salary 9000", "--json"], bob, workdir).returncode == 1
    shown = run_cli(["kb", "show", private_id], bob, workdir)
    assert shown.returncode != 0 and "9000" not in shown.stdout
    assert run_cli(["kb", "delete", private_id, "--yes"], bob, workdir).returncode != 0

    mine = run_cli(["kb", "search", "salary 9000", "--json"], alice, workdir)
    assert [r["item"]["title"] for r in json.loads(mine.stdout)["results"]] == ["Alice's salary"]
    for user in ("alice", "bob"):  # the knowledge base lives in the database alone
        assert not (tmp_path / f"data-{user}" / "indexes.db").exists()


def test_a_file_indexed_by_one_process_is_found_by_another_with_its_page(
    cli_env: dict[str, str], team_url: str, tmp_path: Path, workdir: Path
) -> None:
    """`generalagent index` on one machine, `generalagent search --all` on another after the
    file is gone: the document index is the team's store, not either machine's indexes.db.
    Indexed files are their indexer's own: another user's search does not show them."""

    def machine(name: str, user: str) -> dict[str, str]:
        return {
            **cli_env,
            "DATA_DIR": str(tmp_path / f"data-{name}"),
            "SEARCH_DATABASE_URL": team_url,
            "SEARCH_USER": user,
        }

    pdf = make_pdf(
        workdir / "q3.pdf", [["Intro page."], ["第三季度营收增长百分之二十，walrus sales doubled."]]
    )
    indexed = run_cli(["index", str(pdf), "--json"], machine("one", "alice"), workdir)
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["files"][0]["status"] == "indexed"
    pdf.unlink()  # the other machine never had the file

    found = run_cli(["search", "--all", "营收增长", "--json"], machine("two", "alice"), workdir)
    assert found.returncode == 0, found.stderr
    [document] = json.loads(found.stdout)["documents"]
    assert document["file"].endswith("q3.pdf")
    assert document["results"][0]["matched"][0]["page"] == 2
    listed = run_cli(["kb", "search", "walrus", "--json"], machine("two", "alice"), workdir)
    assert [r["item"]["title"] for r in json.loads(listed.stdout)["results"]] == ["q3.pdf"]

    other = run_cli(["search", "--all", "营收增长", "--json"], machine("three", "bob"), workdir)
    assert other.returncode != 0 and "walrus" not in other.stdout
    for name in ("one", "two", "three"):
        assert not (tmp_path / f"data-{name}" / "indexes.db").exists()
