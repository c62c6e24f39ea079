"""@mentions in a chat line: parsed, then classified as a tool, a skill or an agent."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# `@name` not preceded by an ASCII word character, so `user@example.com` is not one but
# `然后@agent` is; names are ASCII letters, digits, `_` and `-` (a trailing `-` is
# punctuation), and Chinese text may follow them directly (`@agent总结`).
_MENTION = re.compile(r"(?<![A-Za-z0-9_@./+-])@([A-Za-z](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)(?![A-Za-z0-9_@])")


def parse_mentions(text: str) -> list[str]:
    """The @names in `text`, in order, without duplicates."""
    seen: dict[str, None] = {}
    for match in _MENTION.finditer(text):
        seen.setdefault(match.group(1), None)
    return list(seen)


@dataclass
class Mentions:
    tools: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    unknown: dict[str, list[str]] = field(default_factory=dict)  # name -> closest known names


def classify_mentions(
    names: Iterable[str],
    tool_names: Iterable[str],
    skill_ids: Iterable[str],
    agent_names: Iterable[str],
) -> Mentions:
    """Tools first, then skills, then agents: a name that is both resolves to the first."""
    tools, skills, agents = set(tool_names), set(skill_ids), set(agent_names)
    known = sorted(tools | skills | agents)
    result = Mentions()
    for name in names:
        if name in tools:
            result.tools.append(name)
        elif name in skills:
            result.skills.append(name)
        elif name in agents:
            result.agents.append(name)
        else:
            result.unknown[name] = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    return result
