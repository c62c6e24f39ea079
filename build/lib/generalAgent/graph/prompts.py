"""The two static system prompts, built once per process from the text templates.

Order inside a prompt, and why: the fixed instructions first, then the skills catalog
(fixed for the process), then a sub-agent profile's instructions, then the AGENTS.md
project memory (read once per process, but the part a user edits between processes, so it
comes after everything that is the same for every user), and the minute-precision
datetime tag at the very bottom. Nothing that changes between turns goes in here:
per-turn facts are reminders appended after the history (see context.py).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

from generalAgent.agent_profiles import AgentCatalog, AgentProfile
from generalAgent.skills.loader import SkillCatalog, build_skills_catalog

TEMPLATES = Path(__file__).resolve().parent / "templates"


def datetime_tag(now: datetime) -> str:
    """Minute precision: a per-second stamp would change the prompt on every request."""
    return f"<current_datetime>{now.astimezone(UTC).strftime('%Y-%m-%d %H:%M UTC')}</current_datetime>"


def build_system_prompt(skills: SkillCatalog, agents: AgentCatalog, now: datetime, memory: str = "") -> str:
    parts = [_template("system.md"), build_skills_catalog(skills), _agents_section(agents), memory]
    parts.append(datetime_tag(now))
    return "\n\n".join(p for p in parts if p)


def build_subagent_prompt(
    skills: SkillCatalog, profile: AgentProfile | None, now: datetime, memory: str = ""
) -> str:
    parts = [_template("subagent.md"), build_skills_catalog(skills)]
    if profile is not None and profile.instructions:
        parts.append(f"# Your role: {profile.name}\n\n{profile.instructions}")
    parts += [memory, datetime_tag(now)]
    return "\n\n".join(p for p in parts if p)


def prompt_hash(prompt: str) -> str:
    """Short, stable fingerprint for logs (Python's hash() changes between processes)."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:12]


def _agents_section(agents: AgentCatalog) -> str:
    lines = ["<agents>"]
    lines += [f"- @{p.name}: {p.description}" for p in agents.profiles]
    lines.append("</agents>")
    return "\n".join(lines)


def _template(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8").strip()
