"""Names of MCP servers and their tools as the model and the user see them.

A tool is offered as `<server>__<tool>`: unique across servers, at most 64 characters,
letters, digits, `_` and `-` only and starting with a letter, which every provider we
support accepts (OpenAI's `^[a-zA-Z0-9_-]{1,64}$` is the strictest; Gemini also wants a
letter first). The same server and tool always give the same name, whatever else the
server offers, so the tool list (part of the cached prompt prefix) does not change when
a server is restarted or gains a tool.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MAX_TOOL_NAME = 64
MAX_HANDLE = 30  # leaves room for the tool's own name
SEPARATOR = "__"
VALID_TOOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
_OUTSIDE_HANDLE = re.compile(r"[^A-Za-z0-9_-]+")
_OUTSIDE_TOOL = re.compile(r"[^A-Za-z0-9_-]")
_DIGEST = 8


def server_handle(name: str) -> str:
    """The name a server is @mentioned by and its tools are prefixed with.

    It fits the @mention syntax (a letter first, no trailing `-` or `_`) and holds no
    `__`, so `<server>__` always ends where the server's name does.
    """
    handle = _OUTSIDE_HANDLE.sub("-", name)
    handle = re.sub(r"_{2,}", "_", handle)
    handle = re.sub(r"^[^A-Za-z]+", "", handle)[:MAX_HANDLE].rstrip("-_")
    return handle or "server"


def tool_names(handle: str, tools: Iterable[str]) -> dict[str, str]:
    """Public names for a server's tools: `{tool as the server names it: name offered}`.

    A tool whose name is already valid and short enough keeps it, prefixed. One that had to
    be changed (characters replaced, or cut to length) gets a short digest of its original
    name unless its changed form is free, and a cut name always does, so two tools never
    share a name.
    """
    originals = sorted(set(tools))
    names: dict[str, str] = {}
    taken: set[str] = set()
    changed: list[str] = []
    for tool in originals:
        plain = f"{handle}{SEPARATOR}{tool}"
        if VALID_TOOL_NAME.match(plain):
            names[tool] = plain
            taken.add(plain)
        else:
            changed.append(tool)
    for tool in changed:
        candidate = f"{handle}{SEPARATOR}{_OUTSIDE_TOOL.sub('_', tool)}"
        if len(candidate) > MAX_TOOL_NAME or candidate in taken:
            digest = hashlib.sha256(tool.encode("utf-8")).hexdigest()[:_DIGEST]
            candidate = f"{candidate[: MAX_TOOL_NAME - _DIGEST - 1]}_{digest}"
        names[tool] = candidate
        taken.add(candidate)
    return names
