"""run_bash_command: a shell command in the workspace, only after the user approves it.

The tool declares that every call needs approval (`metadata["needs_approval"] = True`);
the graph's approval step asks the user before the call runs (graph/nodes/approval.py),
so the tool itself only runs the command. The model cannot grant itself approval: only
the user's answers, recorded by that step, let a call through.

The command runs in a sandbox where one works (generalAgent/sandbox.py): it may write
only to the session's workspace and, when the user trusts it, the working folder; it sees
no ancestor process and no network, unless the model asked for `network=true`, which the
approval question shows with the command, so the user approves the network with it.
Without a sandbox (SANDBOX=off, or none on this machine with SANDBOX=auto) it runs as
before; with SANDBOX=required it does not run at all.

In a session an editor drives (ACP) that offers terminals, the command runs in one of
the editor's terminals instead, with the same environment and limits (tools/editor.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from langchain_core.tools import BaseTool, tool

from generalAgent.config.settings import Settings
from generalAgent.display import N_
from generalAgent.process_secrets import child_environment
from generalAgent.sandbox import Confinement, Sandbox, SandboxUnavailable, agent_runtime_folders, find_sandbox
from generalAgent.search.viewer import served_identity
from generalAgent.tools.approval import COMMAND_ARGS, FILES_RUN, NEEDS_APPROVAL, CallContext, files_run_by
from generalAgent.tools.editor import EditorAccess
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError, said_of
from generalAgent.tools.run_context import SessionScope
from generalAgent.tools.workspace import Workspace

NAME = "run_bash_command"
DEFAULT_TIMEOUT = 60
MAX_TIMEOUT = 600
MAX_OUTPUT_CHARS = 30_000
CANCELLED = N_(
    "cancelled: the command was stopped before it finished (the user pressed Ctrl-C, or it was killed)."
)


def cap_output(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """Keep the head and the tail (where errors usually are) of long output."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - limit:,} characters omitted …]\n{text[-half:]}"


