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
from functools import partial
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import ValidationError

from generalAgent.config.settings import MCPSettings
from generalAgent.config.sources import user_config_dir
from generalAgent.display import Message, os_error_reason
from generalAgent.file_formats import describe_errors, json_line
from generalAgent.i18n import _
from generalAgent.tools.mcp.config_file import ServerEntry, Transport
from generalAgent.tools.mcp.naming import server_handle

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
                config.problems.append(
                    _("MCP_CONFIG={path}: no such file; no MCP servers are configured").format(path=path)
                )
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
                _(
                    "{file}: servers {first} and {second} both become @{handle}; rename one ({second} is skipped)"
                ).format(
                    file=server.source.name, first=repr(clash), second=repr(server.name), handle=server.handle
                )
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
        raise MCPConfigError(
            _("{where}: cannot read it ({reason})").format(where=path, reason=_os_reason(exc))
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        # The parser's own words (English; they give the line and column) inside our sentence.
        raise MCPConfigError(
            _("{where}: not valid JSON ({problem})").format(where=path, problem=exc)
        ) from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if servers is None and isinstance(data, dict) and not data:
        return {}
    if not isinstance(servers, dict):
        raise MCPConfigError(
            _("{where}: expected {shape}").format(where=path, shape='{"mcpServers": {"name": {...}}}')
        )
    return servers


def parse_server(
    name: str, entry: Any, source: Path, variables: Mapping[str, str], scope: Scope = "user"
) -> MCPServerConfig:
    """One entry of `mcpServers`, validated (tools/mcp/config_file.py) and expanded; problems
    end up in `problem`. A folder's server (`scope="folder"`) gets only the variables listed for it."""
    handle = server_handle(name)
    if not isinstance(entry, dict):
        return _broken(name, handle, source, _("its settings must be a JSON object"), scope=scope)
    try:
        server = ServerEntry.model_validate(entry)
    except ValidationError as exc:
        said = describe_errors(exc, ServerEntry, source.name, partial(_line_in, source), ("mcpServers", name))
        return _broken(name, handle, source, said[0], enabled=_enabled_or_true(entry), scope=scope)
    warnings = tuple(f"unknown key {key!r} ignored" for key in server.unknown_keys())
    expander = _Expander(variables, folder_server=name if scope == "folder" else None)
    kind = server.kind()
    env = {key: expander.expand(value) for key, value in server.env.items()}
    headers = {key: expander.expand(value) for key, value in server.headers.items()}
    if kind == "stdio":
        command = expander.expand(server.command or "")
        if not command.strip():
            return _broken(
                name, handle, source, _("'command' is empty"), enabled=server.is_enabled, scope=scope
            )
        args = tuple(expander.expand(a) for a in server.args)
        cwd = _resolve(expander.expand(server.cwd), source.parent) if server.cwd else source.parent
        shown = " ".join([server.command or "", *server.args])
        url = ""
    else:
        url = expander.expand(server.url or "")
        if urlsplit(url).scheme not in {"http", "https"}:
            problem = _("'url' must start with http:// or https://")
            return _broken(name, handle, source, problem, enabled=server.is_enabled, scope=scope)
        command, args, cwd = "", (), None
        shown = hide_password(server.url or "")
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
        enabled=server.is_enabled,
        trust=server.trust,
        tools=tuple(server.tools) if server.tools is not None else None,
        timeout=server.timeout,
        shown_target=redact(shown, secrets),
        secrets=secrets,
        problem=expander.problem(),
        warnings=warnings,
        scope=scope,
    )


def _line_in(source: Path, location: tuple[str | int, ...]) -> int | None:
    """The line of a key in the file, for an error message (the file is read again only then)."""
    try:
        return json_line(source.read_text(encoding="utf-8"), location)
    except (OSError, UnicodeDecodeError):
        return None


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
        raise MCPConfigError(
            _("{where}: a server named {name} exists; remove it first").format(where=path, name=repr(name))
        )
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
        raise MCPConfigError(
            _("{where}: cannot write it ({reason})").format(where=path, reason=_os_reason(exc))
        ) from None


def _os_reason(exc: OSError) -> str:
    """Why `exc` happened, in the UI language (these errors are read by a person only)."""
    reason = os_error_reason(exc)
    return reason.shown(_) if isinstance(reason, Message) else reason


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


def _resolve(text: str, base: Path) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else base / path


def _password(url: str) -> str:
    return urlsplit(url).password or "" if url else ""
