"""Hooks (generalAgent/hooks.py): the settings.json shape other agents use, matchers, real
commands with the event on stdin, exit 2 blocking, timeouts killing the process group, and the
approver key honoured only in the user-level file."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage

from generalAgent import i18n
from generalAgent.config.settings import Settings, load_settings
from generalAgent.config.trust import FolderTrust
from generalAgent.hooks import Hook, HookResult, HookSet, load_hooks, matcher_matches, parse_hooks
from tests.support.agent import build_test_agent, thread, user_turn
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

PY = sys.executable


@pytest.mark.parametrize(
    ("matcher", "name", "expected"),
    [
        ("run_bash_command", "run_bash_command", True),
        ("run_bash_command", "run_bash", False),
        ("run_bash_command", "Run_bash_command", False),  # case-sensitive, as documented
        ("write_file|edit_file", "edit_file", True),
        ("write_file|edit_file", "read_file", False),
        ("", "anything", True),
        ("*", "anything", True),
        ("files__.*", "files__read", True),
        (".*_file", "write_file", True),
        (".*_file", "write_file_x", False),  # the whole name
    ],
)
def test_matchers_follow_claude_codes_rules(matcher: str, name: str, expected: bool) -> None:
    assert matcher_matches(matcher, name) is expected


def test_parse_takes_the_usual_shape_and_reports_what_is_wrong(tmp_path: Path) -> None:
    data = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "run_bash_command",
                    "hooks": [{"type": "command", "command": "guard", "timeout": 10, "approver": True}],
                }
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "notify"}]}],
            "OnLunch": [{"hooks": [{"command": "x"}]}],
            "PostToolUse": [{"matcher": "(", "hooks": [{"command": "y"}]}],
            "UserPromptSubmit": [{"hooks": [{"command": "z", "timeout": "soon"}]}],
        }
    }
    hooks, problems = parse_hooks(data, tmp_path / "settings.json", user_level=True)
    assert [(h.event, h.matcher, h.command, h.timeout, h.approver) for h in hooks] == [
        ("PreToolUse", "run_bash_command", "guard", 10.0, True),
        ("Stop", "", "notify", 60.0, False),
    ]
    said = " ".join(p.english() for p in problems)
    assert "unknown event 'OnLunch'" in said
    assert "not a valid pattern" in said
    assert "'timeout' must be a number of seconds above 0, not 'soon'" in said
    # The same file in a project folder: no hook answers for the user.
    folder_hooks, _ = parse_hooks(data, tmp_path / "settings.json", user_level=False)
    assert not any(h.approver for h in folder_hooks)


def test_a_bad_matcher_says_why_and_where_in_the_ui_language(tmp_path: Path) -> None:
    data = {"hooks": {"PreToolUse": [{"matcher": "(run_bash", "hooks": [{"command": "y"}]}]}}
    i18n.use_language("zh")
    try:
        _, problems = parse_hooks(data, tmp_path / "settings.json", user_level=True)
        (shown,) = [p.said().shown(i18n._, i18n.ngettext) for p in problems]
    finally:
        i18n.use_language("en")
    # Python's "missing ), unterminated subpattern at position 0", in Chinese, the place kept.
    assert "缺少 )，子模式没有结束，位置 0" in shown, shown
    assert "unterminated" not in shown and "position" not in shown
    _, problems = parse_hooks(data, tmp_path / "settings.json", user_level=True)
    assert "(missing ), unterminated subpattern at position 0)" in problems[0].english()


def test_the_event_arrives_on_stdin_and_exit_2_blocks_with_stderr(tmp_path: Path) -> None:
    log = tmp_path / "event.json"
    script = tmp_path / "guard.py"
    script.write_text(
        "import json, sys\n"
        "event = json.load(sys.stdin)\n"
        f"open({str(log)!r}, 'w').write(json.dumps(event))\n"
        "if 'rm -rf' in event['tool_input']['command']:\n"
        "    print('rm -rf is not allowed here; delete the files one by one', file=sys.stderr)\n"
        "    sys.exit(2)\n"
    )
    hook = Hook("PreToolUse", f"{PY} {script}", tmp_path / "settings.json", "run_bash_command")
    hooks = HookSet((hook,), cwd=tmp_path)
    blocked = hooks.run(
        "PreToolUse",
        {"tool_name": "run_bash_command", "tool_input": {"command": "rm -rf /"}},
        "run_bash_command",
    )
    assert blocked.blocked and blocked.reason == "rm -rf is not allowed here; delete the files one by one"
    event = json.loads(log.read_text())
    assert event["hook_event_name"] == "PreToolUse" and event["cwd"] == str(tmp_path)
    passed = hooks.run(
        "PreToolUse", {"tool_name": "run_bash_command", "tool_input": {"command": "ls"}}, "run_bash_command"
    )
    assert not passed.blocked and not passed.notices
    assert not hooks.run("PreToolUse", {"tool_input": {"command": "rm -rf /"}}, "read_file").blocked


def test_a_timeout_kills_the_process_group_and_gives_one_notice(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    # The hook starts a grandchild that would outlive a plain kill of the shell.
    command = f"sleep 300 & echo $! > {pid_file}; wait"
    # Two seconds: the timeout under test, and time for the shell to write the pid when busy.
    hooks = HookSet((Hook("Stop", command, tmp_path / "settings.json", timeout=2),), cwd=tmp_path)
    started = time.monotonic()
    result = hooks.run("Stop", {})
    assert time.monotonic() - started < 60  # stopped, not waited for
    assert not result.blocked
    assert [n.english() for n in result.notices] == [f"Stop hook stopped after 2 s (its timeout): {command}"]
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 30  # a killed process ends when it is next scheduled
    while _running(child):
        assert time.monotonic() < deadline, "the hook's grandchild outlived it"
        time.sleep(0.05)


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed orphan waits for a reaper that containers may lack)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_a_failing_hook_is_a_notice_not_a_block(tmp_path: Path) -> None:
    hooks = HookSet(
        (
            Hook("Stop", "echo broken >&2; exit 1", tmp_path / "s.json"),
            Hook("Stop", "true", tmp_path / "s.json"),
        ),
        cwd=tmp_path,
    )
    result = hooks.run("Stop", {})
    assert not result.blocked
    assert [n.english() for n in result.notices] == ["Stop hook failed (exit 1): broken"]


def test_folder_hooks_are_read_only_for_a_trusted_folder(tmp_path: Path) -> None:
    user, folder = tmp_path / "user", tmp_path / "project"
    (folder / ".generalagent").mkdir(parents=True)
    user.mkdir()
    shape = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine", "approver": True}]}]}}
    (user / "settings.json").write_text(json.dumps(shape))
    theirs = {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo theirs", "approver": True}]}]}
    }
    (folder / ".generalagent" / "settings.json").write_text(json.dumps(theirs))
    untrusted = load_hooks(user, FolderTrust(folder.resolve(), (".generalagent",), None), folder)
    assert [h.command for h in untrusted.hooks] == ["echo mine"]
    refused = load_hooks(user, FolderTrust(folder.resolve(), (".generalagent",), False), folder)
    assert [h.command for h in refused.hooks] == ["echo mine"]
    trusted = load_hooks(user, FolderTrust(folder.resolve(), (".generalagent",), True), folder)
    assert [(h.command, h.approver) for h in trusted.hooks] == [("echo mine", True), ("echo theirs", False)]


def test_a_broken_settings_file_is_reported_and_nothing_runs(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text("{not json")
    hooks = load_hooks(tmp_path, FolderTrust(), tmp_path)
    assert hooks.hooks == () and "not read" in hooks.problems[0].english()


def _settings_with_hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hooks: dict) -> Settings:
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"hooks": hooks}))
    monkeypatch.setenv("GENERALAGENT_CONFIG_DIR", str(config))
    return load_settings(
        env_file=None,
        model={"model_name": "test-model", "openai_api_key": "sk-test", "model_max_retries": 0},
        paths={"data_dir": tmp_path / "data"},
    )


def test_an_approver_hook_from_the_user_file_answers_for_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    allow = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}})
    answer = tmp_path / "allow.json"
    answer.write_text(allow)
    settings = _settings_with_hooks(
        tmp_path,
        monkeypatch,
        {
            "PreToolUse": [
                {"matcher": "run_bash_command", "hooks": [{"command": f"cat {answer}", "approver": True}]}
            ]
        },
    )
    model = ScriptedChatModel(
        replies=[ai("", tool_call("run_bash_command", {"command": "echo by-hook"}, "c1")), ai("done")]
    )
    _parts, graph = build_test_agent(settings, model)
    result = graph.invoke(
        user_turn("go", settings, session_id="t-approver", mentions=["run_bash_command"]),
        thread("t-approver"),
    )
    assert "__interrupt__" not in result  # nobody was asked
    answers = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answers[0].status != "error" and "by-hook" in str(answers[0].content)


def test_a_hook_without_the_approver_key_cannot_approve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = tmp_path / "allow.json"
    answer.write_text(json.dumps({"hookSpecificOutput": {"permissionDecision": "allow"}}))
    settings = _settings_with_hooks(
        tmp_path,
        monkeypatch,
        {"PreToolUse": [{"matcher": "run_bash_command", "hooks": [{"command": f"cat {answer}"}]}]},
    )
    model = ScriptedChatModel(
        replies=[ai("", tool_call("run_bash_command", {"command": "echo asked"}, "c1")), ai("done")]
    )
    _parts, graph = build_test_agent(settings, model)
    result = graph.invoke(
        user_turn("go", settings, session_id="t-no", mentions=["run_bash_command"]), thread("t-no")
    )
    assert "__interrupt__" in result  # the user is still asked


def test_ctrl_c_kills_a_running_hook_like_a_tools_command(tmp_path: Path, settings: Settings) -> None:
    from generalAgent.tools.run_context import SessionScope

    env = SessionScope("s", tmp_path)  # the session whose turn the user cancels
    hooks = HookSet((Hook("PreToolUse", "sleep 300", tmp_path / "s.json", timeout=600),), cwd=tmp_path)
    outcome: list[HookResult] = []
    runner = threading.Thread(target=lambda: outcome.append(hooks.run("PreToolUse", {}, "now", tracker=env)))
    started = time.monotonic()
    runner.start()
    while not env.kill_running_processes():  # until the hook has started and been killed
        assert time.monotonic() - started < 60, "the hook never started"
        time.sleep(0.05)
    runner.join(60)
    assert time.monotonic() - started < 60  # killed, not waited for
    assert not outcome[0].blocked and "failed (exit -9)" in outcome[0].notices[0].english()
