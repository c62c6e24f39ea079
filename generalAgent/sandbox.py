"""Runs the commands the agent starts in a sandbox: bubblewrap on Linux, sandbox-exec on macOS.

What runs inside: `run_bash_command` (and so every skill script, which runs through it),
a trusted folder's stdio MCP servers and its hooks. What a sandboxed command gets
(`Confinement`), with bubblewrap:

- the whole file system read-only, with the user's home, the data home (every session's
  workspace, sessions.db) and /run (sockets: Docker's, D-Bus) hidden behind empty folders;
  then, on top, the folders it needs: the session's workspace (writable), the working
  folder (writable only when the user trusts it and the call was approved), the agent's
  own Python and the skills (read-only);
- a private /tmp, a fresh /proc in a new PID namespace (no ancestor is visible, so no
  `/proc/$PPID/environ`), no network (a namespace of its own with only a loopback) unless
  the call asked for it and the user approved that, and the process dies with the agent;
- the environment the caller built from an allow-list (process_secrets.child_environment):
  the sandbox passes that on and nothing else.

macOS's `sandbox-exec` gets the same write and network rules from a profile; it has no PID
namespace, so a child there can still read the environment of the user's other processes.

`SANDBOX` chooses: `auto` (the default) uses one when this machine has one that works,
`required` refuses to run commands without one, `off` never uses one (today's behaviour).
Whether bubblewrap works is tried once per process (a kernel may forbid the namespaces it
needs, e.g. in some containers): a sandbox that cannot start must not fail every command.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

SandboxMode = Literal["auto", "required", "off"]
SandboxKind = Literal["bwrap", "sandbox-exec", "none"]
SANDBOX_EXEC = "/usr/bin/sandbox-exec"
PROBE_SECONDS = 10
# Folders that hold sockets to services outside the sandbox (Docker, D-Bus, systemd): a
# path socket is reachable without the network, so they are hidden whatever else is allowed.
SOCKET_FOLDERS = ("/run", "/var/run")


class SandboxUnavailable(RuntimeError):
    """SANDBOX=required (or a served deployment with shell tools) and no sandbox works here."""


@dataclass(frozen=True)
class Confinement:
    """What one sandboxed command may reach besides the read-only root."""

    writable: tuple[Path, ...] = ()  # bound read-write (the workspace, a trusted folder)
    readable: tuple[Path, ...] = ()  # bound read-only over the hidden folders (python, skills)
    hidden: tuple[Path, ...] = ()  # replaced by empty folders (home, the data home)
    masked: tuple[Path, ...] = ()  # files shown empty (a folder's .env: keys)
    network: bool = False
    cwd: Path | None = None  # where the command starts (inside a writable or readable folder)


@dataclass(frozen=True)
class Sandbox:
    kind: SandboxKind
    program: str = ""
    # Why there is none (for doctor and the one line the CLI shows): English, for the logs.
    reason: str = ""
    mode: SandboxMode = "auto"
    probes: tuple[str, ...] = field(default=(), repr=False)

    @property
    def active(self) -> bool:
        return self.kind != "none"

    def wrap(self, argv: Sequence[str], confinement: Confinement) -> list[str]:
        """`argv` as this sandbox runs it; unchanged without one."""
        if self.kind == "bwrap":
            return [self.program, *bwrap_arguments(confinement), "--", *argv]
        if self.kind == "sandbox-exec":
            return [self.program, "-p", seatbelt_profile(confinement), "--", *argv]
        return list(argv)


def bwrap_arguments(confinement: Confinement) -> list[str]:
    """bubblewrap's options for `confinement`; later mounts go on top of earlier ones."""
    args = [
        "--die-with-parent",
        "--new-session",  # no TIOCSTI into the agent's terminal
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
    ]
    if not confinement.network:
        args.append("--unshare-net")
    for folder in SOCKET_FOLDERS:
        if Path(folder).is_dir() and not Path(folder).is_symlink():
            args += ["--tmpfs", folder]
    if confinement.network:
        # Name resolution may live under /run (systemd-resolved's stub): give that back alone.
        for resolver in ("/run/systemd/resolve",):
            if Path(resolver).is_dir():
                args += ["--ro-bind", resolver, resolver]
    # Shallower paths first, so what lies inside another stays on top: a data home inside a
    # writable project folder is hidden again, the workspace inside it writable again.
    mounts = [
        *((path, 0, ["--tmpfs", str(path)]) for path in _existing(confinement.hidden)),
        *((path, 1, ["--ro-bind", str(path), str(path)]) for path in _existing(confinement.readable)),
        *((path, 2, ["--bind", str(path), str(path)]) for path in _existing(confinement.writable)),
    ]
    for _, _, mount in sorted(mounts, key=lambda m: (len(m[0].parts), m[1])):
        args += mount
    for path in _existing(confinement.masked):
        if path.is_file():
            args += ["--ro-bind", "/dev/null", str(path)]
    if confinement.cwd is not None:
        args += ["--chdir", str(confinement.cwd)]
    return args


