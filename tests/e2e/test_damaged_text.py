"""A text file with a few bad bytes is read, with one line saying where they were.

One truncated UTF-8 character (a copy cut short) or one line pasted from a GBK file used to
make read_file and search_file refuse the whole file ("not text in an encoding generalAgent
knows"), on every retry. Now the bad bytes are replaced by U+FFFD and the tool result says
how many and on which line the first is; the rest reads normally.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

pytestmark = pytest.mark.e2e

LINES = [f"第{n}行：报销审批流程需要部门经理签字，金额超过五千元需要财务总监复核。" for n in range(1, 51)]


def damaged_files(folder: Path) -> dict[str, Path]:
    good = "\n".join(LINES).encode("utf-8")
    cut = folder / "cut.txt"  # one character cut short, then the text goes on
    cut.write_bytes(good + b"\n\xe6\x8a\n" + "第52行：出差补贴按天计算。\n".encode())
    gbk = folder / "gbk.txt"  # one line pasted from a GBK file
    gbk.write_bytes(
        good + b"\n" + "旧系统导出的一行".encode("gbk") + "\n第52行：出差补贴按天计算。\n".encode()
    )
    return {"cut": cut, "gbk": gbk}


@pytest.mark.parametrize("kind", ["cut", "gbk"])
def test_read_file_and_search_file_read_a_file_with_bad_bytes_and_say_where(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str], kind: str
) -> None:
    path = damaged_files(workdir)[kind]
    upload = f"uploads/{path.name}"
    openai_server.add(
        Reply(
            tool_calls=[
                ToolCall("read_file", {"path": upload}),
                ToolCall("search_file", {"file_path": upload, "query": "出差补贴"}),
            ]
        ),
        Reply(text="出差补贴按天计算。"),
    )
    result = run_cli(["-p", f"出差补贴怎么算？#{path.name}"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    read, searched = [m["content"] for m in openai_server.chat_requests[1].messages if m["role"] == "tool"]
    for answer in (read, searched):
        assert "not text in an encoding" not in answer and "Error" not in answer, answer
        assert "line 51" in answer and "replaced by U+FFFD" in answer, answer
        assert "utf-8" in answer
    assert "第52行：出差补贴按天计算。" in read and "第1行：报销审批" in read
    assert "出差补贴" in searched
