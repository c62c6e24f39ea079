"""Keeps the process's secrets (API keys, passwords) away from every process it starts.

A command the model writes, a skill's script, a folder's MCP server or hook runs as a child
of the agent. Two ways led from such a child to the model key, although its own environment
is built from an allow-list:

- **Inheritance.** A child started without an explicit environment (LibreOffice, OCR) gets
  the C library's `environ`, which still held every exported key.
- **The ancestor's `/proc/<pid>/environ`.** The kernel shows the environment block the
  process was started with; `unsetenv()` does not change it, so `tr '\\0' '\\n' <
  /proc/$PPID/environ` printed the agent's key.

`withhold_secrets` runs once at start (the CLI's entry and the served graph's factory): it removes each secret from the C
`environ` (Python's `os.environ` keeps its copy, so the settings are still read from it),
overwrites the secret's bytes in the kernel-visible block with NULs, and marks the process
not dumpable (`PR_SET_DUMPABLE` 0), so a process of the same user without CAP_SYS_PTRACE
can neither open `/proc/<agent>/environ` nor read the agent's memory. The sandbox
(sandbox.py) adds a PID namespace, in which no ancestor is visible at all; without it, a
grandparent (the user's shell, where a key may be exported) stays readable to the user's
own processes, which docs/security.md says.

What counts as a secret is a name pattern (`is_secret_name`), wider than the settings that
hold keys, so a cloud token exported for something else is withheld too.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

# Names (upper-cased before matching) whose values are secrets. The settings' own keys
# (OPENAI_API_KEY, EMBEDDING_API_KEY, WEB_SEARCH_API_KEY, SERVER_API_KEYS, SERVER_JWT_SECRET,
# DATABASE_URL with its password) all match, and so do the usual cloud and CI tokens.
SECRET_PATTERNS = (
    "*API_KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASSWORD*",
    "*PASSWD*",
    "*CREDENTIAL*",
    "*PRIVATE_KEY*",
    "*ACCESS_KEY*",
    "*DATABASE_URL*",
    "*_DSN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "PGPASSWORD",
)
PR_SET_DUMPABLE = 4  # <linux/prctl.h>


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return any(fnmatchcase(upper, pattern) for pattern in SECRET_PATTERNS)


@dataclass(frozen=True)
class Withheld:
    """What `withhold_secrets` did: the names, and whether each protection took."""

    names: tuple[str, ...] = ()
    block_scrubbed: bool = False  # the bytes in /proc/self/environ are NULs now
    not_dumpable: bool = False  # /proc/<pid>/environ and mem closed to the same uid


def withhold_secrets(environ: Mapping[str, str] | None = None) -> Withheld:
    """Remove the secrets from what children inherit and from /proc/self/environ (Linux);
    elsewhere only from what children inherit. Safe to call more than once."""
    names = tuple(
        sorted(name for name in (os.environ if environ is None else environ) if is_secret_name(name))
    )
    for name in names:
        os.unsetenv(name)  # the C environ only: os.environ keeps the value for the settings
    if not sys.platform.startswith("linux"):
        return Withheld(names)
    return Withheld(names, _scrub_initial_block(names), _set_not_dumpable())


def _scrub_initial_block(names: Iterable[str]) -> bool:
    """NULs over `NAME=value` in the block the kernel shows as /proc/self/environ. The
    C environ no longer points there (unsetenv above), so nothing in the process reads it."""
    wanted = {name.encode() for name in names}
    if not wanted:
        return True
    try:
        with open("/proc/self/stat", "rb") as stat:
            # The fields after the command name in parentheses; env_start is field 50.
            fields = stat.read().rsplit(b")", 1)[1].split()
        env_start = int(fields[50 - 3])
        with open("/proc/self/environ", "rb") as block:
            data = block.read()
    except (OSError, IndexError, ValueError):
        return False
    offset = 0
    scrubbed = True
    for entry in data.split(b"\0"):
        if entry.partition(b"=")[0] in wanted:
            try:
                ctypes.memset(env_start + offset, 0, len(entry))
            except (OSError, ValueError):  # pragma: no cover - an unmapped block: nothing to show
                scrubbed = False
        offset += len(entry) + 1
    return scrubbed


def _set_not_dumpable() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the C library already loaded: no ldconfig run
        return int(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def child_environment(
    allowed: Sequence[str], extra: Mapping[str, str] | None = None, granted: Iterable[str] = ()
) -> dict[str, str]:
    """The variables a child gets: this process's that `allowed` names (exact or `*`
    patterns), never a secret even when a pattern covers it; those `granted` by exact name
    (the user listed them for this child), secret or not; then `extra` (set by the agent)."""
    names = set(granted)
    variables = {
        name: value
        for name, value in os.environ.items()
        if name in names
        or (any(fnmatchcase(name, pattern) for pattern in allowed) and not is_secret_name(name))
    }
    variables.update(extra or {})
    return variables
