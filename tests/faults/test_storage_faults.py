"""Storage faults: concurrent indexing of one file, a read-only or full data directory.

Read-only and full directories are real mounts (a read-only bind, a tiny tmpfs) made in a
private mount namespace for the CLI alone (`in_mount_namespace`), so they need neither
root nor cleanup; the data directory they hide is only visible to commands run inside.
"""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from tests.faults.conftest import (
    ROOT,
    assert_history_intact,
    assert_requests_valid,
    in_mount_namespace,
    stored_messages,
)
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import expect_prompt, plain

fault = pytest.mark.fault
CLI = [sys.executable, "-m", "generalAgent"]
READ_ONLY = 'mount --bind "$DATA_DIR" "$DATA_DIR" && mount -o remount,bind,ro "$DATA_DIR"'
FULL = 'mount -t tmpfs -o size=64k tmpfs "$DATA_DIR" && { head -c 1000000 /dev/zero > "$DATA_DIR/filler" 2>/dev/null; true; }'


def write_document(path: Path, sections: int = 600) -> None:
    rng = random.Random(7)
    words = [
        "营收",
        "增长",
        "客户",
        "季度",
        "报告",
        "利润",
        "成本",
        "revenue",
        "growth",
        "customer",
        "quarter",
        "margin",
    ]
    with path.open("w", encoding="utf-8") as out:
        for number in range(sections):
            out.write(
                f"## 第{number}节 Section {number}\n"
                + " ".join(rng.choice(words) for _ in range(60))
                + "\n\n"
            )


def index_health(db: Path) -> dict[str, object]:
    conn = sqlite3.connect(db)
    try:
        return {
            "integrity": conn.execute("PRAGMA integrity_check").fetchone()[0],
            "documents": conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0],
            "chunks": conn.execute(
                "SELECT COUNT(*) FROM chunks WHERE item_id IN (SELECT item_id FROM documents)"
            ).fetchone()[0],
            "declared": conn.execute("SELECT COALESCE(SUM(total_chunks), 0) FROM documents").fetchone()[0],
            # every chunk has its FTS row, and no document item is left without its documents row
            "fts_missing": conn.execute(
                "SELECT COUNT(*) FROM chunks WHERE rowid NOT IN (SELECT rowid FROM chunks_fts)"
            ).fetchone()[0],
            "orphan_items": conn.execute(
                "SELECT COUNT(*) FROM items WHERE domain = 'documents' AND id NOT IN (SELECT item_id FROM documents)"
            ).fetchone()[0],
        }
    finally:
        conn.close()


def start_cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [*CLI, *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,  # nothing piped: -p does not wait for the test runner's stdin
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@fault(
    area="storage",
    fault="Two processes index the same file into the same database at once (3 rounds, fresh database each)",
    found="the second writer left a duplicate, unreferenced item with all its chunks, so knowledge search found every passage twice",
    outcome="Both exit 0 with no error; the index holds one document whose chunks and FTS rows agree; PRAGMA integrity_check is ok.",
)
def test_two_indexers_on_one_file(workdir: Path, cli_env: dict[str, str], tmp_path: Path) -> None:
    write_document(workdir / "report.md")
    for round_number in range(3):
        env = {**cli_env, "DATA_DIR": str(tmp_path / f"data-{round_number}")}
        first = start_cli(["index", "report.md", "--json"], env, workdir)
        second = start_cli(["index", "report.md", "--json"], env, workdir)
        for process in (first, second):
            out, err = process.communicate(timeout=120)
            assert process.returncode == 0, err
            assert "Traceback" not in err and "locked" not in err.lower()
            (report,) = json.loads(out)["files"]
            assert report["status"] in {"indexed", "unchanged"}, report
        health = index_health(tmp_path / f"data-{round_number}" / "indexes.db")
        assert health["integrity"] == "ok"
        assert health["documents"] == 1 and health["orphan_items"] == 0, health
        assert health["chunks"] == health["declared"] > 100 and health["fts_missing"] == 0, health


@fault(
    area="storage",
    fault="The agent indexes a file (search_file in -p) while `generalagent index` indexes the same content",
    outcome="The answer arrives, the indexer exits 0, the index holds one document and passes integrity_check; the history is intact.",
)
def test_agent_and_indexer_on_one_file(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], data_dir: Path
) -> None:
    write_document(workdir / "report.md")
    openai_server.add(
        Reply(tool_calls=[ToolCall("search_file", {"file_path": "uploads/report.md", "query": "营收 增长"})]),
        Reply(text="Revenue grew."),
    )
    indexer = start_cli(["index", "report.md", "--json"], cli_env, workdir)
    agent = start_cli(["-p", "What does #report.md say about 营收?"], cli_env, workdir)
    agent_out, agent_err = agent.communicate(timeout=120)
    _, indexer_err = indexer.communicate(timeout=120)
    assert agent.returncode == 0, agent_err
    assert agent_out == "Revenue grew.\n"
    assert indexer.returncode == 0, indexer_err
    search_answer = openai_server.chat_requests[1].messages[-1]["content"]
    assert "营收" in search_answer and "Error" not in search_answer[:20]
    health = index_health(data_dir / "indexes.db")
    assert health["integrity"] == "ok" and health["documents"] == 1 and health["orphan_items"] == 0, health
    assert health["chunks"] == health["declared"] and health["fts_missing"] == 0, health
    assert_history_intact(stored_messages(data_dir))
    assert_requests_valid(openai_server)


