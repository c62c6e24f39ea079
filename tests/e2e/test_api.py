"""The Python API (generalAgent.agent, docs/api.md) against the local OpenAI-compatible server.

The example that opens docs/api.md runs exactly as written, in a fresh interpreter with
the model settings in its environment: it prints the answer, and the terminal front end
(`generalAgent.cli`) is never imported. A second program answers approvals, sees the
files a command wrote beside those the file tools wrote, and the calls it refused.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
# Run after the example, in the same interpreter: which modules of the terminal it loaded.
CLI_MODULES = (
    "\nimport json as _json, sys as _sys\n"
    "_sys.stderr.write('CLI-MODULES ' + _json.dumps(sorted(m for m in _sys.modules "
    "if m == 'generalAgent.cli' or m.startswith('generalAgent.cli.'))) + '\\n')\n"
)


def first_example() -> str:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    found = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    assert found is not None, "docs/api.md opens with a Python example"
    return found.group(1)


def run_program(code: str, env: dict[str, str], folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`code` run as a program of its own (`sys.argv[1:]` are `args`) in `folder`."""
    return subprocess.run(
        [sys.executable, "-c", code, *args], env=env, cwd=folder, capture_output=True, text=True, timeout=300
    )


def test_the_example_of_docs_api_md_runs_a_turn_without_the_terminal(
    cli_env: dict[str, str], workdir: Path
) -> None:
    example = first_example()
    assert "Agent.from_environment()" in example and "print(turn.answer)" in example
    with ScriptedOpenAIServer() as server:
        server.add(Reply(text="A cache of the attention keys and values of the tokens already read."))
        env = {**cli_env, "OPENAI_BASE_URL": server.base_url}
        done = run_program(example + CLI_MODULES, env, workdir)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "A cache of the attention keys and values of the tokens already read.\n"
        (request,) = server.chat_requests
        assert "what is a KV cache?" in json.dumps(request.messages, ensure_ascii=False)
    loaded = json.loads(done.stderr.split("CLI-MODULES ", 1)[1].splitlines()[0])
    assert loaded == []


PROGRAM = """
import json
from generalAgent.agent import Agent

asked = []

def approve(request):
    asked.append(request["tool"])
    return "yes" if "echo" in request["args"].get("command", "") else "no"

with Agent.from_environment() as agent:
    session = agent.open_session(approve=approve)
    first = session.send("@run_bash_command make the two files")
    second = session.send("@run_bash_command now delete them")
    print(json.dumps({
        "asked": asked,
        "answers": [first.answer, second.answer],
        "files": [str(p) for p in first.files_written],
        "calls": [(c.name, c.is_error) for c in first.tool_calls],
        "refused": [list(first.refused_tools), list(second.refused_tools)],
        "second_calls": [(c.name, c.is_error, c.result[:40]) for c in second.tool_calls],
        "usage_calls": first.usage.model_calls,
        "cost": first.cost,
        "session": session.id,
    }))
"""


def test_a_program_answers_approvals_and_gets_every_file_written(
    cli_env: dict[str, str], workdir: Path
) -> None:
    with ScriptedOpenAIServer() as server:
        server.add(
            Reply(
                tool_calls=[
                    ToolCall("write_file", {"path": "outputs/by-tool.md", "content": "# tool"}),
                    ToolCall("run_bash_command", {"command": "echo made > outputs/by-command.txt"}),
                ]
            ),
            Reply(text="Both made."),
            Reply(tool_calls=[ToolCall("run_bash_command", {"command": "rm outputs/*"})]),
            Reply(text="Not deleted."),
        )
        env = {**cli_env, "OPENAI_BASE_URL": server.base_url}
        done = run_program(PROGRAM, env, workdir)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["answers"] == ["Both made.", "Not deleted."]
    assert report["asked"] == ["run_bash_command", "run_bash_command"]
    names = sorted(Path(path).name for path in report["files"])
    assert names == ["by-command.txt", "by-tool.md"]  # the command's file too
    assert all(Path(path).is_file() for path in report["files"])  # the rm was refused
    assert sorted(report["calls"]) == [["run_bash_command", False], ["write_file", False]]
    assert report["refused"] == [[], ["run_bash_command"]]
    ((name, is_error, result),) = report["second_calls"]
    assert name == "run_bash_command" and is_error and "refused" in result
    assert report["usage_calls"] == 2 and report["cost"] is None


REWIND_PROGRAM = """
import json
from generalAgent.agent import Agent

with Agent.from_environment() as agent:
    session = agent.open_session(approve=lambda request: "yes")
    session.send("把 notes.md 里的 v1 改成 v2，再写 outputs/new.md")
    session.send("谢谢")
    back_one = session.rewind(-1, files=False)
    after_one = [turn.text for turn in session.turns()]
    notes_after_one = open("notes.md", encoding="utf-8").read()
    back_all = session.rewind(0, files=True, delete_created=True)
    left = session.turns()
    again = session.send("重新开始")
    print(json.dumps({
        "back_one": [back_one.dropped, back_one.turn.text, list(back_one.restored)],
        "after_one": after_one,
        "notes_after_one": notes_after_one,
        "back_all": [back_all.dropped, back_all.turn.text],
        "restored": [p.rsplit("/", 1)[-1] for p in back_all.restored],
        "deleted": [p.rsplit("/", 1)[-1] for p in back_all.deleted],
        "left": len(left),
        "again": again.answer,
    }, ensure_ascii=False))
"""