def seatbelt_profile(confinement: Confinement) -> str:
    """A macOS sandbox profile: writes only to the writable folders and temp, reads of the
    hidden folders refused (the readable and writable ones inside them allowed again), and
    no network unless allowed. Not run by the tests here (no macOS); kept to what it says."""

    def paths(items: Iterable[Path]) -> str:
        return " ".join(f'(subpath "{_quoted(str(p))}")' for p in items)

    writable = [*confinement.writable, Path("/private/tmp"), Path("/private/var/folders"), Path("/dev")]
    rules = [
        "(version 1)",
        "(allow default)",
        f"(deny file-write* (require-not (require-any {paths(writable)})))",
    ]
    if confinement.hidden:
        allowed = [*confinement.readable, *confinement.writable]
        rules.append(
            f"(deny file-read* (require-all (require-any {paths(confinement.hidden)})"
            + (f" (require-not (require-any {paths(allowed)}))" if allowed else "")
            + "))"
        )
    if not confinement.network:
        rules.append("(deny network*)")
    return "\n".join(rules)


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _existing(paths: Iterable[Path]) -> list[Path]:
    """Real, existing folders and files, each once."""
    found: dict[str, Path] = {}
    for path in paths:
        try:
            real = Path(path).resolve()
        except OSError:
            continue
        if real.exists() and str(real) != "/":
            found.setdefault(str(real), real)
    return list(found.values())


def find_sandbox(mode: SandboxMode) -> Sandbox:
    """The sandbox `mode` asks for on this machine; `SandboxUnavailable` when it is
    `required` and there is none."""
    if mode == "off":
        return Sandbox("none", reason="SANDBOX=off", mode=mode)
    found = _working_sandbox()
    found = Sandbox(found.kind, found.program, found.reason, mode)
    if mode == "required" and not found.active:
        raise SandboxUnavailable(
            f"SANDBOX=required, but no sandbox works here: {found.reason}. "
            "Install bubblewrap (Debian/Ubuntu: apt install bubblewrap) or set SANDBOX=auto."
        )
    return found


@functools.cache
def _working_sandbox() -> Sandbox:
    """The sandbox this machine has, tried once per process (a fact about the machine)."""
    if sys.platform.startswith("linux"):
        program = shutil.which("bwrap")
        if program is None:
            return Sandbox("none", reason="bubblewrap (bwrap) is not installed")
        probe = [program, *bwrap_arguments(Confinement()), "--", "true"]
        try:
            done = subprocess.run(
                probe, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_SECONDS, env={}
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Sandbox("none", reason=f"bubblewrap does not start ({exc})")
        if done.returncode != 0:
            error = done.stderr.decode("utf-8", "replace").strip().splitlines()
            return Sandbox(
                "none", reason=f"bubblewrap cannot run here ({error[-1] if error else done.returncode})"
            )
        return Sandbox("bwrap", program)
    if sys.platform == "darwin" and os.access(SANDBOX_EXEC, os.X_OK):
        return Sandbox("sandbox-exec", SANDBOX_EXEC)
    return Sandbox("none", reason=f"no sandbox is supported on {sys.platform}")


def agent_runtime_folders() -> tuple[Path, ...]:
    """What a sandboxed Python command needs to read although it may sit in a hidden
    folder (a virtualenv in the home): the agent's interpreter and its libraries."""
    return tuple({Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent})
