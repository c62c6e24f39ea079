"""One data home: an older `./data` moves into it once, with its sessions, indexes and
knowledge; attachments stay their session's; `kb delete` asks. Through the real CLI."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from generalAgent.config.sources import user_data_dir
from tests.e2e.conftest import run_cli
from tests.support.openai_server import ScriptedOpenAIServer

pytestmark = pytest.mark.e2e


def without_data_dir(env: dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in env.items() if key != "DATA_DIR"}


def test_an_older_folder_store_moves_into_the_data_home_once_losing_nothing(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    # What an older version made: ./data beside a folder .env, with a session, an indexed
    # document and a knowledge item in it.
    (workdir / ".env").write_text("LOG_LEVEL=INFO\n", encoding="utf-8")
    (workdir / "notes.txt").write_text("The harbour crane inspection is due in March.\n", encoding="utf-8")
    old = {**cli_env, "DATA_DIR": str(workdir / "data")}
    assert run_cli(["trust"], old, workdir).returncode == 0
    assert run_cli(["-p", "hi", "--save"], old, workdir).returncode == 0
    assert run_cli(["index", "notes.txt"], old, workdir).returncode == 0
    added = run_cli(
        ["kb", "add", "--title", "Crane", "--content", "Cranes are inspected yearly."], old, workdir
    )
    assert added.returncode == 0, added.stderr
    assert (workdir / "data" / "sessions.db").is_file() and (workdir / "data" / "indexes.db").is_file()

    env = without_data_dir(cli_env)  # today: no DATA_DIR anywhere, so the data home
    home = user_data_dir()
    listed = run_cli(["kb", "list"], env, workdir)
    assert listed.returncode == 0, listed.stderr
    assert (
        f"Moved this folder's data (sessions, indexes, knowledge base) from {workdir / 'data'}"
        in " ".join(listed.stderr.split())
    )
    assert "Crane" in listed.stdout
    assert not (workdir / "data").exists()  # moved, not copied: one place
    with sqlite3.connect(home / "sessions.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM chat_sessions").fetchone()[0] == 1
    found = run_cli(["search", "notes.txt", "crane"], env, workdir)
    assert found.returncode == 0 and "inspection" in found.stdout
    again = run_cli(["kb", "list"], env, workdir)
    assert "Moved" not in again.stderr  # once


def test_what_the_home_already_has_is_kept_and_the_folder_copy_set_aside(
    workdir: Path, cli_env: dict[str, str]
) -> None:
    home = user_data_dir()
    home.mkdir(parents=True)
    (home / "input_history").write_text("home line\n", encoding="utf-8")
    (workdir / ".env").write_text("LOG_LEVEL=INFO\n", encoding="utf-8")
    (workdir / "data" / "workspaces" / "abc").mkdir(parents=True)
    (workdir / "data" / "workspaces" / "abc" / "kept.txt").write_text("x", encoding="utf-8")
    (workdir / "data" / "input_history").write_text("folder line\n", encoding="utf-8")
    with sqlite3.connect(workdir / "data" / "indexes.db") as conn:
        conn.execute("CREATE TABLE marker (x)")
    env = without_data_dir(cli_env)
    assert run_cli(["trust"], env, workdir).returncode == 0
    result = run_cli(["kb", "list"], env, workdir)
    assert result.returncode == 0, result.stderr
    assert (home / "input_history").read_text(encoding="utf-8") == "home line\n"
    aside = next((home / "imported").iterdir())
    assert (aside / "input_history").read_text(encoding="utf-8") == "folder line\n"
    assert str(aside) in " ".join(result.stderr.split())
    assert (home / "workspaces" / "abc" / "kept.txt").is_file()


def test_an_untrusted_folder_keeps_its_store_and_the_commands_say_it_is_ignored(
    workdir: Path, cli_env: dict[str, str]
) -> None:
    (workdir / ".env").write_text("LOG_LEVEL=INFO\n", encoding="utf-8")
    (workdir / "data").mkdir()
    (workdir / "data" / "sessions.db").write_bytes(b"")
    env = without_data_dir(cli_env)
    for args in (["kb", "list"], ["index", "."], ["search", ".", "x"]):
        result = run_cli(args, env, workdir)
        ignored = [line for line in result.stderr.splitlines() if "not trusted" in line]
        assert len(ignored) == 1 and ".env" in ignored[0] and "trust" in ignored[0], (args, result.stderr)
    assert (workdir / "data" / "sessions.db").is_file()  # not taken before the user trusts it


def test_kb_delete_asks_and_a_script_needs_yes(workdir: Path, cli_env: dict[str, str]) -> None:
    added = run_cli(["kb", "add", "--title", "Note", "--content", "Keep me.", "--json"], cli_env, workdir)
    item = __import__("json").loads(added.stdout)["id"]
    refused = run_cli(["kb", "delete", item], cli_env, workdir)
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert "Note" in run_cli(["kb", "list"], cli_env, workdir).stdout
    deleted = run_cli(["kb", "delete", item, "--yes"], cli_env, workdir)
    assert deleted.returncode == 0 and "Deleted" in deleted.stdout
    assert "Note" not in run_cli(["kb", "list"], cli_env, workdir).stdout
