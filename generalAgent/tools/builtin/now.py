"""now: the current date and time, so the model never guesses it."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.errors import ToolError


def current_time(timezone: str = "UTC") -> str:
    try:
        zone = ZoneInfo(timezone) if timezone and timezone.upper() != "UTC" else UTC
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolError(
            N_("unknown time zone {zone}. Use an IANA name such as Asia/Shanghai or UTC."),
            zone=repr(timezone),
        ) from None
    moment = datetime.now(UTC).astimezone(zone)
    return f"{moment.strftime('%Y-%m-%d %H:%M:%S %Z')} ({moment.strftime('%A')}, ISO {moment.isoformat(timespec='seconds')})"


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("now")
    def now(timezone: str = "UTC") -> str:
        """Return the current date and time. `timezone` is an IANA name, e.g. Asia/Shanghai."""
        return current_time(timezone)

    return now
