"""mcp.json: which MCP servers to run, read in the shape users already have from other agents.

    {"mcpServers": {
        "notes":  {"command": "python", "args": ["notes_server.py"], "env": {"TOKEN": "${NOTES_TOKEN}"}},
        "search": {"type": "http", "url": "https://mcp.example.com/mcp",
                   "headers": {"Authorization": "Bearer ${SEARCH_KEY}"},
                   "enabled": false, "trust": true, "tools": ["search"], "timeout": 120}}}

Files, in order, later ones replacing a server of the same name: the user-level file
(`mcp.json` beside the user-level `.env`, config/sources.py), then `.mcp.json` and
`mcp.json` of the working folder; `MCP_CONFIG` names one file to read instead of all of
them. `${VAR}` and `${VAR:-default}` are expanded in every string (from the environment,
then the `.env` files in effect), and every value that came from a
variable, an `env` entry or a header is a secret: it is kept for the server process and
the request, and cut out of anything shown or logged (`redact`).

A folder's files are someone else's until the user trusts the folder (config/trust.py):
before that they are not read at all (`MCPConfig.ignored`), so none of their commands
runs. Even in a trusted folder, `${VAR}` in a folder's file expands only the variables the
user listed for that server in the user-level file, and never the model's key:

    {"mcpServers": {...}, "folderVariables": {"notes": ["NOTES_TOKEN"]}}

Any other variable counts as unset (its `:-default` applies, else the server does not start
and says which name to list). A user-level file keeps expanding every variable.

A problem with one server (a missing variable, a bad key) is reported for that server
alone; the others still run. Nothing here starts a process.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from generalAgent.config.settings import MCPSettings
from generalAgent.config.sources import user_config_dir
from generalAgent.tools.mcp.naming import server_handle

Transport = Literal["stdio", "http"]
Scope = Literal["user", "folder"]
FILE_NAME = "mcp.json"
# The user-level file's list of variables a folder's server may expand, by server name.
FOLDER_VARIABLES_KEY = "folderVariables"
# Never expanded in a folder's file, even when listed: the model's and the data's secrets.
NEVER_FOR_FOLDERS = frozenset({"OPENAI_API_KEY", "EMBEDDING_API_KEY", "DATABASE_URL"})
FOLDER_FILES = (".mcp.json", FILE_NAME)
# Shorter values are not redacted: cutting every "1" or "true" out of a message hides nothing.
MIN_SECRET_LENGTH = 6
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_TYPES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamableHttp": "http",
}
_KEYS = {
    "type",
    "transport",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "enabled",
    "disabled",
    "trust",
    "tools",
    "timeout",
}


class MCPConfigError(Exception):
    """An mcp.json cannot be read or changed; the message is one line for the user."""


@dataclass(frozen=True)
class MCPServerConfig:
    """One server, its strings expanded. `problem` is set when it cannot be started as configured."""

    name: str  # as written in the file
    handle: str  # the @mention name and the prefix of its tool names
    transport: Transport
    source: Path
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: Path | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    enabled: bool = True
    trust: bool = False
    tools: tuple[str, ...] | None = None  # allow-list of the server's own tool names
    timeout: float | None = None  # seconds per call; None: MCP_CALL_TIMEOUT
    shown_target: str = ""  # command line or URL as written, without secrets
    secrets: frozenset[str] = field(default_factory=frozenset, repr=False)
    problem: str | None = None
    warnings: tuple[str, ...] = ()
    scope: Scope = "user"  # "folder": from the working folder's file (a folder the user trusted)

    def redact(self, text: str) -> str:
        return redact(text, self.secrets)


@dataclass
class MCPConfig:
    servers: list[MCPServerConfig] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)  # the files read, in order
    problems: list[str] = field(default_factory=list)  # files that could not be used
    ignored: list[Path] = field(default_factory=list)  # the folder's files, not read: not trusted

    def get(self, handle: str) -> MCPServerConfig | None:
        return next((s for s in self.servers if s.handle == handle), None)


def user_config_file() -> Path:
    return user_config_dir() / FILE_NAME


def config_files(
    settings: MCPSettings, cwd: Path, explicit_scope: Scope = "user"
) -> list[tuple[Path, Scope]]:
    """The files to read, in order, with whose they are (missing ones included: they are
    skipped when read). `explicit_scope`: whose MCP_CONFIG is (a folder's .env set it)."""
    if settings.mcp_config:
        return [(Path(settings.mcp_config).expanduser(), explicit_scope)]
    return [(user_config_file(), "user"), *((cwd / name, "folder") for name in FOLDER_FILES)]


def load_mcp_config(
    settings: MCPSettings,
    cwd: Path | None = None,
    variables: Mapping[str, str] | None = None,
    *,
    folder_trusted: bool = False,
    explicit_scope: Scope = "user",
) -> MCPConfig:
    """Every configured server; `variables` default to the environment alone.

    The working folder's files are read only when `folder_trusted` (config/trust.py);
    otherwise they are listed in `ignored`."""
    folder = cwd or Path.cwd()
    values = dict(variables) if variables is not None else dict(os.environ)
    config = MCPConfig()
    by_name: dict[str, MCPServerConfig] = {}
    explicit = bool(settings.mcp_config)
    allowed = folder_variables(user_config_file())
    for path, scope in config_files(settings, folder, explicit_scope):
        if not path.is_file():
            if explicit:
                config.problems.append(f"MCP_CONFIG={path}: no such file; no MCP servers are configured")
            continue
        if scope == "folder" and not folder_trusted:
            config.ignored.append(path)
            continue
        try:
            entries = read_servers(path)
        except MCPConfigError as exc:
            config.problems.append(str(exc))
            continue
        config.files.append(path)
        for name, entry in entries.items():
            by_name.pop(name, None)  # a later file's server replaces it, in the later position
            if scope == "folder":
                listed = allowed.get(name, ())
                visible = {k: v for k, v in values.items() if k in listed and k not in NEVER_FOR_FOLDERS}
                by_name[name] = parse_server(name, entry, path, visible, scope="folder")
            else:
                by_name[name] = parse_server(name, entry, path, values)
    seen: dict[str, str] = {}
    for server in by_name.values():
        clash = seen.get(server.handle)
        if clash is not None:
            config.problems.append(
                f"{server.source.name}: servers {clash!r} and {server.name!r} both become @{server.handle}; "
                f"rename one ({server.name!r} is skipped)"
            )
            continue
        seen[server.handle] = server.name
        config.servers.append(server)
    return config


def environment_variables(env_files: Iterable[Path]) -> dict[str, str]:
    """What `${VAR}` may name: the `.env` files' values (lowest priority first), overridden by
    the environment, as for settings."""
    from dotenv import dotenv_values  # the settings' own .env reader (config/sources.py)

    values: dict[str, str] = {}
    for env_file in env_files:
        values.update({k: v for k, v in dotenv_values(env_file).items() if v is not None})
    values.update(os.environ)
    return values


def folder_variables(path: Path) -> dict[str, tuple[str, ...]]:
    """The user-level file's `folderVariables`: which variables each folder server may expand.

    Malformed entries are ignored (nothing is allowed by them); a missing file allows nothing."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    listed = data.get(FOLDER_VARIABLES_KEY) if isinstance(data, dict) else None
    if not isinstance(listed, dict):
        return {}
    return {
        str(name): tuple(v for v in names if isinstance(v, str))
        for name, names in listed.items()
        if isinstance(names, list)
    }


def read_servers(path: Path) -> dict[str, Any]:
    """The `mcpServers` mapping of a file; `MCPConfigError` if it is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise MCPConfigError(f"{path}: cannot read it ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MCPConfigError(f"{path}: not valid JSON ({exc})") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if servers is None and isinstance(data, dict) and not data:
        return {}
    if not isinstance(servers, dict):
        raise MCPConfigError(f'{path}: expected {{"mcpServers": {{"name": {{...}}}}}}')
    return servers


def parse_server(
    name: str, entry: Any, source: Path, variables: Mapping[str, str], scope: Scope = "user"
) -> MCPServerConfig:
    """One entry of `mcpServers`, validated and expanded; problems end up in `problem`.

    A folder's server (`scope="folder"`) gets only the variables listed for it."""
    handle = server_handle(name)
    if not isinstance(entry, dict):
        return _broken(name, handle, source, "its settings must be a JSON object", scope=scope)
    warnings = tuple(f"unknown key {key!r} ignored" for key in sorted(set(entry) - _KEYS))
    expander = _Expander(variables, folder_server=name if scope == "folder" else None)
    try:
        kind = _transport(entry)
        enabled = _flag(entry, "enabled", True) and not _flag(entry, "disabled", False)
        trust = _flag(entry, "trust", False)
        tools = _string_list(entry, "tools") if "tools" in entry else None
        timeout = _timeout(entry)
        env = {str(k): expander.expand(_string(v, f"env.{k}")) for k, v in _mapping(entry, "env").items()}
        headers = {
            str(k): expander.expand(_string(v, f"headers.{k}")) for k, v in _mapping(entry, "headers").items()
        }
        if kind == "stdio":
            command = expander.expand(_string(entry.get("command"), "command"))
            if not command.strip():
                raise ValueError("'command' is empty")
            args = tuple(expander.expand(a) for a in _string_list(entry, "args"))
            cwd_text = entry.get("cwd")
            cwd = (
                _resolve(expander.expand(_string(cwd_text, "cwd")), source.parent)
                if cwd_text
                else source.parent
            )
            shown = " ".join([str(entry["command"]), *(str(a) for a in entry.get("args") or [])])
            url = ""
        else:
            url = expander.expand(_string(entry.get("url"), "url"))
            if urlsplit(url).scheme not in {"http", "https"}:
                raise ValueError("'url' must start with http:// or https://")
            command, args, cwd = "", (), None
            shown = hide_password(str(entry["url"]))
    except ValueError as exc:
        return _broken(name, handle, source, str(exc), enabled=_enabled_or_true(entry), scope=scope)
    secrets = frozenset(
        value
        for value in (*env.values(), *headers.values(), *expander.substituted, _password(url))
        if len(value) >= MIN_SECRET_LENGTH
    )
    return MCPServerConfig(
        name=name,
        handle=handle,
        transport=kind,
        source=source,
        command=command,
        args=args,
        env=env,
        cwd=cwd,
        url=url,
        headers=headers,
        enabled=enabled,
        trust=trust,
        tools=tuple(tools) if tools is not None else None,
        timeout=timeout,
        shown_target=redact(shown, secrets),
        secrets=secrets,
        problem=expander.problem(),
        warnings=warnings,
        scope=scope,
    )


def redact(text: str, secrets: frozenset[str] | set[str]) -> str:
    """`text` with every secret value replaced by `***` (longest first, so none leaves a tail)."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def hide_password(url: str) -> str:
    """A URL as it may be shown: a password in it becomes `***`."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


# -- editing (generalagent mcp add | remove) ---------------------------------------------------


def add_server_entry(path: Path, name: str, entry: dict[str, Any]) -> None:
    """Add `name` to the file (created if missing), keeping everything else in it."""
    data = _document(path)
    servers = data.setdefault("mcpServers", {})
    if name in servers:
        raise MCPConfigError(f"{path}: a server named {name!r} exists; remove it first")
    servers[name] = entry
    _write(path, data)


def remove_server_entry(path: Path, name: str) -> bool:
    """Remove `name` from the file; False when the file does not define it."""
    if not path.is_file():
        return False
    data = _document(path)
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or name not in servers:
        return False
    del servers[name]
    _write(path, data)
    return True


def _document(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    read_servers(path)  # the same one-line errors as for reading
    data = json.loads(path.read_text(encoding="utf-8"))
    if "mcpServers" not in data:
        data["mcpServers"] = {}
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        temporary.replace(path)  # a failed write leaves the old file whole
    except OSError as exc:
        raise MCPConfigError(f"{path}: cannot write it ({exc.strerror})") from None


# -- validation and expansion ------------------------------------------------------------------


class _Expander:
    """Expands `${VAR}` and `${VAR:-default}`; remembers what it substituted and what was missing."""

    def __init__(self, variables: Mapping[str, str], folder_server: str | None = None) -> None:
        self._variables = variables
        self._folder_server = folder_server  # the server's name, when a folder's file defines it
        self.substituted: list[str] = []
        self.missing: list[str] = []

    def expand(self, text: str) -> str:
        return _VARIABLE.sub(self._replace, text)

    def _replace(self, match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = self._variables.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                self.missing.append(name)
                return ""
            value = default
        self.substituted.append(value)
        return value

    def problem(self) -> str | None:
        if not self.missing:
            return None
        names = ", ".join(dict.fromkeys(self.missing))
        if self._folder_server is not None:
            listed = json.dumps(
                {FOLDER_VARIABLES_KEY: {self._folder_server: list(dict.fromkeys(self.missing))}}
            )
            return (
                f"needs {names}: a folder's mcp.json gets a variable only when it is set and you list "
                f"it for this server in {user_config_file()}, e.g. {listed} (never OPENAI_API_KEY)"
            )
        return f"needs {names}, which is not set; set it in the environment or .env"


def _broken(
    name: str, handle: str, source: Path, problem: str, enabled: bool = True, scope: Scope = "user"
) -> MCPServerConfig:
    return MCPServerConfig(
        name=name,
        handle=handle,
        transport="stdio",
        source=source,
        enabled=enabled,
        problem=problem,
        scope=scope,
    )


def _enabled_or_true(entry: dict[str, Any]) -> bool:
    enabled = entry.get("enabled", True)
    return (enabled if isinstance(enabled, bool) else True) and entry.get("disabled") is not True


def _transport(entry: dict[str, Any]) -> Transport:
    declared = entry.get("type", entry.get("transport"))
    if declared == "sse":
        raise ValueError(
            "uses the SSE transport, which generalAgent does not support; use the server's streamable HTTP URL"
        )
    if declared is not None:
        if declared not in _TYPES:
            raise ValueError(f"unknown type {declared!r}; use 'stdio' or 'http'")
        kind = _TYPES[declared]
    elif "command" in entry and "url" in entry:
        raise ValueError("has both 'command' and 'url'; keep one")
    elif "command" in entry:
        kind = "stdio"
    elif "url" in entry:
        kind = "http"
    else:
        raise ValueError("needs 'command' (a local server) or 'url' (a streamable HTTP server)")
    if kind == "stdio" and "command" not in entry:
        raise ValueError("a stdio server needs 'command'")
    if kind == "http" and "url" not in entry:
        raise ValueError("an http server needs 'url'")
    return kind


def _flag(entry: dict[str, Any], key: str, default: bool) -> bool:
    value = entry.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"'{key}' must be true or false")
    return value


def _string(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be a string")
    return value


def _string_list(entry: dict[str, Any], key: str) -> list[str]:
    value = entry.get(key) or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"'{key}' must be a list of strings")
    return value


def _mapping(entry: dict[str, Any], key: str) -> dict[str, Any]:
    value = entry.get(key) or {}
    if not isinstance(value, dict):
        raise ValueError(f"'{key}' must be an object of names and strings")
    return value


def _timeout(entry: dict[str, Any]) -> float | None:
    value = entry.get("timeout")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 3_600:
        raise ValueError("'timeout' must be a number of seconds between 0 and 3600")
    return float(value)


def _resolve(text: str, base: Path) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else base / path


def _password(url: str) -> str:
    return urlsplit(url).password or "" if url else ""
