"""Spaces in the knowledge base: each user's private notes, team spaces, the built-in
knowledge everyone reads; and the terminal, whose notes stay its own as before."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from generalAgent.cli.knowledge_commands import register
from generalAgent.config.settings import Settings, load_settings
from generalAgent.knowledge import KnowledgeError, KnowledgeStore, open_store, search_knowledge
from generalAgent.knowledge.builtin import import_builtin_knowledge
from generalAgent.search.store import Viewer
from tests.unit.knowledge.conftest import knowledge_store

StoreOf = Callable[[Settings, Viewer], KnowledgeStore]
ALICE = Viewer("alice", ("team",))
BOB = Viewer("bob", ("team",))
CAROL = Viewer("carol")


@pytest.fixture
def store_of(
    backend: str, settings: Settings, request: pytest.FixtureRequest
) -> Callable[[Settings, Viewer], KnowledgeStore]:
    """Stores of the test's backend (all of one test share its database), one per viewer."""
    return lambda settings, viewer: knowledge_store(backend, settings, request, viewer)


def titles(store: KnowledgeStore, query: str, space: str | None = None) -> list[str]:
    return sorted(r.item.title for r in search_knowledge(store, query, space=space).results)


def test_a_user_sees_their_own_notes_and_their_teams_never_anothers_private_ones(
    settings: Settings, store_of: StoreOf
) -> None:
    with store_of(settings, ALICE) as alice:
        private = alice.add_knowledge(
            "Alice's salary", "My walrus salary is 9000.", domain="hr", tags=["payroll"]
        )
        private_chunk = alice.get_chunks_for_item(private.id)[0].id
        assert alice.get_chunk_by_id(private_chunk) is not None
        assert "hr" in alice.get_domains() and "payroll" in alice.get_tags()
        shared = alice.add_knowledge("Walrus handbook", "The walrus handbook for everyone.", space="team")
    with store_of(settings, BOB) as bob:
        bob.add_knowledge("Bob's walrus sketch", "Bob draws a walrus.")
        assert titles(bob, "walrus") == ["Bob's walrus sketch", "Walrus handbook"]
        assert titles(bob, "salary 9000") == []
        assert bob.get_knowledge_item(private.id) is None
        assert bob.get_knowledge_item(shared.id) is not None
        assert not bob.delete_knowledge(private.id)
        assert bob.update_knowledge(private.id, title="stolen") is None
        with pytest.raises(KnowledgeError):
            bob.resolve_id(private.id[:12])
        assert {i.title for i in bob.list_knowledge()} == {"Bob's walrus sketch", "Walrus handbook"}
        assert titles(bob, "walrus", space="team") == ["Walrus handbook"]
        assert bob.get_chunks_for_item(private.id) == []
        assert bob.get_chunk_by_id(private_chunk) is None
        assert "hr" not in bob.get_domains() and "payroll" not in bob.get_tags()
        assert titles(bob, "walrus", space="") == ["Bob's walrus sketch"]
    with store_of(settings, CAROL) as carol:
        assert titles(carol, "walrus") == []
        with pytest.raises(KnowledgeError, match="not a member of the space 'team'"):
            carol.add_knowledge("Sneaky", "into the team", space="team")
    with store_of(settings, ALICE) as alice:
        assert titles(alice, "salary 9000") == ["Alice's salary"]


def test_built_in_knowledge_is_everyones_and_the_terminal_keeps_its_notes(
    settings: Settings, store_of: StoreOf
) -> None:
    with open_store(settings) as terminal:  # no SEARCH_USER: the terminal, as before spaces
        note = terminal.add_knowledge("Terminal walrus", "A walrus note written at the terminal.")
        import_builtin_knowledge(terminal, settings.paths.knowledge_dir)
        builtin = [i for i in terminal.list_knowledge(limit=500) if i.source == "builtin"]
        assert builtin, "the repository ships built-in knowledge"
        assert titles(terminal, "walrus") == ["Terminal walrus"]
    with store_of(settings, ALICE) as alice:
        assert alice.get_knowledge_item(builtin[0].id) is not None
        assert alice.get_knowledge_item(note.id) is None
        assert titles(alice, "walrus") == []


def test_kb_add_and_search_take_a_space_of_the_users_teams(data_dir: Path, store_url: str | None) -> None:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """Test app registering the kb sub-app as the real one does."""

    register(app)

    def as_user(user: str, teams: str) -> Settings:
        return load_settings(
            env_file=None,
            paths={
                "data_dir": data_dir,
                "search_user": user,
                "search_teams": teams,
                "search_database_url": store_url,
            },
        )

    def kb(settings: Settings, *args: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(app, ["kb", *args], obj=settings)

    added = kb(
        as_user("alice", "team"),
        "add",
        "--title",
        "Fjord",
        "--content",
        "fjord notes",
        "--space",
        "team",
        "--json",
    )
    assert added.exit_code == 0, added.output
    refused = kb(as_user("carol", ""), "add", "--title", "X", "--content", "fjord", "--space", "team")
    assert refused.exit_code != 0 and "not a member" in refused.output
    assert (
        "(you are in no team space)" in refused.output and "none" not in refused.output
    )  # was "spaces: none"
    # A search of a space one is not in said "nothing matches"; it says why now, as add does.
    outside = kb(as_user("carol", ""), "search", "fjord", "--space", "team")
    assert outside.exit_code != 0 and "You are not a member of the space 'team'" in outside.output
    other = kb(as_user("dave", "ops"), "search", "fjord", "--space", "team")
    assert "(your team spaces: ops)" in other.output
    found = kb(as_user("bob", "team"), "search", "fjord", "--space", "team", "--json")
    assert found.exit_code == 0, found.output
    assert [r["item"]["title"] for r in json.loads(found.stdout)["results"]] == ["Fjord"]
    assert kb(as_user("carol", ""), "search", "fjord", "--json").exit_code == 1  # nothing found
