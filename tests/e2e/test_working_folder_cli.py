"""The working folder read in place, through the real CLI: a document next to the user is
read by its relative name once the folder is trusted, and not before."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from tests.e2e.conftest import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import expect_prompt, plain
from tests.unit.documents.builders import make_docx

pytestmark = pytest.mark.e2e


@pytest.fixture
def report(workdir: Path) -> Path:
    return make_docx(
        workdir / "季度报告.docx",
        "2025 年第三季度报告",
        ["本季度营收增长百分之十二，华东地区贡献最大。"],
        [["地区", "营收"], ["华东", "120"], ["华南", "80"]],
    )


def tool_answer(server: ScriptedOpenAIServer) -> str:
    message = server.chat_requests[1].messages[-1]
    assert message["role"] == "tool"
    return str(message["content"])


def test_a_document_next_to_the_user_is_read_in_place_once_trusted(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], report: Path
) -> None:
    trusted = run_cli(["trust"], cli_env, workdir)
    assert trusted.returncode == 0, trusted.stderr
    openai_server.add(
        Reply(tool_calls=[ToolCall("read_file", {"path": "季度报告.docx"})]),
        Reply(text="本季度营收增长 12%，华东贡献最大。"),
    )
    result = run_cli(["-p", "总结季度报告.docx"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "本季度营收增长 12%，华东贡献最大。\n"
    answer = tool_answer(openai_server)
    assert "季度报告.docx (preview" in answer and "百分之十二" in answer and "华东" in answer
    system = openai_server.chat_requests[0].messages[0]["content"]
    assert "working folder" in system and str(workdir) not in system  # static text, no path
    assert not (workdir / "uploads").exists()  # read in place, not copied


def test_an_untrusted_folder_is_not_read_and_the_model_learns_how_to_trust_it(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], report: Path
) -> None:
    openai_server.add(
        Reply(tool_calls=[ToolCall("read_file", {"path": "季度报告.docx"})]),
        Reply(text="这个文件夹还没有被信任。"),
    )
    result = run_cli(["-p", "总结季度报告.docx"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    answer = tool_answer(openai_server)
    assert "not trusted" in answer and "generalagent trust" in answer and "#季度报告.docx" in answer
    assert "百分之十二" not in answer


def test_add_dir_folders_are_read_by_absolute_path(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], tmp_path: Path
) -> None:
    extra = tmp_path / "资料"
    extra.mkdir()
    (extra / "名单.txt").write_text("张三\n李四\n", encoding="utf-8")
    openai_server.add(
        Reply(tool_calls=[ToolCall("read_file", {"path": str(extra / "名单.txt")})]),
        Reply(text="两个人。"),
    )
    result = run_cli(["-p", "名单里有几个人？", "--add-dir", str(extra)], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    answer = tool_answer(openai_server)
    assert "李四" in answer and "lines 1-2 of 2" in answer
    missing = run_cli(["-p", "x", "--add-dir", str(tmp_path / "nowhere")], cli_env, workdir)
    assert missing.returncode == 2 and "no such folder" in missing.stderr


def test_summary_md_is_written_next_to_the_document_after_the_diff_is_approved(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path, cli_env: dict[str, str], report: Path
) -> None:
    assert run_cli(["trust"], cli_env, workdir).returncode == 0
    summary = "# 季度报告摘要\n\n- 营收增长 12%\n- 华东贡献最大\n"
    openai_server.add(
        Reply(tool_calls=[ToolCall("read_file", {"path": "季度报告.docx"})]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "summary.md", "content": summary})]),
        Reply(text="摘要已写入 summary.md。"),
        Reply(
            tool_calls=[
                ToolCall("edit_file", {"path": "summary.md", "old_string": "12%", "new_string": "十二"})
            ]
        ),
        Reply(text="好的，没有改。"),
    )
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("总结季度报告.docx，写到 summary.md")
    child.expect("Approve write_file")
    child.expect(r"\[a\]lways")
    question = plain(child.before)
    assert f"creates {workdir.resolve() / 'summary.md'} in your folder" in " ".join(question.split())
    assert "+++ b/summary.md" in question and "+- 营收增长 12%" in question
    child.sendline("y")
    child.expect("摘要已写入")
    child.expect("Files written")
    expect_prompt(child)
    listed = plain(child.before).replace("\n", "")  # a long path wraps at the terminal's width
    assert str(workdir.resolve() / "summary.md") in listed
    assert (workdir / "summary.md").read_text(encoding="utf-8") == summary
    assert "百分之十二" in str(openai_server.chat_requests[1].messages[-1]["content"])
    child.sendline("把 12% 改成十二")
    child.expect("Approve edit_file")
    child.expect(r"\[a\]lways")
    question = plain(child.before)
    assert "-- 营收增长 12%" in question and "+- 营收增长 十二" in question
    child.sendline("n")
    child.expect("没有改")
    expect_prompt(child)
    assert (workdir / "summary.md").read_text(encoding="utf-8") == summary  # refused: unchanged
    assert openai_server.chat_requests[4].messages[-1]["content"].startswith("Error: refused by the user")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    farewell = plain(child.before).replace("\n", "")
    assert "Files written (1)" in farewell and str(workdir.resolve() / "summary.md") in farewell


def test_p_refuses_a_write_in_the_folder_it_cannot_ask_about_and_names_what_it_wrote(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    assert run_cli(["trust"], cli_env, workdir).returncode == 0
    openai_server.add(
        Reply(
            tool_calls=[
                ToolCall("write_file", {"path": "summary.md", "content": "x\n"}),
                ToolCall("write_file", {"path": "outputs/notes.md", "content": "y\n"}),
            ]
        ),
        Reply(text="done"),
    )
    result = run_cli(["-p", "写摘要"], cli_env, workdir)
    assert result.returncode == 3, result.stderr  # answered, but a tool it needed was refused
    assert not (workdir / "summary.md").exists()
    assert "cannot ask; refused" in result.stderr
    written = [line.strip() for line in result.stderr.splitlines() if line.strip().endswith("notes.md")]
    assert len(written) == 1 and Path(written[0]).is_file() and written[0].endswith("outputs/notes.md")
    assert Path(written[0]).read_text(encoding="utf-8") == "y\n"
