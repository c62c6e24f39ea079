"""Commands in the sandbox, and the keys no child of the agent can read (generalAgent/sandbox.py,
generalAgent/process_secrets.py).

Through the CLI: an approved command, a trusted folder's hook and its MCP server each try to
read the model key (their environment, `/proc/$PPID/environ`, every `/proc/*/environ`).
Through the sandbox itself: a command tries to write outside its folder, read `~/.ssh`,
connect to a listener the test starts on 127.0.0.1, and read an ancestor's environment.

bubblewrap must run for the sandbox cases: they are skipped where it cannot (saying why),
and CI (CI=1, .ci/run installs bubblewrap) fails instead.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from generalAgent.config.settings import load_settings
from generalAgent.sandbox import Confinement, Sandbox, SandboxUnavailable, find_sandbox
from generalAgent.tools.builtin.run_bash_command import command_confinement, run_command
from generalAgent.tools.workspace import WorkingFolders, Workspace
from tests.e2e.conftest import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall

fault = pytest.mark.fault
ROOT = Path(__file__).resolve().parents[2]
# Reads the key every way a child could: its own environment, its parent's block, everyone's.
LOOK_FOR_KEYS = 'env; tr "\\0" "\\n" < /proc/$PPID/environ; cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n"'


@pytest.fixture
def bwrap() -> Sandbox:
    try:
        return find_sandbox("required")
    except SandboxUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"bubblewrap must run in CI (.ci/run installs it): {exc}")
        pytest.skip(f"bubblewrap cannot run here: {exc}")


@pytest.fixture
def unique_key(cli_env: dict[str, str]) -> str:
    """A model key no other process on this machine has, so finding it anywhere is a leak."""
    key = f"sk-test-{secrets.token_hex(12)}"
    cli_env["OPENAI_API_KEY"] = key
    cli_env["AWS_SECRET_ACCESS_KEY"] = f"aws-{secrets.token_hex(12)}"
    return key


def sent_to_model(server: ScriptedOpenAIServer) -> str:
    return "\n".join(json.dumps(r.messages, ensure_ascii=False) for r in server.chat_requests)


@fault(
    area="security",
    fault="An approved run_bash_command reads /proc/$PPID/environ and every /proc/*/environ "
    "(the model key exported to the agent), with the sandbox and with SANDBOX=off",
    outcome="The key is in no environment it can read: the agent withholds it from its children and "
    "NULs it in its own /proc block at start; in the sandbox no ancestor is visible at all.",
    found="the command printed OPENAI_API_KEY from its parent's /proc/<pid>/environ",
)
@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_an_approved_command_cannot_read_the_model_key(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path, unique_key: str, sandbox: str
) -> None:
    cli_env["SANDBOX"] = sandbox
    openai_server.add(
        Reply(tool_calls=[ToolCall("run_bash_command", {"command": LOOK_FOR_KEYS})]), Reply(text="looked")
    )
    result = run_cli(["-p", "@run_bash_command look", "--approve"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    seen = sent_to_model(openai_server)
    assert "exit status" in seen  # the command ran and its output went to the model
    assert unique_key not in seen and cli_env["AWS_SECRET_ACCESS_KEY"] not in seen


def trusted_folder(workdir: Path, cli_env: dict[str, str]) -> None:
    result = run_cli(["trust"], cli_env, workdir)
    assert result.returncode == 0, result.stderr


@fault(
    area="security",
    fault="A trusted folder's hook (.generalagent/settings.json) and stdio MCP server (.mcp.json) write "
    "their environment, /proc/$PPID/environ and every /proc/*/environ into the folder "
    "(OPENAI_API_KEY and AWS_SECRET_ACCESS_KEY exported to the agent)",
    outcome="Neither key is anywhere they can read: a folder's hook gets only the basic variables and "
    "those the user listed (folderHookVariables), both run in the sandbox where one works.",
    found="hooks got the whole environment; the MCP server read the key from /proc/$PPID/environ "
    "although docs/security.md said a folder's mcp.json never gets it",
)
def test_a_folders_hooks_and_mcp_servers_get_no_key(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path, unique_key: str
) -> None:
    config = workdir / ".generalagent"
    config.mkdir()
    hook = {"hooks": [{"type": "command", "command": f"({LOOK_FOR_KEYS}) > hook-saw.txt"}]}
    (config / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [hook]}}))
    server = f"import subprocess; subprocess.run(['sh', '-c', {LOOK_FOR_KEYS!r} + ' > mcp-saw.txt'])"
    (workdir / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"dump": {"command": sys.executable, "args": ["-c", server]}}})
    )
    trusted_folder(workdir, cli_env)
    openai_server.add(Reply(text="hello"))
    result = run_cli(["-p", "hi"], cli_env, workdir)
    assert result.returncode == 0, result.stderr
    for name in ("mcp-saw.txt", "hook-saw.txt"):
        saw = (workdir / name).read_text()
        assert "PATH=" in saw, name  # it ran and wrote what it could read
        assert unique_key not in saw and cli_env["AWS_SECRET_ACCESS_KEY"] not in saw, name


# -- the sandbox itself ---------------------------------------------------------------
@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with a private key in ~/.ssh, as the user's is."""
    folder = tmp_path / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret-of-the-user\n")
    monkeypatch.setenv("HOME", str(folder))
    return folder


