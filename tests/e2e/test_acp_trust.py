"""An editor session in a folder nobody decided about asks the user through the editor.

The folder carries an AGENTS.md, a PreToolUse hook and a file to read. The first session's
question is cancelled: nothing of the folder is used (the instructions do not reach the
model, the hook does not run, the file is not read) and nothing is remembered. A second
session asks again, is trusted: the answer lands in the terminal's trust store, and from
that prompt on the instructions reach the model, the hook runs and the file is read in
place. A new server then asks nothing. A "do not trust" is remembered as well, and a later
session of that folder neither asks nor reads.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.support.acp_editor import EditorClient, spawn
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e

MARKER = "RULE-7731: every answer ends with 喵"
NOTES = "季度目标：营收增长 12%。\n"


class TrustEditor(EditorClient):
    """Answers the folder-trust question from `trust_answers`, every other request "allow-once"."""

    def __init__(self, trust_answers: list[str | None]) -> None:
        super().__init__()
        self.trust_answers = trust_answers
        self.trust_asked: list[tuple[str, Any, list[str]]] = []

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any):
        ids = [option.option_id for option in options]
        if "trust-folder" in ids:
            self.trust_asked.append((session_id, tool_call, ids))
            self.answers = [self.trust_answers.pop(0)]
        else:
            self.answers = ["allow-once"]
        return await super().request_permission(options, session_id, tool_call, **kwargs)


def project(workdir: Path) -> Path:
    """A folder with instructions, a hook on read_file and notes; the hook's log path."""
    (workdir / "AGENTS.md").write_text(MARKER + "\n", encoding="utf-8")
    (workdir / "notes.txt").write_text(NOTES, encoding="utf-8")
    log = workdir / "hook.log"  # inside the folder: a folder's hooks run in the sandbox
    hooks = {
        "PreToolUse": [{"matcher": "read_file", "hooks": [{"type": "command", "command": f"cat >> {log}"}]}]
    }
    (workdir / ".generalagent").mkdir()
    (workdir / ".generalagent" / "settings.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    return log


def script_reads(server: ScriptedOpenAIServer, times: int) -> None:
    for _ in range(times):
        server.add(Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]), Reply(text="好的。"))


async def prompt_sessions(env: dict[str, str], workdir: Path, client: TrustEditor, count: int) -> list[str]:
    """`count` sessions in `workdir`, one prompt each, one after another; their ids."""
    ids = []
    async with spawn(env, workdir, client) as (conn, _process):
        await conn.initialize(protocol_version=1)
        for _ in range(count):
            session = await conn.new_session(cwd=str(workdir), mcp_servers=[])
            reply = await conn.prompt(session_id=session.session_id, prompt=[text_block("看看 notes.txt")])
            assert reply.stop_reason == "end_turn"
            ids.append(session.session_id)
    return ids


def system_text(request: Any) -> str:
    return "\n".join(str(m.get("content")) for m in request.messages if m.get("role") == "system")


def read_results(client: EditorClient) -> list[str]:
    return [
        u.raw_output or ""
        for u in client.of_kind("tool_call_update")
        if u.tool_call_id
        and not u.tool_call_id.startswith("folder-trust-")
        and u.status in ("completed", "failed")
    ]


def test_an_editor_session_asks_about_its_folder_and_uses_it_only_once_trusted(
    cli_env: dict[str, str], workdir: Path
) -> None:
    from generalAgent.config.trust import TrustStore

    log = project(workdir)
    client = TrustEditor([None, "trust-folder"])  # the first question cancelled, the second trusted
    with ScriptedOpenAIServer() as server:
        script_reads(server, 2)
        env = {**cli_env, "OPENAI_BASE_URL": server.base_url}
        first, second = asyncio.run(prompt_sessions(env, workdir, client, 2))
        requests = server.chat_requests

    # Each session asked once, through the editor, naming the folder and what it carries.
    assert [asked[0] for asked in client.trust_asked] == [first, second]
    _session, question, options = client.trust_asked[0]
    assert options == ["trust-folder", "do-not-trust-folder"]
    assert str(workdir.resolve()) in question.title
    assert "AGENTS.md" in question.content[0].content.text

    # Cancelled: nothing of the folder was used, and nothing was remembered for it...
    before, after = read_results(client)
    assert MARKER not in system_text(requests[0]) and MARKER not in system_text(requests[1])
    assert "not trusted" in before and "营收增长" not in before
    # ...trusted: remembered as the terminal remembers it, and used from that prompt on.
    assert TrustStore().decision(workdir) is True
    assert MARKER in system_text(requests[2])
    assert "营收增长" in after
    ran = [json.loads(line)["session_id"] for line in log.read_text(encoding="utf-8").splitlines()]
    assert ran == [second]

    # A new server remembers: no question, the folder's files are read.
    again = TrustEditor([])
    with ScriptedOpenAIServer() as server:
        script_reads(server, 1)
        asyncio.run(prompt_sessions({**cli_env, "OPENAI_BASE_URL": server.base_url}, workdir, again, 1))
        assert MARKER in system_text(server.chat_requests[0])
    assert again.trust_asked == []
    assert "营收增长" in read_results(again)[0]


def test_a_folder_the_editor_user_does_not_trust_stays_ignored_and_is_not_asked_again(
    cli_env: dict[str, str], workdir: Path
) -> None:
    from generalAgent.config.trust import TrustStore

    log = project(workdir)
    client = TrustEditor(["do-not-trust-folder"])
    with ScriptedOpenAIServer() as server:
        script_reads(server, 2)
        env = {**cli_env, "OPENAI_BASE_URL": server.base_url}
        asyncio.run(prompt_sessions(env, workdir, client, 2))
        requests = server.chat_requests
    assert len(client.trust_asked) == 1  # the second session was not asked: the answer is kept
    assert TrustStore().decision(workdir) is False
    assert all(MARKER not in system_text(request) for request in requests)
    assert all("not trusted" in result and "营收增长" not in result for result in read_results(client))
    assert not log.exists()
