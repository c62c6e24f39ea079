"""Nothing below the terminal front end imports it: the layers of pyproject.toml hold in a
plain test run too, function-level imports included (grimp reads them as lint-imports does)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp
import pytest

ENTRY_POINT = "generalAgent.__main__"  # `python -m generalAgent` runs the command: above cli
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("generalAgent")


def test_no_module_below_cli_imports_generalagent_cli(graph: grimp.ImportGraph) -> None:
    below = [
        module
        for module in graph.modules
        if module != ENTRY_POINT
        and module != "generalAgent.cli"
        and not module.startswith("generalAgent.cli.")
    ]
    upward = {
        (importer["importer"], importer["imported"])
        for module in below
        for importer in graph.find_matching_direct_imports(
            import_expression=f"{module} -> generalAgent.cli.**"
        )
    }
    assert upward == set(), "a module below cli imports the front end; move what it needs down"
    assert graph.find_downstream_modules(ENTRY_POINT) == set()  # nothing imports the entry point


def test_the_session_catalog_speaks_the_ui_language_without_the_front_end(graph: grimp.ImportGraph) -> None:
    assert "generalAgent.i18n" in graph.find_modules_directly_imported_by("generalAgent.sessions")
    depends_on = graph.find_upstream_modules("generalAgent.sessions")
    assert not any(module.startswith("generalAgent.cli") for module in depends_on)


def test_every_module_below_cli_is_a_source_of_the_forbidden_contract(graph: grimp.ImportGraph) -> None:
    """The contract lists its sources (the entry point is outside them, with no exception),
    so a new top-level module must be added to it by hand: this test says so."""
    contracts = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    (forbidden,) = [c for c in contracts if c["type"] == "forbidden"]
    assert forbidden["forbidden_modules"] == ["generalAgent.cli"] and "ignore_imports" not in forbidden
    top_level = {m for m in graph.modules if m.count(".") == 1} - {ENTRY_POINT, "generalAgent.cli"}
    assert set(forbidden["source_modules"]) == top_level, "name the new module in pyproject.toml's contract"


def test_the_agent_core_runs_a_turn_without_the_front_end(graph: grimp.ImportGraph) -> None:
    """The Python API (docs/api.md) and the engine it shares with the front ends import
    nothing of cli, directly or through another module."""
    depends_on = graph.find_upstream_modules("generalAgent.agent", as_package=True)
    assert not any(module.startswith("generalAgent.cli") for module in depends_on)


def test_no_module_the_chat_imports_imports_the_chat(graph: grimp.ImportGraph) -> None:
    """No import circle through cli/chat.py: the slash commands type the chat they get as
    cli/chat_handle.py's ChatHandle (type-checking imports count too)."""
    chat = "generalAgent.cli.chat"
    circles = [
        module
        for module in graph.find_upstream_modules(chat)
        if graph.chain_exists(importer=module, imported=chat)
    ]
    assert circles == []
