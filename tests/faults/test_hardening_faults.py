"""The last two defects of issue 11, each as a fault case.

Text a UTF-8 request cannot carry (a lone surrogate from the model's own tool call) must
not wedge the session, and a symlink swapped into a path between its check and its
opening must not let a read tool leave the workspace.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings
from tests.e2e.conftest import run_cli
from tests.faults.conftest import (
    assert_history_intact,
    assert_no_secret_kept,
    assert_requests_valid,
    stored_messages,
)
from tests.support.links import (
    SECRET,
    file_swapped_for_a_link,
    folder_swapped_for_a_link,
    folder_with_a_secret,
    swap_after_the_check,
)
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.tools import run_tool, workspace_root

fault = pytest.mark.fault

# What a model's stream can hold: the JSON escape of half a surrogate pair, which decodes
# to a Python str that UTF-8 cannot encode.
LONE_SURROGATE_ARGUMENTS = '{"path": "outputs/note.txt", "content": "caf\\u00e9 \\ud800 end"}'


@fault(
    area="security",
    fault="The model's tool call carries a lone surrogate (\\ud800) in its arguments; the session goes on for two turns, then is resumed",
    outcome="The write is refused with a clear error and nothing is written; the request that follows carries U+FFFD in its place; the turn and two resumed ones answer, with the same history sent byte for byte.",
    found="every later request of the session failed to encode ('surrogates not allowed') and the session could not be resumed",
)
def test_a_lone_surrogate_in_a_tool_call_does_not_wedge_the_session(
    openai_server: ScriptedOpenAIServer, data_dir: Path, cli_env: dict[str, str], workdir: Path
) -> None:
    openai_server.add(
        Reply(tool_calls=[ToolCall("write_file", LONE_SURROGATE_ARGUMENTS)]),
        Reply(text="The write failed."),
    )
    first = run_cli(["-p", "write a note"], cli_env, workdir)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "The write failed.\n"
    assert not list(data_dir.glob("workspaces/*/outputs/note.txt"))

    for turn in ("second", "third"):
        openai_server.add(Reply(text=f"The {turn} answer."))
        later = run_cli(["-p", f"the {turn} question", "--resume"], cli_env, workdir)
        assert later.returncode == 0, later.stderr
        assert later.stdout == f"The {turn} answer.\n"

    requests = openai_server.chat_requests
    assert len(requests) == 4
    answer = next(m for m in requests[1].messages if m["role"] == "tool")
    assert "cannot be written as UTF-8" in answer["content"] and "nothing was written" in answer["content"]
    # The turn's own next request carries the call with U+FFFD where the surrogate was.
    call = next(m for m in requests[1].messages if m.get("tool_calls"))
    assert call["tool_calls"][0]["function"]["arguments"] == (
        '{"path": "outputs/note.txt", "content": "café \ufffd end"}'
    )
    # The same history gives the same bytes each turn: the cached prefix holds.
    # Each -p process stamps its own minute at the system message's foot: compared without it.
    system = [
        re.sub(r"<current_datetime>.*</current_datetime>", "", r.messages[0]["content"]) for r in requests[2:]
    ]
    assert system[0] == system[1]
    assert requests[3].messages[1 : len(requests[2].messages) - 1] == requests[2].messages[1:-1]

    stored = stored_messages(data_dir)
    assert [m.type for m in stored] == ["human", "ai", "tool", "ai"] * 1 + ["human", "ai"] * 2
    assert_history_intact(stored)
    assert_requests_valid(openai_server)
    assert_no_secret_kept(data_dir, first.stdout, first.stderr)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    return folder_with_a_secret(tmp_path)


@fault(
    area="security",
    fault="Between the path check and the opening, a folder of the path (or the file itself) is swapped for a symlink to a secret outside the workspace; read_file, then search_file",
    outcome="Neither reads the secret: the open finds the swap and answers 'the path changed while it was being opened ... nothing was read'; nothing of it is indexed; a symlink that stays inside the workspace still reads.",
    found="read_file and search_file opened the path again after the check and read (and indexed) the file outside",
)
@pytest.mark.parametrize("swapped", ["folder", "file"])
def test_a_symlink_swapped_in_after_the_check_does_not_read_outside(
    settings: Settings, outside: Path, monkeypatch: pytest.MonkeyPatch, swapped: str
) -> None:
    root = workspace_root(settings)
    (root / "uploads" / "kept.md").write_text("inside: kept\n", encoding="utf-8")
    (root / "uploads" / "inside-link.md").symlink_to(root / "uploads" / "kept.md")

    def swap_later(folder_name: str, name: str):
        folder = root / "uploads" / folder_name
        folder.mkdir()
        (folder / name).write_text(f"inside: {name}\n", encoding="utf-8")
        if swapped == "folder":
            return folder_swapped_for_a_link(folder, outside)
        return file_swapped_for_a_link(folder / name, outside / name)

    answers = []
    for tool, args in (
        ("read_file", {"path": "uploads/a/notes.md"}),
        ("search_file", {"file_path": "uploads/b/report.txt", "query": "SECRET"}),
    ):
        folder_name, name = Path(args.get("path") or args["file_path"]).parts[1:]
        with monkeypatch.context() as patch:
            swap_after_the_check(patch, swap_later(folder_name, name))
            answers.append(run_tool(settings, tool, args)[0])
    for text in answers:
        assert SECRET not in text
        assert "the path changed while it was being opened" in text and "nothing was read" in text
    indexes = settings.paths.indexes_db
    assert not indexes.exists() or b"TOP-SECRET" not in indexes.read_bytes()

    still, _ = run_tool(settings, "read_file", {"path": "uploads/inside-link.md"})
    assert "inside: kept" in still