@fault(
    area="storage",
    fault="Read-only data directory (read-only mount)",
    found="a SQLite traceback (unable to open database file) before the prompt",
    outcome="-p and the chat stop before anything runs with one line: the data directory is not writable (Read-only file system), set DATA_DIR; exit 2; doctor marks it ✗.",
)
def test_read_only_data_dir(
    mounts, openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], data_dir: Path
) -> None:
    for args in (["-p", "hello"], [], ["doctor", "--offline"]):
        result = subprocess.run(
            in_mount_namespace(READ_ONLY, [*CLI, *args]),
            env=cli_env,
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        shown = result.stdout + result.stderr
        assert f"data directory {data_dir} is not writable (Read-only file system)" in " ".join(shown.split())
        assert "Traceback" not in shown
        assert result.returncode == (1 if args[:1] == ["doctor"] else 2), shown
    assert list(data_dir.iterdir()) == []
    assert openai_server.chat_requests == []


@fault(
    area="storage",
    fault="Full data directory at start (a 64 KB tmpfs, already full)",
    found="a SQLite traceback (database or disk is full) before the prompt",
    outcome="-p and the chat stop with one line: no space left for the data directory, free some space or set DATA_DIR; exit 2; no request is sent.",
)
def test_full_data_dir_at_start(
    mounts, openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], data_dir: Path
) -> None:
    for args in (["-p", "hello"], []):
        result = subprocess.run(
            in_mount_namespace(FULL, [*CLI, *args]),
            env=cli_env,
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        shown = " ".join((result.stdout + result.stderr).split())
        assert f"No space left for the data directory {data_dir}" in shown
        assert "set DATA_DIR to another disk" in shown and "Traceback" not in shown
        assert result.returncode == 2, shown
    assert openai_server.chat_requests == []


@fault(
    area="storage",
    fault="The disk fills during a turn (an approved command fills a 1 MB data directory), then space is freed and the session resumed",
    found="the turn ended in 'Unexpected error: OperationalError'",
    outcome="The turn ends with one line (no space left for the data directory) and the chat stays usable; after freeing space --resume answers, the unfinished call is answered, the history is intact.",
)
def test_disk_fills_during_a_turn(
    mounts, openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], data_dir: Path
) -> None:
    openai_server.add(
        Reply(text="Ready."),
        Reply(
            tool_calls=[
                ToolCall("run_bash_command", {"command": "head -c 50000000 /dev/zero > outputs/fill.bin"})
            ]
        ),
        Reply(text="The command filled the disk."),  # streamed, but its checkpoint cannot be written
        Reply(text="Continuing after the disk was freed."),
    )
    python = sys.executable
    script = " ; ".join(
        [
            f"{python} -m generalAgent",
            'rm -f "$DATA_DIR"/workspaces/*/outputs/fill.bin',
            f'{python} -m generalAgent -p "go on" --resume',
            f'cd {ROOT} && {python} -m tests.faults.history_probe "$DATA_DIR"',
        ]
    )
    argv = in_mount_namespace('mount -t tmpfs -o size=1m tmpfs "$DATA_DIR"', ["sh", "-c", script])
    child = pexpect.spawn(
        argv[0], argv[1:], env=cli_env, cwd=str(workdir), encoding="utf-8", timeout=60, dimensions=(50, 200)
    )
    try:
        expect_prompt(child)
        child.sendline("hello")
        child.expect("Ready")
        expect_prompt(child)
        child.sendline("@run_bash_command fill the disk")
        child.expect(r"\[a\]lways")
        child.sendline("y")
        child.expect("No space left for the data directory")
        child.expect("/retry sends it again")
        shown = plain(child.before)
        expect_prompt(child)
        child.sendline("/quit")
        child.expect("Continuing after the disk was freed")
        child.expect(r"HISTORY (\{.*\})\r?\n")
        probe = json.loads(child.match.group(1))
        child.expect(pexpect.EOF)
    finally:
        if child.isalive():
            child.terminate(force=True)
    assert "Traceback" not in shown
    assert probe["problems"] == [], probe
    assert probe["kinds"][-4:] == ["ai", "tool", "human", "ai"]
    assert probe["contents"][-3].startswith("Not run: the previous session stopped")
    assert_requests_valid(openai_server)
