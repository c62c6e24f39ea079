"""`#` references in the real chat: they name what exists or stop the turn, never guess."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from tests.e2e.conftest import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.terminal import PROMPT, expect_prompt, plain

pytestmark = pytest.mark.e2e


def send_until(child: pexpect.spawn, line: str, until: str) -> str:
    child.sendline(line)
    child.expect(until)
    shown = plain(child.before + child.after)
    child.expect(PROMPT)
    return shown + plain(child.before)


def test_references_never_guess_and_take_the_names_terminals_write(
    openai_server: ScriptedOpenAIServer, spawn_chat, cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    (workdir / "docs").mkdir()
    (workdir / "docs" / "季度报告.md").write_text("# Q3\n营收增长 12%\n", encoding="utf-8")
    (workdir / "docs" / "年度计划.md").write_text("# 计划\n", encoding="utf-8")
    (workdir / "销售数据 2025.csv").write_text("月,额\n1,2\n", encoding="utf-8")
    (workdir / "my report.md").write_text("# report\n", encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.md").write_text("# notes\n", encoding="utf-8")
    openai_server.add(*(Reply(text=f"answer {n}.") for n in range(1, 6)))
    child = spawn_chat(env={**cli_env, "HOME": str(home)})
    expect_prompt(child)

    # A typo under an existing folder stops the turn with the close name, not the folder.
    shown = send_until(child, "总结 #docs/季度报告2.md", "did you mean")
    assert "#docs/季度报告2.md: no such file or folder (did you mean #docs/季度报告.md?)" in shown
    assert "📎" not in shown
    shown = send_until(child, "#/nonexist.pdf 看看", "no such file")
    assert "#/nonexist.pdf: no such file or folder" in shown and "not writable" not in shown
    shown = send_until(child, "分析 #销售数据 2025.csv", "must be quoted")
    assert '#销售数据 2025.csv: a name with spaces must be quoted: #"销售数据 2025.csv"' in shown
    assert openai_server.chat_requests == []  # none of them was sent

    shown = send_until(child, "看 #my\\ report.md", "answer 1")
    assert "📎 uploads/my report.md" in shown
    shown = send_until(child, f"#'{workdir}/销售数据 2025.csv' 汇总", "answer 2")  # dragged in
    assert "📎 uploads/销售数据 2025.csv" in shown
    shown = send_until(child, "＃docs/季度报告.md 和 #~/notes.md 对比", "answer 3")  # full-width ＃, ~
    assert "📎 uploads/季度报告.md" in shown and "📎 uploads/notes.md" in shown
    assert "年度计划" not in shown  # the file, not its folder
    shown = send_until(child, "／help", "/upload")
    assert "Unknown command" not in shown
    shown = send_until(child, '/upload "销售数据 2025.csv"', "📎")
    assert "no such file" not in shown
    send_until(child, "then this", "answer 4")
    assert len(openai_server.chat_requests) == 4
    child.sendeof()
    child.expect(pexpect.EOF)


def test_an_attached_name_with_a_line_break_stays_on_its_line(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path
) -> None:
    # A folder's file named "a\n✓ …" printed its 📎 line as two, the second one whatever the
    # name's author wrote (names come from the folder, a cloned repository's included).
    (workdir / "notes\n✓ Trusted nothing.md").write_text("# notes\n", encoding="utf-8")
    (workdir / "tab\tname.md").write_text("# tab\n", encoding="utf-8")
    openai_server.add(Reply(text="answer 1."))
    child = spawn_chat()
    expect_prompt(child)
    shown = send_until(child, "#notes* #tab* 看看", "answer 1")
    attached = [line for line in shown.splitlines() if "📎" in line]
    assert len(attached) == 2, shown
    assert "uploads/notes␤✓ Trusted nothing.md" in attached[0], attached
    assert "uploads/tab name.md" in attached[1], attached
    assert not any(line.startswith("✓ Trusted") for line in shown.splitlines()), shown
    child.sendeof()
    child.expect(pexpect.EOF)


def test_files_that_cannot_be_read_are_named_when_attached(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path
) -> None:
    """A corrupt PDF, a binary .txt, an empty DOCX and a garbage .xls were attached in
    silence; the user learnt of it only when the model failed to read them."""
    (workdir / "bad.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    (workdir / "bin.txt").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    (workdir / "empty.docx").write_bytes(b"")
    (workdir / "junk.xls").write_bytes(bytes(range(256)) * 16)
    (workdir / "fine.txt").write_text("季度报告\n", encoding="utf-8")
    openai_server.add(Reply(text="Read what I could."))
    result = run_cli(["-p", "look at #bad.pdf #bin.txt #empty.docx #junk.xls #fine.txt"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stderr.split())
    assert "bad.pdf was attached, but it is a damaged PDF that cannot be opened" in said, said
    assert "bin.txt was attached, but it holds binary data, not text" in said
    assert "empty.docx was attached, but the file is empty" in said
    assert "junk.xls was attached, but it is not a .xls file (unknown binary data)" in said
    assert "fine.txt was attached" not in said


def test_a_file_too_large_to_attach_says_nothing_was_sent(
    openai_server: ScriptedOpenAIServer, spawn_chat, workdir: Path
) -> None:
    """A typo said "Nothing was sent"; a file over the size limit only named the problem,
    and the user could not tell whether the message had gone."""
    with (workdir / "huge.log").open("wb") as stream:
        stream.truncate(21 * 1024 * 1024)  # over the 20 MB limit for text files (sparse)
    child = spawn_chat()
    expect_prompt(child)
    child.sendline("summarise #huge.log")
    child.expect("Nothing was sent")
    shown = plain(child.before)
    assert "over the 20 MB limit" in shown, shown
    expect_prompt(child)
    assert openai_server.chat_requests == []
    child.sendeof()
    child.expect(pexpect.EOF)
