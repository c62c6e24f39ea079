"""The terminal UI in Chinese, as a user runs the commands: help, doctor, -p, index, kb and mcp
speak Chinese with UI_LANGUAGE=zh (or a Chinese locale) and English otherwise."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from generalAgent.config.trust import TrustStore
from tests.e2e.conftest import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.terminal import ask, expect_prompt

pytestmark = pytest.mark.e2e


def chinese(env: dict[str, str]) -> dict[str, str]:
    return {**env, "UI_LANGUAGE": "zh"}


def test_help_follows_the_language_and_keeps_option_names(workdir: Path, cli_env: dict[str, str]) -> None:
    zh = run_cli(["-h"], chinese(cli_env), workdir)
    en = run_cli(["-h"], cli_env, workdir)
    assert "与助手对话" in zh.stdout and "--resume" in zh.stdout and "--prompt" in zh.stdout
    assert "Chat with the agent" in en.stdout and "与助手对话" not in en.stdout
    kb_help = run_cli(["kb", "-h"], {**cli_env, "LANG": "zh_CN.UTF-8"}, workdir)  # the locale alone
    assert "知识库：添加、搜索、列出、查看、删除。" in kb_help.stdout


def test_doctor_reports_in_chinese(workdir: Path, cli_env: dict[str, str]) -> None:
    zh = run_cli(["doctor", "--offline"], chinese(cli_env), workdir)
    en = run_cli(["doctor", "--offline"], cli_env, workdir)
    assert "✓ 配置  已读取" in zh.stdout and "✓ MCP  没有配置 MCP 服务器" in zh.stdout
    assert "✓ 数据目录" in zh.stdout and "检查通过" in zh.stdout
    assert "✓ configuration" in en.stdout and "✓ data directory" in en.stdout
    assert "配置" not in en.stdout
    assert zh.returncode == en.returncode


def test_a_missing_file_stops_the_prompt_in_chinese(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    result = run_cli(["-p", "看看 #报告/第三季度.pdf，里面讲了什么？"], chinese(cli_env), workdir)
    assert result.returncode == 2
    assert "#报告/第三季度.pdf：没有这个文件或文件夹" in result.stderr
    assert '未发送任何内容。请检查名称；含空格的名称请加引号：#"my report.pdf"。' in result.stderr
    assert openai_server.chat_requests == []


def test_command_errors_in_chinese_and_english(workdir: Path, cli_env: dict[str, str]) -> None:
    cases = [
        (
            ["kb", "add"],
            "请给出 FILE 或 --content（配合 --title），二选一。",
            "Give either a FILE or --content",
        ),
        (["index"], "无事可做：请给出要索引的文件或文件夹", "Nothing to do: give files or folders"),
        (
            ["kb", "search", "发布", "--sort", "size"],
            "--sort 只能是 relevance、date 或 title。",
            "--sort must be",
        ),
    ]
    for args, in_chinese, in_english in cases:
        zh = run_cli(args, chinese(cli_env), workdir)
        en = run_cli(args, cli_env, workdir)
        assert zh.returncode == en.returncode == 2, args
        assert in_chinese in zh.stderr, (args, zh.stderr)
        assert in_english in en.stderr and in_chinese not in en.stderr, (args, en.stderr)


def test_mcp_list_in_chinese(workdir: Path, cli_env: dict[str, str]) -> None:
    empty = run_cli(["mcp", "list"], chinese(cli_env), workdir)
    assert "没有配置 MCP 服务器。添加方法：" in empty.stdout
    added = run_cli(
        ["mcp", "add", "notes", "--disabled", "--", "python", "notes.py"], chinese(cli_env), workdir
    )
    assert added.returncode == 0 and "已把 notes 加入" in added.stdout and "@提及" in added.stdout
    assert "trust" in added.stdout and "This folder" not in added.stdout  # not trusted yet: says how
    TrustStore().remember(workdir, True)
    listed = run_cli(["mcp", "list"], chinese(cli_env), workdir)
    assert "服务器" in listed.stdout and "@notes 时" in listed.stdout and "询问" in listed.stdout
    english = run_cli(["mcp", "list"], {**cli_env, "UI_LANGUAGE": "en", "LANG": "zh_CN.UTF-8"}, workdir)
    assert "on @notes" in english.stdout and "asks" in english.stdout and "询问" not in english.stdout


def test_usage_errors_follow_a_chinese_locale(workdir: Path, cli_env: dict[str, str]) -> None:
    """Typer's own usage errors (English, without gettext: its copy of Click's words, or
    pydantic's from Typer 0.29) come through the catalog (cli/help_page.py): the option
    names stay as typed, the exit code stays 2."""
    shell = {k: v for k, v in cli_env.items() if k not in ("LC_ALL", "LC_MESSAGES", "UI_LANGUAGE")}
    locale = {**shell, "LANG": "zh_CN.UTF-8"}  # the locale alone
    cases = [
        (["--bogus"], "没有这个选项：--bogus", "No such option"),
        (["index", "--stat"], "没有这个选项：--stat（可能是这些选项：--stats）", "Possible options"),
        (["index", "--days", "x"], "'--days' 的值无效：", "Invalid value"),
        (["index", "--days", "x"], "整数", "Input should"),
        (["trust", "a", "b"], "多出了参数（b）", "unexpected extra"),
    ]
    for args, in_chinese, english in cases:
        zh = run_cli(args, locale, workdir)
        assert zh.returncode == 2, (args, zh.stderr)
        assert in_chinese in zh.stderr and english not in zh.stderr, (args, zh.stderr)
        assert "用法：" in zh.stderr and "错误" in zh.stderr
    en = run_cli(["--bogus"], {**shell, "LANG": "C.UTF-8"}, workdir)
    assert en.returncode == 2 and "No such option: --bogus" in en.stderr and "没有" not in en.stderr


def test_index_reports_each_file_in_the_language_of_the_ui(workdir: Path, cli_env: dict[str, str]) -> None:
    # Each file's line was English in a Chinese UI ("1 chunks, 21 chars, 0.01s", "unchanged").
    (workdir / "笔记.md").write_text("# 笔记\n讨论了第四季度的营收目标。\n", encoding="utf-8")
    zh = run_cli(["index", "笔记.md"], chinese(cli_env), workdir)
    again = run_cli(["index", "笔记.md"], chinese(cli_env), workdir)
    assert zh.returncode == 0 and again.returncode == 0, zh.stderr + again.stderr

    def joined(text: str) -> str:  # a long line may wrap at any space
        return "".join(text.split())

    assert "笔记.md：1个片段，" in joined(zh.stderr) and "chunk" not in zh.stderr, zh.stderr
    assert "笔记.md：未变" in joined(again.stderr) and "unchanged" not in again.stderr, again.stderr
    en = run_cli(["index", "笔记.md", "--force"], cli_env, workdir)
    assert "笔记.md:1chunk," in joined(en.stderr), en.stderr


def test_what_reading_left_out_is_said_in_chinese_by_the_index_command(
    workdir: Path, cli_env: dict[str, str]
) -> None:
    # The yellow line under a file was English in a Chinese UI: "OCR read 1 of its 2 pages
    # without a text layer; page 2 was not read (...)", "... text with damage: ...".
    from tests.support.documents import make_long_scan

    make_long_scan(workdir / "扫描件.pdf", 2, ["Invoice number 4711", "Paid in March."])
    (workdir / "日志.md").write_bytes("# 日志\n本季度营收增长。\n".encode() + b"\xff broken\n")
    env = {**chinese(cli_env), "COLUMNS": "200", "OCR_MAX_PAGES_PER_DOCUMENT": "1"}

    def joined(text: str) -> str:  # a long line may wrap at any space
        return "".join(text.split())

    zh = run_cli(["index", "扫描件.pdf", "日志.md"], env, workdir, timeout=300)
    assert zh.returncode == 0, zh.stderr
    said = joined(zh.stderr)
    assert "OCR识别了它2个无文字层页面中的1个；第2页未读取" in said, zh.stderr
    assert "OCR_MAX_PAGES_PER_DOCUMENT=1" in said, zh.stderr
    assert "日志.md是utf-8文本，有损坏：1处无效字节序列已替换为U+FFFD（第一处在第3行）" in said, zh.stderr
    assert "not read" not in zh.stderr and "with damage" not in zh.stderr, zh.stderr
    scripted = run_cli(["index", "扫描件.pdf", "日志.md", "--json", "--force"], env, workdir, timeout=300)
    notes = [r.get("notes", "") for r in json.loads(scripted.stdout)["files"]]  # scripts keep the English
    assert "page 2 was not read (limit OCR_MAX_PAGES_PER_DOCUMENT=1;" in notes[0], scripted.stdout
    assert "1 invalid byte sequence was replaced by U+FFFD (the first on line 3)" in notes[1], notes


def test_a_search_of_the_whole_index_names_no_folder_in_either_language(
    workdir: Path, cli_env: dict[str, str]
) -> None:
    # `search --all` said "索引 下 1 个文档中，…" ("… documents under the index for …"), its
    # --json "folder" in the UI language; and a usage error "错误: 缺少参数 'arguments'.".
    (workdir / "笔记.md").write_text("# 笔记\n本季度营收增长。\n", encoding="utf-8")
    env = {**chinese(cli_env), "COLUMNS": "200"}
    assert run_cli(["index", "笔记.md"], env, workdir).returncode == 0
    zh = run_cli(["search", "--all", "营收"], env, workdir)
    assert zh.returncode == 0, zh.stderr
    assert (
        '已索引的 1 个文档中，有 1 个文档共 1 个段落匹配 "营收"：' in zh.stdout and "索引 下" not in zh.stdout
    )
    none = run_cli(["search", "--all", "火箭"], env, workdir)
    assert '已索引的 1 个文档中没有段落匹配 "火箭"。' in none.stdout, none.stdout
    scripted = run_cli(["search", "--all", "营收", "--json"], env, workdir)
    assert json.loads(scripted.stdout)["folder"] == "the index"
    en = run_cli(["search", "--all", "营收"], {**cli_env, "COLUMNS": "200"}, workdir)
    assert '1 passage in 1 of 1 indexed documents for "营收":' in en.stdout, en.stdout
    missing = run_cli(["search"], env, workdir)
    assert missing.returncode == 2 and "错误：缺少参数 'arguments'。" in missing.stderr, missing.stderr


def test_the_first_message_of_a_newcomer_without_a_model_is_in_chinese(
    workdir: Path, cli_env: dict[str, str]
) -> None:
    # The guidance was English in a Chinese locale, only its last line Chinese.
    unset = {k: v for k, v in cli_env.items() if k not in {"MODEL_NAME", "OPENAI_API_KEY", "OPENAI_BASE_URL"}}
    zh = run_cli(["-p", "你好"], {**unset, "LANG": "zh_CN.UTF-8"}, workdir)
    en = run_cli(["-p", "hello"], unset, workdir)
    assert zh.returncode == en.returncode == 2
    assert "未配置模型：请在 .env 或环境变量中设置 MODEL_NAME 和 OPENAI_API_KEY" in zh.stderr, zh.stderr
    assert "OpenAI 示例" in zh.stderr and "MODEL_NAME=gpt-4.1-mini" in zh.stderr
    assert "No model configured" not in zh.stderr and "Example for" not in zh.stderr, zh.stderr
    assert "No model configured: set MODEL_NAME and OPENAI_API_KEY" in en.stderr, en.stderr
    assert "未配置" not in en.stderr


def test_search_names_pages_and_sheet_rows_in_chinese(workdir: Path, cli_env: dict[str, str]) -> None:
    # A Chinese UI said "page 2" and "sheet 营收, rows 2–3" for where each passage is.
    from tests.support.documents import make_pdf, make_xlsx

    make_pdf(workdir / "季度报告.pdf", [["第一页 概述"], ["营收部分：本季度营收为 1,234 万元。"]])
    make_xlsx(workdir / "明细.xlsx", {"营收": [["地区", "营收"], ["华东", 555], ["华南", 370]]})
    env = {**chinese(cli_env), "COLUMNS": "200"}
    pdf = run_cli(["search", "季度报告.pdf", "营收"], env, workdir)
    assert pdf.returncode == 0, pdf.stderr
    assert " 1 第 2 页" in pdf.stdout and "page 2" not in pdf.stdout, pdf.stdout
    sheet = run_cli(["search", "明细.xlsx", "华东"], env, workdir)
    assert sheet.returncode == 0, sheet.stderr
    assert "工作表 营收，第 2" in sheet.stdout and "sheet 营收" not in sheet.stdout, sheet.stdout
    en = run_cli(["search", "季度报告.pdf", "营收"], {**cli_env, "COLUMNS": "200"}, workdir)
    assert " 1 page 2" in en.stdout, en.stdout


def test_unreadable_documents_are_named_in_chinese(workdir: Path, cli_env: dict[str, str]) -> None:
    # index, search and kb add said "空白.pdf is empty (0 bytes)." in a Chinese UI.
    folder = workdir / "资料"
    folder.mkdir()
    (folder / "空白.pdf").write_bytes(b"")
    (folder / "损坏.xlsx").write_bytes(b"PK\x03\x04 not a workbook")
    (folder / "笔记.md").write_text("# 笔记\n本季度营收增长。\n", encoding="utf-8")
    env = {**chinese(cli_env), "COLUMNS": "200"}

    def joined(text: str) -> str:  # a long line may wrap at any space
        return "".join(text.split())

    index = run_cli(["index", "资料"], env, workdir)
    assert index.returncode == 1, index.stderr
    assert "✗空白.pdf是空文件（0字节）。" in joined(index.stderr), index.stderr
    assert "✗损坏.xlsx不是有效的.xlsx文件（已损坏，或是改了扩展名的其他格式）。" in joined(index.stderr)
    assert "is empty" not in index.stderr and "not a valid" not in index.stderr, index.stderr
    scripted = run_cli(["index", "资料", "--json", "--force"], env, workdir)  # scripts keep the English
    assert "空白.pdf is empty (0 bytes)." in scripted.stdout, scripted.stdout

    found = run_cli(["search", "资料", "营收"], env, workdir)
    assert found.returncode == 0, found.stderr
    assert "✗ 空白.pdf 是空文件（0 字节）。" in found.stdout and "is empty" not in found.stdout, found.stdout
    one = run_cli(["search", "资料/损坏.xlsx", "营收"], env, workdir)
    assert one.returncode == 1
    assert "无法搜索资料/损坏.xlsx：损坏.xlsx不是有效的.xlsx文件" in joined(one.stderr), one.stderr
    added = run_cli(["kb", "add", "资料/空白.pdf"], env, workdir)
    assert added.returncode == 1 and "空白.pdf 是空文件（0 字节）。" in added.stderr, added.stderr

    en = run_cli(["index", "资料"], {**cli_env, "COLUMNS": "200"}, workdir)
    assert "✗ 空白.pdf is empty (0 bytes)." in en.stderr and "空文件" not in en.stderr, en.stderr


def test_binary_data_piped_to_a_prompt_is_one_line_in_chinese(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    # It was a DocumentError traceback, in English.
    piped = workdir / "data.bin"
    piped.write_bytes(b"\x00\x01\xff\xfe\x00binary")
    with piped.open("rb") as stdin:
        result = subprocess.run(
            [sys.executable, "-m", "generalAgent", "-p", "看看这个"],
            env=chinese(cli_env),
            cwd=workdir,
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert result.returncode == 2, result.stderr
    assert "stdin 是二进制文件，不是文本" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert openai_server.chat_requests == []


def joined(text: str) -> str:
    """The text with its line breaks and spaces gone: rich wraps long lines at any space."""
    return "".join(text.split())


def test_a_tool_error_is_shown_in_chinese_while_the_model_reads_english(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    # The failed call's line was the model's English ("Error: nothere.txt does not exist.").
    openai_server.add(
        Reply(
            tool_calls=[
                ToolCall("read_file", {"path": "outputs/nothere.txt"}),
                ToolCall("now", {"timezone": "Mars/Base"}),
            ]
        ),
        Reply(text="好的"),
    )
    result = run_cli(["-p", "读一下 nothere.txt"], {**cli_env, "LANG": "zh_CN.UTF-8"}, workdir)
    assert result.returncode == 0, result.stderr
    shown = joined(result.stderr)
    assert "错误：outputs/nothere.txt不存在。list_workspace_files会显示有哪些文件。" in shown, result.stderr
    assert "错误：未知时区'Mars/Base'。" in shown, result.stderr
    assert "does not exist" not in result.stderr and "unknown time zone" not in result.stderr
    answers = [m["content"] for m in openai_server.chat_requests[1].messages if m["role"] == "tool"]
    assert (
        answers[0] == "Error: outputs/nothere.txt does not exist. list_workspace_files shows what is there."
    )
    assert answers[1].startswith("Error: unknown time zone 'Mars/Base'. Use an IANA name")


def test_kb_show_says_its_fields_and_counts_in_chinese(workdir: Path, cli_env: dict[str, str]) -> None:
    # "id: … | 1 chunks | source: … | updated …" and "chunk 0 (§ …)" were English.
    (workdir / "报销.md").write_text("# 报销制度\n\n差旅报销需要部门经理审批。\n", encoding="utf-8")
    zh = chinese(cli_env)
    added = run_cli(["kb", "add", "报销.md", "--json"], zh, workdir)
    assert added.returncode == 0, added.stderr
    item = json.loads(added.stdout)["id"]
    whole = run_cli(["kb", "show", item[:8]], zh, workdir)
    chunks = run_cli(["kb", "show", item[:8], "--chunks", "0:1"], zh, workdir)
    assert whole.returncode == chunks.returncode == 0, whole.stderr + chunks.stderr
    assert "1 个片段" in whole.stdout and "来源：" in whole.stdout and "更新于" in whole.stdout
    assert "第 0 个片段 (§ 报销制度)" in chunks.stdout
    for english in ("chunks", "source:", "updated", "chunk 0"):
        assert english not in whole.stdout + chunks.stdout, english
    unknown = run_cli(["kb", "show", "ffffffff"], zh, workdir)
    assert unknown.returncode != 0
    assert "没有以'ffffffff'开头的知识条目id；kblist会列出它们。" in joined(unknown.stderr), unknown.stderr
    english = run_cli(["kb", "show", item[:8]], cli_env, workdir)
    assert "1 chunk |" in english.stdout and "source: " in english.stdout


def test_an_invalid_setting_is_said_in_chinese(workdir: Path, cli_env: dict[str, str]) -> None:
    # "Invalid setting MAX_MESSAGE_HISTORY='5': Input should be …" was English in a Chinese locale.
    # `config show` says it under its table (stdout); the other commands stop on it (stderr).
    locale = {**cli_env, "LANG": "zh_CN.UTF-8", "MAX_MESSAGE_HISTORY": "5"}
    for args in (["config", "show"], ["doctor", "--offline"], ["-p", "hi"]):
        result = run_cli(args, locale, workdir)
        said = result.stdout + result.stderr
        assert result.returncode == 2, (args, said)
        assert "设置无效MAX_MESSAGE_HISTORY='5'：应大于或等于10（允许：10..100）" in joined(said), (
            args,
            said,
        )
        assert "Invalid setting" not in said and "Input should" not in said
    choice = run_cli(["config", "show"], {**locale, "MAX_MESSAGE_HISTORY": "40", "SANDBOX": "maybe"}, workdir)
    said = choice.stdout + choice.stderr
    assert "设置无效SANDBOX='maybe'：应为允许的值之一（允许：auto,required,off）" in joined(said), said
    english = run_cli(["config", "show"], {**locale, "LANG": "C.UTF-8"}, workdir)
    assert (
        "Invalid setting MAX_MESSAGE_HISTORY='5': Input should be greater than or equal to 10"
        in english.stdout + english.stderr
    )


def test_models_list_names_languages_in_chinese(workdir: Path, cli_env: dict[str, str]) -> None:
    result = run_cli(["models", "list"], chinese(cli_env), workdir)
    assert result.returncode == 0, result.stderr
    shown = joined(result.stdout)
    assert "101种语言（由bge-m3蒸馏）" in shown and "英文" in shown
    assert "languages" not in result.stdout and "English" not in result.stdout


def test_a_failed_pull_says_why_in_chinese(workdir: Path, cli_env: dict[str, str]) -> None:
    unreachable = {**chinese(cli_env), "HF_ENDPOINT": "http://127.0.0.1:9"}
    result = run_cli(["models", "pull", "potion-base-8M"], unreachable, workdir)
    assert result.returncode != 0
    assert "下载失败：无法连接http://127.0.0.1:9（ConnectError）；请检查HF_ENDPOINT" in joined(result.stderr)
    assert "cannot reach" not in result.stderr


def test_tools_skills_and_agents_speak_chinese_in_the_chat(spawn_chat, cli_env: dict[str, str]) -> None:
    # The risk column (low/medium/high), the built-in skills' and agents' descriptions and
    # the /agents tool list were English in a Chinese chat.
    child = spawn_chat(env={**cli_env, "LANG": "zh_CN.UTF-8"})
    expect_prompt(child)
    tools = ask(child, "/tools", "MCP")
    assert re.search(r"read_file\s+核心\s+低", tools) and re.search(r"run_bash_command\s+@提及\s+高", tools)
    assert re.search(r"\b(low|medium|high)\b", tools) is None, tools
    skills = joined(ask(child, "/skills", "@skill-creator[^\r\n]*"))
    assert "@pdf处理PDF文件时使用" in skills and "Use for PDF files" not in skills, skills
    agents = joined(ask(child, "/agents", "@researcher[^\r\n]*\r?\n[^\r\n]*"))
    assert "@agent通用子智能体" in agents and "@researcher阅读并搜索" in agents, agents
    assert "General-purpose" not in agents
    child.sendline("/quit")
    child.expect(pexpect.EOF)


def test_doctor_names_a_broken_skill_in_chinese(
    workdir: Path, cli_env: dict[str, str], tmp_path: Path
) -> None:
    # "…/SKILL.md: 'name' must be lowercase letters, digits and hyphens; skill skipped" was English.
    skills = tmp_path / "skills"
    (skills / "bad").mkdir(parents=True)
    (skills / "bad" / "SKILL.md").write_text("---\nname: Bad\ndescription: x\n---\nbody\n", encoding="utf-8")
    (skills / "empty").mkdir()
    result = run_cli(["doctor", "--offline"], {**chinese(cli_env), "SKILLS_DIR": str(skills)}, workdir)
    shown = joined(result.stdout)
    assert "bad/SKILL.md：'name'只能由小写字母、数字和连字符组成；跳过此技能" in shown, result.stdout
    assert "empty/SKILL.md：缺失；该文件夹不是技能" in shown, result.stdout
    assert "skill skipped" not in result.stdout and "must be lowercase" not in result.stdout


def test_configuration_errors_a_newcomer_meets_are_said_in_chinese(
    workdir: Path, cli_env: dict[str, str], tmp_path: Path
) -> None:
    # Found by running the CLI under LANG=zh_CN.UTF-8 (issue 37): each of these was English.
    zh = {**cli_env, "LANG": "zh_CN.UTF-8"}
    (workdir / "报销.md").write_text("# 报销制度\n\n差旅报销需要部门经理审批。\n", encoding="utf-8")
    regex = run_cli(["search", "--regex", "报销.md", "["], zh, workdir)
    assert regex.returncode != 0
    assert "无法搜索报销.md：正则表达式无效（" in joined(regex.stderr), regex.stderr
    assert "Cannot search" not in regex.stderr and "invalid regular" not in regex.stderr

    mcp_json = Path(cli_env["GENERALAGENT_CONFIG_DIR"]) / "mcp.json"
    mcp_json.write_text('{"mcpServers": {"a": {"command": "x"}}', encoding="utf-8")
    for args in (["mcp", "list"], ["doctor", "--offline"]):
        said = run_cli(args, zh, workdir)
        assert "mcp.json：不是有效的JSON（" in joined(said.stdout + said.stderr), (args, said)
        assert "not valid JSON" not in said.stdout + said.stderr
    mcp_json.unlink()

    tools = tmp_path / "tools.yaml"
    tools.write_text("core:\n  read_file: {}\n", encoding="utf-8")
    doctor = run_cli(["doctor", "--offline"], {**zh, "TOOLS_CONFIG": str(tools)}, workdir)
    assert "✗工具与技能tools.yaml第2行" in joined(doctor.stdout), doctor.stdout
    assert "tools_and_skills" not in doctor.stdout and "ToolConfigError" not in doctor.stdout
    outside = tmp_path / "conf" / "tools.yaml"
    outside.parent.mkdir()
    outside.symlink_to(tools)
    linked = run_cli(["-p", "hi"], {**zh, "TOOLS_CONFIG": str(outside)}, workdir)
    assert linked.returncode != 0
    assert "之外（符号链接）；请让TOOLS_CONFIG直接指向该文件本身" in joined(linked.stderr), linked.stderr
    assert "leads outside" not in linked.stderr


def test_a_skill_linked_out_of_its_folder_is_named_in_chinese(
    workdir: Path, cli_env: dict[str, str], tmp_path: Path
) -> None:
    skills = tmp_path / "skills"
    (skills / "stolen").mkdir(parents=True)
    (skills / "stolen" / "SKILL.md").symlink_to(tmp_path / "secret.txt")
    (tmp_path / "secret.txt").write_text("PRIVATE", encoding="utf-8")
    result = run_cli(["doctor", "--offline"], {**chinese(cli_env), "SKILLS_DIR": str(skills)}, workdir)
    assert f"stolen/SKILL.md通向{skills}之外（符号链接）；跳过此技能" in joined(result.stdout), result.stdout
    assert "leads outside" not in result.stdout


def test_an_mcp_server_that_cannot_start_is_named_in_chinese(workdir: Path, cli_env: dict[str, str]) -> None:
    # "cannot run 'x': no such program (check 'command' and PATH)" and "the process exited"
    # were English in doctor, /mcp and the chat's warning; the model's sentence stays English.
    mcp_json = Path(cli_env["GENERALAGENT_CONFIG_DIR"]) / "mcp.json"
    servers = {
        "gone": {"command": "no-such-program-37"},
        "dies": {
            "command": sys.executable,
            "args": ["-c", "import sys; print('oops', file=sys.stderr); sys.exit(3)"],
        },
    }
    mcp_json.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    zh = {**cli_env, "LANG": "zh_CN.UTF-8"}
    doctor = joined(run_cli(["doctor", "--offline"], zh, workdir).stdout)
    assert "无法运行'no-such-program-37'：没有这个程序（请检查'command'和PATH）" in doctor, doctor
    assert "进程已退出（oops）" in doctor, doctor
    assert "no such program" not in doctor and "process exited" not in doctor
    english = run_cli(["doctor", "--offline"], cli_env, workdir).stdout
    assert "cannot run 'no-such-program-37': no such program (check 'command' and PATH)" in english


def test_why_embeddings_failed_is_said_in_chinese(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    # `generalagent index` said "生成向量失败（the endpoint refused EMBEDDING_MODEL=… (HTTP 401)）"
    # and `kb search` "Semantic search is off for this session (…)": the reason was English.
    zh = {**cli_env, "LANG": "zh_CN.UTF-8", "EMBEDDING_MODEL": "test-embed", "EMBEDDING_BATCH_SIZE": "2"}
    (workdir / "报销.md").write_text("# 报销制度\n\n差旅报销需要部门经理审批。\n", encoding="utf-8")
    refused = run_cli(["index", "报销.md"], {**zh, "EMBEDDING_BASE_URL": "http://127.0.0.1:9/v1"}, workdir)
    assert refused.returncode == 0, refused.stderr
    assert "生成向量失败（向量接口无应答（连接被拒绝；请检查EMBEDDING_BASE_URL））" in joined(
        refused.stderr
    ), refused.stderr
    assert "nothing answers" not in refused.stderr and "connection refused" not in refused.stderr

    openai_server.embedding_failures = [401]
    rejected = run_cli(["index", "报销.md"], zh, workdir)
    assert "接口拒绝了EMBEDDING_MODEL=test-embed（HTTP401）" in joined(rejected.stderr), rejected.stderr
    assert "refused" not in rejected.stderr

    assert run_cli(["kb", "add", "报销.md"], zh, workdir).returncode == 0
    openai_server.embedding_failures = [401]  # the query's embedding (a 401 is not asked again)
    found = run_cli(["kb", "search", "报销"], zh, workdir)
    assert found.returncode == 0, found.stderr
    assert "本会话的语义检索已关闭（接口拒绝了EMBEDDING_MODEL=test-embed（HTTP401））" in joined(
        found.stdout
    ), found.stdout
    assert "Semantic search is off" not in found.stdout


def test_semantic_search_off_is_said_in_chinese_by_the_search_command(
    openai_server: ScriptedOpenAIServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    # `generalagent search` said nothing when the query could not be embedded, and the model's
    # note put the English reason ("Semantic search is off (the endpoint refused …)") in the
    # FileSearch a person's view is drawn from.
    zh = {**cli_env, "LANG": "zh_CN.UTF-8", "EMBEDDING_MODEL": "test-embed"}
    (workdir / "报销.md").write_text("# 报销制度\n\n差旅报销需要部门经理审批。\n", encoding="utf-8")
    assert run_cli(["index", "报销.md"], zh, workdir).returncode == 0
    said = "语义检索已关闭（接口拒绝了EMBEDDING_MODEL=test-embed（HTTP401））；关键词检索照常可用。"
    for target in (["报销.md"], ["--all"]):
        openai_server.embedding_failures = [401]  # the query's embedding (a 401 is not asked again)
        found = run_cli(["search", *target, "报销"], zh, workdir)
        assert found.returncode == 0, found.stderr
        assert said in joined(found.stdout), found.stdout
        assert "Semantic search is off" not in found.stdout and "refused" not in found.stdout
    openai_server.embedding_failures = [401]
    as_json = json.loads(run_cli(["search", "报销.md", "报销", "--json"], zh, workdir).stdout)
    assert as_json["warning"] == (
        "Semantic search is off (the endpoint refused EMBEDDING_MODEL=test-embed (HTTP 401)); "
        "keyword search still works."
    )
