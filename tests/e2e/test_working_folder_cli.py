"""The working folder read in place, through the real CLI: a document next to the user is
read by its relative name once the folder is trusted, and not before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
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
