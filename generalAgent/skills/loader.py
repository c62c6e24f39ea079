"""Discovers skills: `<id>/SKILL.md` folders of SKILLS_DIR with validated front matter.

A bad SKILL.md never stops the agent: it is skipped with a warning naming the file,
and the other skills still load. The catalog built here goes into the static system
prompt, so it is built once per process and sorted, to be byte-identical every time.

A skill names the tools its instructions use in `allowed-tools` (as other agents'
SKILL.md do: a YAML list, or names separated by spaces or commas); mentioning the skill
makes them visible (tools/visibility.py). It grants no approval: a tool that asks still asks.

A skill folder or SKILL.md that is a link leading outside the skills folder is skipped
with a warning (config/confined.py): a skill is read as instructions, never a file from
elsewhere in disguise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from generalAgent.config.confined import LeavesFolder, read_confined_text
from generalAgent.display import N_, Message, carrying, said_of_error
from generalAgent.front_matter import FrontMatterError, split_front_matter

SKILL_ID = re.compile(r"^(?=.{1,64}$)[a-z0-9]+(-[a-z0-9]+)*$")
MAX_DESCRIPTION = 400
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


@dataclass(frozen=True)
class Skill:
    id: str
    description: str
    path: Path  # the SKILL.md file
    allowed_tools: tuple[str, ...] = ()  # made visible when the skill is mentioned
    # `description_zh` of the front matter: what /skills and @-completion show a Chinese UI
    # (the model's catalog keeps the English `description`).
    description_zh: str = ""

    def described(self, language: str) -> str:
        """The description for a person reading the UI in `language` (`en` or `zh`)."""
        return self.description_zh if language == "zh" and self.description_zh else self.description

    @property
    def workspace_path(self) -> str:
        """Where the model reads it: the skills folder is mounted at `skills/`."""
        return f"skills/{self.id}/SKILL.md"


@dataclass(frozen=True)
class SkillCatalog:
    skills: tuple[Skill, ...]
    warnings: tuple[Message, ...]  # each said in the UI language where it is shown

    def get(self, skill_id: str) -> Skill | None:
        return next((s for s in self.skills if s.id == skill_id), None)

    def ids(self) -> list[str]:
        return [s.id for s in self.skills]

    def tools_by_skill(self) -> dict[str, tuple[str, ...]]:
        """{skill id: the tools it brings}, for the skills that bring any."""
        return {s.id: s.allowed_tools for s in self.skills if s.allowed_tools}


def refusal(template: str, **fields: object) -> FrontMatterError:
    """A front matter the loader refuses, its sentence kept as data (`said`) for the UI."""
    return carrying(FrontMatterError, Message(template, {name: str(value) for name, value in fields.items()}))


def load_skills(skills_dir: Path) -> SkillCatalog:
    skills: list[Skill] = []
    warnings: list[Message] = []
    if not skills_dir.is_dir():
        return SkillCatalog((), ())
    for folder in sorted(p for p in skills_dir.iterdir() if p.is_dir()):
        if folder.name.startswith((".", "_")):
            continue
        skill_md = folder / "SKILL.md"
        if not skill_md.is_file():
            warnings.append(
                Message(N_("{file}: missing; the folder is not a skill"), {"file": str(skill_md)})
            )
            continue
        try:
            skills.append(_parse_skill(folder.name, skill_md, skills_dir))
        except LeavesFolder as exc:
            warnings.append(Message(N_("{problem}; skill skipped"), {"problem": said_of_error(exc)}))
        except (FrontMatterError, OSError, UnicodeDecodeError) as exc:
            warnings.append(
                Message(
                    N_("{file}: {problem}; skill skipped"),
                    {"file": str(skill_md), "problem": said_of_error(exc)},
                )
            )
    return SkillCatalog(tuple(skills), tuple(warnings))


def _parse_skill(folder_id: str, skill_md: Path, skills_dir: Path) -> Skill:
    meta, body = split_front_matter(read_confined_text(skill_md, skills_dir))
    name = meta.get("name")
    description = meta.get("description")
    if not isinstance(name, str) or not SKILL_ID.match(name):
        raise refusal(N_("'name' must be lowercase letters, digits and hyphens"))
    if name != folder_id:
        raise refusal(
            N_("'name' is {name} but the folder is {folder}; they must match"),
            name=repr(name),
            folder=repr(folder_id),
        )
    if not isinstance(description, str) or not description.strip():
        raise refusal(N_("'description' must say in one line when to use the skill"))
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION:
        raise refusal(N_("'description' is longer than {limit} characters"), limit=MAX_DESCRIPTION)
    if not body.strip():
        raise refusal(N_("the instructions after the front matter are empty"))
    tools = _allowed_tools(meta.get("allowed-tools"))
    return Skill(
        id=name,
        description=description,
        path=skill_md,
        allowed_tools=tools,
        description_zh=_translated_description(meta, MAX_DESCRIPTION),
    )


def _translated_description(meta: dict, limit: int) -> str:
    """`description_zh` in one line, or "" when absent (the English is shown then)."""
    value = meta.get("description_zh")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise refusal(N_("'description_zh' must be text"))
    value = " ".join(value.split())
    if len(value) > limit:
        raise refusal(N_("'description_zh' is longer than {limit} characters"), limit=limit)
    return value


def _allowed_tools(value: object) -> tuple[str, ...]:
    """`allowed-tools` as a tuple of names: absent, a list, or one string of names."""
    if value is None:
        return ()
    if isinstance(value, str):
        names = value.replace(",", " ").split()
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        names = [item.strip() for item in value]
    else:
        raise refusal(N_("'allowed-tools' must be a list of tool names, or names in one line"))
    bad = [name for name in names if not TOOL_NAME.match(name)]
    if bad:
        raise refusal(N_("'allowed-tools' has a name that is not a tool name: {name}"), name=repr(bad[0]))
    return tuple(dict.fromkeys(names))


def build_skills_catalog(catalog: SkillCatalog) -> str:
    """The catalog section of the system prompt (empty when there are no skills)."""
    if not catalog.skills:
        return ""
    lines = ["<skills>"]
    lines += [f"- {s.id}: {s.description} (read {s.workspace_path})" for s in catalog.skills]
    lines.append("</skills>")
    return "\n".join(lines)