def test_a_program_rewinds_a_session_with_and_without_its_files(
    cli_env: dict[str, str], workdir: Path
) -> None:
    """Session.rewind through the API: the conversation goes back (the next request no
    longer carries the dropped messages), the files only when asked, and the program never
    loads the terminal front end."""
    from tests.support.mcp_config import trust_folder

    (workdir / "notes.md").write_text("版本 v1\n", encoding="utf-8")
    trust_folder(workdir)
    with ScriptedOpenAIServer() as server:
        server.add(
            Reply(
                tool_calls=[
                    ToolCall("edit_file", {"path": "notes.md", "old_string": "v1", "new_string": "v2"}),
                    ToolCall("write_file", {"path": "outputs/new.md", "content": "# new"}),
                ]
            ),
            Reply(text="改好了。"),
            Reply(text="不客气。"),
            Reply(text="好的，从头开始。"),
        )
        env = {**cli_env, "OPENAI_BASE_URL": server.base_url}
        done = run_program(REWIND_PROGRAM + CLI_MODULES, env, workdir)
        last = server.chat_requests[-1]
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["back_one"] == [1, "谢谢", []]
    assert report["after_one"] == ["把 notes.md 里的 v1 改成 v2，再写 outputs/new.md"]
    assert report["notes_after_one"] == "版本 v2\n"  # files=False: the file stays as the agent left it
    assert report["back_all"] == [1, "把 notes.md 里的 v1 改成 v2，再写 outputs/new.md"]
    assert report["restored"] == ["notes.md"] and report["deleted"] == ["new.md"]
    assert report["left"] == 0 and report["again"] == "好的，从头开始。"
    assert (workdir / "notes.md").read_text(encoding="utf-8") == "版本 v1\n"
    sent = json.dumps(last.messages, ensure_ascii=False)
    assert "重新开始" in sent and "v2" not in sent and "谢谢" not in sent
    loaded = json.loads(done.stderr.split("CLI-MODULES ", 1)[1].splitlines()[0])
    assert loaded == []


FOLDERS_PROGRAM = """
import json, sys
from generalAgent.agent import Agent

with Agent.from_environment() as agent:
    results = {}
    for name in ("trusted", "stranger"):
        turn = agent.open_session(sys.argv[1] + "/" + name).send("读 notes.md")
        results[name] = [c.result for c in turn.tool_calls]
    print(json.dumps(results, ensure_ascii=False))
"""


def test_a_program_session_reads_the_folder_it_was_opened_for_once_trusted(
    cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    """`open_session(folder)` works in that folder, not the program's: `notes.md` is the
    trusted folder's own; a folder nobody decided about is not read."""
    from tests.support.mcp_config import trust_folder

    for name, text in (("trusted", "信任的笔记"), ("stranger", "陌生的笔记")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "notes.md").write_text(text + "\n", encoding="utf-8")
    (workdir / "notes.md").write_text("程序所在文件夹\n", encoding="utf-8")
    trust_folder(workdir)
    trust_folder(tmp_path / "trusted")
    with ScriptedOpenAIServer() as server:
        for _ in range(2):
            server.add(Reply(tool_calls=[ToolCall("read_file", {"path": "notes.md"})]), Reply(text="读了。"))
        env = {**cli_env, "OPENAI_BASE_URL": server.base_url}
        done = run_program(FOLDERS_PROGRAM, env, workdir, str(tmp_path))
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert "信任的笔记" in results["trusted"][0]
    assert "not trusted" in results["stranger"][0]
    assert all("程序所在文件夹" not in result for result in results["trusted"] + results["stranger"])


CONFIGURATION_PROGRAM = """
import sys
from generalAgent.agent import Agent

with Agent.from_environment() as agent:
    for name in ("home", "other", "stranger"):
        folder = None if name == "home" else sys.argv[1] + "/" + name
        session = agent.open_session(folder)
        print(name, session.send(f"[{name}] 你好").answer)
        session.close()
"""


def test_a_program_session_runs_on_the_configuration_of_its_own_folder(
    cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    """A session opened for another trusted folder gets that folder's AGENTS.md (its .env,
    mcp.json and skills likewise: the agent of its configuration), not the program's
    folder's; a folder nobody decided about gets the user's configuration alone. Before,
    every session ran on the configuration of the folder the agent was loaded in."""
    from tests.support.mcp_config import trust_folder

    markers = {"home": "RULE-HOME-8801", "other": "RULE-OTHER-8802", "stranger": "RULE-STRANGER-8803"}
    folders = {"home": workdir, "other": tmp_path / "other", "stranger": tmp_path / "stranger"}
    for name, folder in folders.items():
        folder.mkdir(exist_ok=True)
        (folder / "AGENTS.md").write_text(markers[name] + "\n", encoding="utf-8")
    trust_folder(workdir)
    trust_folder(folders["other"])
    with ScriptedOpenAIServer() as server:
        for _ in folders:
            server.add(Reply(text="好。"))
        env = {**cli_env, "OPENAI_BASE_URL": server.base_url}
        done = run_program(CONFIGURATION_PROGRAM, env, workdir, str(tmp_path))
        assert done.returncode == 0, done.stderr
        systems = {}
        for request in server.chat_requests:
            said = json.dumps(request.messages, ensure_ascii=False)
            name = next(name for name in folders if f"[{name}]" in said)
            systems[name] = " ".join(
                str(m.get("content")) for m in request.messages if m.get("role") == "system"
            )
    assert markers["home"] in systems["home"]
    assert markers["other"] in systems["other"] and markers["home"] not in systems["other"]
    assert not any(marker in systems["stranger"] for marker in markers.values())