def confined(tmp_path: Path, home: Path, network: bool = False) -> tuple[Path, Confinement]:
    data = tmp_path / "data"
    workspace = data / "workspaces" / "session-1"
    (workspace / "outputs").mkdir(parents=True)
    other = data / "workspaces" / "session-2" / "outputs"
    other.mkdir(parents=True)
    (other / "report.txt").write_text("another session's report")
    return workspace, Confinement(writable=(workspace,), hidden=(home, data), network=network, cwd=workspace)


@fault(
    area="security",
    fault="A command in the sandbox writes to /etc, the home folder, a folder beside its workspace and "
    "another session's workspace, reads ~/.ssh/id_ed25519 and another session's report",
    outcome="Only its workspace (and a private /tmp) is written; the home folder and the data home are "
    "empty folders to it, so no key and no other session's file is read.",
)
def test_a_sandboxed_command_writes_only_its_workspace_and_reads_no_private_file(
    bwrap: Sandbox, tmp_path: Path, home: Path
) -> None:
    workspace, confinement = confined(tmp_path, home)
    beside = tmp_path / "beside.txt"
    command = (
        f"echo x > /etc/sandbox-probe; echo x > ~/planted; echo x > {beside}; "
        "echo x > ../session-2/outputs/planted; echo mine > outputs/mine.txt; "
        "cat ~/.ssh/id_ed25519; cat ../session-2/outputs/report.txt; ls ..; true"
    )
    answer = run_command(command, workspace, 30, None, ("PATH", "HOME"), bwrap, confinement)
    assert (workspace / "outputs" / "mine.txt").read_text() == "mine\n"
    assert not Path("/etc/sandbox-probe").exists() and not (home / "planted").exists() and not beside.exists()
    assert not (tmp_path / "data" / "workspaces" / "session-2" / "outputs" / "planted").exists()
    assert "secret-of-the-user" not in answer and "another session's report" not in answer
    assert answer.rstrip().endswith("\nsession-1")  # `ls ..`: its own workspace alone


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on 127.0.0.1 that says hello to whoever connects."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            with connection:
                connection.sendall(b"hello-from-the-host\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(timeout=2)
    server.close()


@fault(
    area="security",
    fault="A sandboxed command connects to a service on the host's 127.0.0.1, with and without the "
    "network the user approved for the call (run_bash_command's network argument)",
    outcome="Without approval it reaches nothing (a network namespace of its own); with it, it connects.",
)
def test_a_sandboxed_command_has_no_network_unless_approved(
    bwrap: Sandbox, tmp_path: Path, home: Path, listener: int
) -> None:
    command = f"exec 3<>/dev/tcp/127.0.0.1/{listener} && head -n 1 <&3"
    workspace, closed = confined(tmp_path, home)
    answer = run_command(command, workspace, 30, None, ("PATH",), bwrap, closed)
    assert "hello-from-the-host" not in answer and "(failed)" in answer
    answer = run_command(command, workspace, 30, None, ("PATH",), bwrap, replace(closed, network=True))
    assert "hello-from-the-host" in answer


@fault(
    area="security",
    fault="A command reads the environment of the process that started it (/proc/$PPID/environ) and "
    "of every process it can see, its parent holding a key in its initial environment",
    outcome="In the sandbox's PID namespace no ancestor is visible: no key is read.",
)
def test_a_sandboxed_command_cannot_read_an_ancestors_environment(bwrap: Sandbox, tmp_path: Path) -> None:
    key = f"sk-ancestor-{secrets.token_hex(12)}"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    # A parent process started with the key in its environment runs the command, as the agent does.
    parent = (
        "import sys; from pathlib import Path; "
        "from generalAgent.sandbox import Confinement, find_sandbox; "
        "from generalAgent.tools.builtin.run_bash_command import run_command; "
        f"w = Path({str(workspace)!r}); "
        f"print(run_command({LOOK_FOR_KEYS!r}, w, 30, None, ('PATH',), find_sandbox('required'), "
        "Confinement(writable=(w,), cwd=w)))"
    )
    env = {"PATH": os.environ["PATH"], "OPENAI_API_KEY": key, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", parent], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "exit status" in done.stdout and key not in done.stdout


@fault(
    area="security",
    fault="A process of the same (unprivileged) user as the agent reads the agent's /proc/<pid>/environ "
    "after start, with no sandbox at all",
    outcome="Refused: the agent made itself not dumpable, and the key's bytes in its initial "
    "environment block are NULs (so even root, who may read it, finds none).",
)
def test_the_agents_own_environment_block_holds_no_key(tmp_path: Path) -> None:
    if shutil.which("setpriv") is None or os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("setpriv (util-linux) and root are needed to run the agent as an unprivileged user")
        pytest.skip("needs setpriv and root, to run the agent as an unprivileged user")
    key = f"sk-own-{secrets.token_hex(12)}"
    reads = 'cat /proc/$PPID/environ; env; cat /proc/*/environ 2>&1 | tr "\\0" "\\n"'
    # The unprivileged user may not read the checkout (a home or mktemp folder is 0700): the
    # module (standard library only) is imported from a copy it can read.
    readable = Path(tempfile.mkdtemp(prefix="withhold-", dir="/tmp"))
    readable.chmod(0o755)
    shutil.copy(ROOT / "generalAgent" / "process_secrets.py", readable / "process_secrets.py")
    (readable / "process_secrets.py").chmod(0o644)
    agent = "\n".join(
        [
            "import os, subprocess, sys",
            f"sys.path.insert(0, {str(readable)!r})",
            "from process_secrets import withhold_secrets",
            "withheld = withhold_secrets()",
            "assert os.environ['OPENAI_API_KEY'].startswith('sk-own-')  # the settings still read it",
            f"child = subprocess.run(['sh', '-c', {reads!r}], capture_output=True, text=True)",
            "print(withheld.not_dumpable, withheld.block_scrubbed, repr(child.stdout), repr(child.stderr))",
        ]
    )
    env = {"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": key}
    as_nobody = [
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "/usr/bin/python3",
        "-c",
        agent,
    ]
    outputs = []
    try:
        for argv in (as_nobody, [sys.executable, "-c", agent]):  # root may read the block: it finds NULs
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
            assert done.returncode == 0, done.stderr
            assert done.stdout.startswith("True True"), done.stdout
            assert key not in done.stdout, argv[0]
            outputs.append(done.stdout)
    finally:
        shutil.rmtree(readable)
    assert "Permission denied" in outputs[0]  # the same uid without CAP_SYS_PTRACE: not even opened


@fault(
    area="security",
    fault="A sandboxed command in a trusted folder reads the folder's .env (the model key); the same "
    "command in a served run reads the server's folder",
    outcome="The .env reads empty (the folder's other files are there and writable); a served run sees "
    "only its workspace, never the operator's folder.",
)
def test_a_command_reads_no_env_file_and_a_served_one_not_the_servers_folder(
    bwrap: Sandbox, tmp_path: Path, home: Path
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / ".env").write_text("OPENAI_API_KEY=sk-in-the-folder-0123456789\n")
    (folder / "notes.md").write_text("the folder's notes\n")
    settings = load_settings(env_file=None, paths={"data_dir": tmp_path / "data"})
    workspace = Workspace.for_session(
        settings.paths.workspaces_dir, "s1", folders=WorkingFolders(start=folder, readable=True)
    )
    command = f"cat {folder}/.env; cat {folder}/notes.md; echo new > {folder}/written.md; true"
    local = run_command(
        command, workspace.root, 30, None, ("PATH",), bwrap, command_confinement(settings, workspace)
    )
    assert "sk-in-the-folder" not in local and "the folder's notes" in local
    assert (folder / "written.md").read_text() == "new\n"
    (folder / "written.md").unlink()
    served = run_command(
        command,
        workspace.root,
        30,
        None,
        ("PATH",),
        bwrap,
        command_confinement(settings, workspace, served=True),
    )
    assert "sk-in-the-folder" not in served and "the folder's notes" not in served
    assert not (folder / "written.md").exists()
