"""mcp.json as a pydantic model: one server's keys, what each accepts, and the file around them.

`ServerEntry` is one entry of `mcpServers` in the shape other agents write (Claude Code,
Cursor, Cline, Gemini CLI); tools/mcp/config.py validates each entry alone through it, so
one bad server is that server's problem and the others still run. `MCPFile` is the whole
file, for the docs table and the JSON schema editors use (generalAgent/schemas/mcp.schema.json).
Keys other agents use and we do not (`autoApprove`, `description`, ...) are kept aside
(`unknown_keys`) and pointed out, not refused.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from generalAgent.file_formats import accepts, problem
from generalAgent.i18n import N_

Transport = Literal["stdio", "http"]
# Every spelling of a transport other agents write, and the one it means here.
TRANSPORTS: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamableHttp": "http",
}
MAX_TIMEOUT = 3_600  # seconds: a typo must not hold a call for a day


class ServerEntry(BaseModel):
    """One MCP server: a local program (`command`) or a streamable HTTP address (`url`)."""

    # strict: "true" is not a boolean and "60" not a number, as other agents read them.
    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    command: str | None = Field(
        default=None,
        description="A local server: the program (stdio)",
        json_schema_extra=accepts(N_("a string")),
    )
    args: list[str] = Field(
        default_factory=list,
        description="The program's arguments",
        json_schema_extra=accepts(N_("a list of strings")),
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Variables for that program; it gets these and only the basics of yours "
        "(`PATH`, `HOME`, `USER`, `SHELL`, `TERM`, `LOGNAME`), never your API key",
        json_schema_extra=accepts(N_("an object of names and strings")),
    )
    cwd: str | None = Field(
        default=None,
        description="The program's working folder; default: the folder of the mcp.json that defines it",
        json_schema_extra=accepts(N_("a string")),
    )
    url: str | None = Field(
        default=None,
        description="A streamable HTTP server's address",
        json_schema_extra=accepts(N_("an http:// or https:// address")),
    )
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="Headers sent with every request to `url`",
        json_schema_extra=accepts(N_("an object of names and strings")),
    )
    type: str | None = Field(
        default=None,
        description="Optional: `command` or `url` tells (`sse` is not supported: use the server's streamable HTTP URL)",
        json_schema_extra=accepts(N_("stdio or http (also streamable-http)"), enum=[*TRANSPORTS, "sse"]),
    )
    transport: str | None = Field(
        default=None,
        description="Another agent's name for `type`",
        json_schema_extra=accepts(N_("stdio or http (also streamable-http)"), enum=[*TRANSPORTS, "sse"]),
    )
    enabled: bool = Field(
        default=True,
        description="`false`: start only when `@mentioned`",
        json_schema_extra=accepts(N_("true or false")),
    )
    disabled: bool = Field(
        default=False,
        description="Cline's spelling: `true` is `enabled: false`",
        json_schema_extra=accepts(N_("true or false")),
    )
    trust: bool = Field(
        default=False,
        description="`true`: run its tools without asking each time",
        json_schema_extra=accepts(N_("true or false")),
    )
    tools: list[str] | None = Field(
        default=None,
        description='Only offer these of the server\'s tools, e.g. `["search", "fetch"]`',
        json_schema_extra=accepts(N_("a list of strings")),
    )
    timeout: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TIMEOUT,
        description="Seconds one call may take (default `MCP_CALL_TIMEOUT`, 60)",
        json_schema_extra=accepts(N_("a number of seconds between 0 and 3600")),
    )

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_unset(cls, data: Any) -> Any:
        """`"args": null`, `"env": null` mean none, as other agents read them."""
        if not isinstance(data, dict):
            return data
        kept = {key: value for key, value in data.items() if not (value is None and key in _EMPTY_WHEN_NULL)}
        if "tools" in kept and kept["tools"] is None:
            kept["tools"] = []  # an allow-list given as null offers nothing, never everything
        return kept

    @model_validator(mode="after")
    def _one_transport(self) -> ServerEntry:
        self.kind()  # raises the entry's problem
        return self

    def kind(self) -> Transport:
        """stdio or http: `type` (or `transport`) when given, else the key present."""
        declared = self.type if self.type is not None else self.transport
        if declared == "sse":
            raise problem(
                N_(
                    "uses the SSE transport, which generalAgent does not support; use the server's streamable HTTP URL"
                )
            )
        has_command, has_url = self.command is not None, self.url is not None
        if declared is not None:
            if declared not in TRANSPORTS:
                raise problem(N_("unknown type {name!r}; use 'stdio' or 'http'"), name=declared)
            kind = TRANSPORTS[declared]
        elif has_command and has_url:
            raise problem(N_("has both 'command' and 'url'; keep one"))
        elif not has_command and not has_url:
            raise problem(N_("needs 'command' (a local server) or 'url' (a streamable HTTP server)"))
        else:
            kind = "stdio" if has_command else "http"
        if kind == "stdio" and not has_command:
            raise problem(N_("a stdio server needs 'command'"))
        if kind == "http" and not has_url:
            raise problem(N_("an http server needs 'url'"))
        return kind

    @property
    def is_enabled(self) -> bool:
        return self.enabled and not self.disabled

    def unknown_keys(self) -> list[str]:
        return sorted(self.model_extra or {})


_EMPTY_WHEN_NULL = frozenset({"args", "env", "headers", "cwd", "timeout"})


class MCPFile(BaseModel):
    """A whole mcp.json (user-level or a folder's)."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    mcpServers: dict[str, ServerEntry] = Field(  # noqa: N815  (the name every agent's file uses)
        default_factory=dict,
        description="The servers, by the name you `@mention` them with (also the prefix of their tools)",
        json_schema_extra=accepts(N_("an object of server names and their settings")),
    )
    folderVariables: dict[str, list[str]] = Field(  # noqa: N815
        default_factory=dict,
        description="User-level file only: the variables a folder's server may expand in `${VAR}`, "
        "by server name (never `OPENAI_API_KEY`, `EMBEDDING_API_KEY`, `DATABASE_URL`)",
        json_schema_extra=accepts(N_("an object of server names and lists of variable names")),
    )