def command_environment(allowed: Sequence[str], cwd: Path) -> dict[str, str]:
    """The variables a command sees: those of this process that COMMAND_ENV allows (by
    name or `*` pattern), then the workspace's own. Everything else (OPENAI_API_KEY,
    tokens, DATABASE_URL) stays out, so a command cannot print it into the conversation;
    a secret's name stays out even when a pattern covers it (process_secrets.py)."""
    variables = child_environment(allowed)
    # The agent's own interpreter first on PATH, so `python skills/...` finds its libraries.
    variables["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{variables.get('PATH', os.defpath)}"
    variables["WORKSPACE"] = str(cwd)
    variables["PYTHONIOENCODING"] = "utf-8"
    return variables


def command_confinement(
    settings: Settings, workspace: Workspace, network: bool = False, served: bool = False
) -> Confinement:
    """What a command of this session may reach in the sandbox: its workspace and, when the
    user trusts it, the working folder (writable, its `.env` shown empty: keys); the skills,
    --add-dir folders and the agent's Python (readable); never the home folder or the data
    home, where other sessions' workspaces, sessions.db and the user's keys (~/.ssh) are.
    A `served` run (LangGraph Server) gets its workspace alone: the server's folder is the
    operator's, not its users'."""
    folders = workspace.folders
    start = folders.start
    trusted = (start,) if folders.readable and start is not None and not served else ()
    skills = (workspace.skills_dir,) if workspace.skills_dir is not None else ()
    added = () if served else folders.added
    return Confinement(
        writable=(workspace.root, *trusted),
        readable=(*agent_runtime_folders(), *skills, *added),
        hidden=(
            Path.home(),
            settings.paths.data_dir,
            settings.paths.workspaces_dir,
            *((start,) if served and start is not None else ()),
        ),
        masked=tuple(folder / ".env" for folder in (*trusted, *added)),
        network=network,
        cwd=workspace.root,
    )


def command_sandbox(settings: Settings) -> Sandbox:
    """The sandbox for commands; ToolError (the model reads why) when SANDBOX=required
    and there is none."""
    try:
        return find_sandbox(settings.tools.sandbox)
    except SandboxUnavailable as exc:
        raise ToolError(N_("not run: {problem}"), problem=said_of(exc)) from None


def run_command(
    command: str,
    cwd: Path,
    timeout: int,
    scope: SessionScope | None = None,
    allowed_env: Sequence[str] = (),
    sandbox: Sandbox | None = None,
    confinement: Confinement | None = None,
) -> str:
    """The command in its own process group, tracked by the session's `scope` so that
    cancelling the session's turn kills it (and nothing of another session)."""
    variables = command_environment(allowed_env, cwd)
    argv = ["bash", "-c", command]
    if sandbox is not None:
        argv = sandbox.wrap(argv, confinement or Confinement(writable=(cwd,), cwd=cwd))
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=variables,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    if scope is not None:
        scope.track(process)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        text = output.decode("utf-8", errors="replace")
        raise ToolError(
            N_("timed out after {seconds} s; the command was killed.\n{output}"),
            seconds=timeout,
            output=cap_output(text),
        ) from None
    except BaseException:
        # Ctrl-C or a crash while waiting: never leave the command running behind us.
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    finally:
        if scope is not None:
            scope.untrack(process)
    if process.returncode == -signal.SIGKILL:
        raise ToolError(CANCELLED)
    return command_answer(output.decode("utf-8", errors="replace"), process.returncode)


def command_answer(output: str, status: int | None) -> str:
    """What the model reads of a finished command: its exit status, then its output."""
    text = output.rstrip()
    header = f"exit status {status}" + (" (failed)" if status else "")
    return f"{header}\n{cap_output(text)}" if text else f"{header}, no output"


def run_in_editor(
    editor: EditorAccess,
    call_id: str,
    command: str,
    cwd: Path,
    timeout: int,
    cancelled: threading.Event,
    allowed_env: Sequence[str] = (),
) -> str:
    """The command in the editor's terminal (ACP), where the user watches it run. It starts
    from an empty environment (`env -i`) with the same variables as a local run: the
    editor's own environment, which may hold keys, never reaches it."""
    variables = command_environment(allowed_env, cwd)
    argv = ["env", "-i", *(f"{name}={value}" for name, value in variables.items()), "bash", "-c", command]
    try:
        outcome = editor.run_command(call_id, argv, cwd, timeout, cancelled)
    except OSError as exc:
        raise ToolError(
            N_("the editor could not run the command: {problem}."), problem=said_of(exc)
        ) from None
    if outcome.cancelled:
        raise ToolError(CANCELLED)
    if outcome.timed_out:
        raise ToolError(
            N_("timed out after {seconds} s; the command was killed.\n{output}"),
            seconds=timeout,
            output=cap_output(outcome.output),
        )
    output = ("[… the start of the output was dropped …]\n" if outcome.truncated else "") + outcome.output
    if outcome.exit_code is None:
        return f"stopped by signal {outcome.signal or '?'}\n{cap_output(output.rstrip())}"
    return command_answer(output, outcome.exit_code)


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool(NAME)
    def run_bash_command(
        command: str, runtime: ToolRuntime, timeout: int = DEFAULT_TIMEOUT, network: bool = False
    ) -> str:
        """Run a bash command in the session workspace (cwd has uploads/, outputs/, temp/, skills/).

        The user approves every call. Output (stdout and stderr) is capped; `timeout` is in
        seconds (at most 600). Write results under outputs/. The command has no network
        unless `network` is true (say why: the user approves it with the command).
        """
        if not command.strip():
            raise ToolError(N_("empty command."))
        timeout = max(1, min(int(timeout), MAX_TIMEOUT))
        workspace = env.workspace(runtime)
        allowed = env.settings.tools.command_env_names
        editor = workspace.editor
        scope = env.context(runtime).scope
        assert scope is not None  # context_of always gives one
        if editor is not None and editor.runs_commands:
            call_id = str(runtime.tool_call_id or "")
            return run_in_editor(editor, call_id, command, workspace.root, timeout, scope.cancelled, allowed)
        sandbox = command_sandbox(env.settings)
        # LangGraph Server stamps a served run with its user (graph/served.py).
        served = served_identity((runtime.config or {}).get("configurable") or {}) is not None
        confinement = command_confinement(env.settings, workspace, network=bool(network), served=served)
        return run_command(command, workspace.root, timeout, scope, allowed, sandbox, confinement)

    def scripts(args: dict, context: CallContext) -> list:
        return files_run_by(str(args.get("command") or ""), context.workspace)

    # Every call asks; the question shows the command whole and the start of any script
    # of the session it runs (tools/approval.py).
    run_bash_command.metadata = {
        **(run_bash_command.metadata or {}),
        NEEDS_APPROVAL: True,
        COMMAND_ARGS: ("command",),
        FILES_RUN: scripts,
    }
    return run_bash_command
