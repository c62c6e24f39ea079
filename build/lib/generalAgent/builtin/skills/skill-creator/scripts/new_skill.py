"""Scaffold a new skill folder (SKILL.md with valid front matter, optional scripts) to fill in.

Every part left to write is marked with the scaffold marker; validate_skill.py fails until none
is left, so a half-written skill cannot pass for a finished one.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

SKILL_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
SCRIPT_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
MAX_ID = 64
MAX_DESCRIPTION = 400
# Written in two pieces so that this file, which must contain the marker, does not trip the check.
SCAFFOLD_MARKER = "FILL" + " IN:"
EXIT_FAILED = 1
EXIT_USAGE = 2

SKILL_TEMPLATE = """\
---
name: {id}
description: {description}
allowed-tools: run_bash_command
---

# {title}

{fill} one or two sentences - what this skill does, for which files or requests. Say that
Chinese and English documents are both handled if they are.

Inputs are under `uploads/`. Results go under `outputs/` (for the user) or `temp/` (scratch).
Run the scripts with `run_bash_command`; do not read their source, the options are below.

## Which command

| The user wants | Run |
| --- | --- |
{rows}

## When it fails

Scripts print one line starting with `error:` on stderr and exit non-zero: 2 means the command
was wrong (fix it), 1 means the input was (tell the user which file and why).
{fill} any other exit status and what to do about it.

## Reporting

{fill} what to tell the user - which file was written under `outputs/`, what it contains.
"""

SCRIPT_TEMPLATE = '''\
"""{fill} one line saying what this script is for."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_FAILED = 1
EXIT_USAGE = 2
WRITABLE_ROOTS = ("outputs", "temp")


class ScriptError(Exception):
    """A failure the user can act on: one line, with the exit status to use."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="{fill} what the script does, in one sentence.",
        epilog="Example: python skills/{id}/scripts/{name}.py uploads/input.txt "
        "--output outputs/result.txt",
    )
    parser.add_argument("input", help="the input file, e.g. uploads/input.txt")
    parser.add_argument("--output", "-o", required=True, help="result file under outputs/ or temp/")
    return parser


def output_path(argument: str) -> Path:
    """The result path, refused unless it lies under outputs/ or temp/ of the workspace."""
    cwd = Path.cwd().resolve()
    target = (cwd / argument).resolve()
    if not any((cwd / root) in target.parents for root in WRITABLE_ROOTS):
        message = f"{{argument}}: results are written only under outputs/ or temp/."
        raise ScriptError(message, EXIT_USAGE)
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def process(source: Path, target: Path) -> str:
    """Do the work; return the one-line summary printed for the model to pass on."""
    raise NotImplementedError("{fill} read source, write target, return a summary")


def main() -> int:
    args = build_parser().parse_args()
    source = Path(args.input)
    if not source.is_file():
        raise ScriptError(f"{{args.input}}: no such file (uploaded files are under uploads/).")
    print(process(source, output_path(args.output)))
    return 0


if __name__ == "__main__":
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding="utf-8")
    try:
        code = main()
    except ScriptError as error:
        print(f"error: {{error}}", file=sys.stderr)
        code = error.exit_code
    except Exception as error:  # the model must get one line, never a traceback
        print(f"error: {{type(error).__name__}}: {{error}}", file=sys.stderr)
        code = EXIT_FAILED
    sys.exit(code)
'''


class UsageError(Exception):
    """The arguments name a skill that cannot be created as asked."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Create skills-root/ID/ with SKILL.md (and scripts/NAME.py) to fill in.",
        epilog='Example: new_skill.py meeting-minutes --description "Use when the user wants '
        'minutes written from a meeting transcript" --script make_minutes',
    )
    parser.add_argument("id", help="lowercase letters, digits and hyphens, e.g. meeting-minutes")
    parser.add_argument(
        "--description", required=True, help="one line saying when to use the skill"
    )
    parser.add_argument(
        "--script",
        action="append",
        default=[],
        metavar="NAME",
        help="add scripts/NAME.py from a template (repeatable), e.g. --script make_minutes",
    )
    parser.add_argument(
        "--root",
        default="outputs/skills",
        help="folder to create the skill in (default outputs/skills: the agent cannot write "
        "to skills/, the user copies the finished folder there)",
    )
    return parser


def check_arguments(skill_id: str, description: str, scripts: list[str]) -> str:
    if not SKILL_ID.match(skill_id) or len(skill_id) > MAX_ID:
        raise UsageError(
            f"{skill_id!r} is not a skill id: use lowercase letters, digits and single hyphens "
            f"(at most {MAX_ID}), e.g. meeting-minutes."
        )
    description = description.strip()
    if not description or "\n" in description:
        raise UsageError("the description must be one non-empty line saying when to use the skill.")
    if len(description) > MAX_DESCRIPTION:
        raise UsageError(
            f"the description has {len(description)} characters; keep it under {MAX_DESCRIPTION}."
        )
    for name in scripts:
        if not SCRIPT_NAME.match(name):
            raise UsageError(f"{name!r} is not a script name: use snake_case, e.g. make_minutes.")
    return description


def yaml_line(text: str) -> str:
    """The description as a YAML scalar that stays one line whatever punctuation it holds."""
    needs_quotes = any(c in text for c in ":#'\"{}[],&*!|>%@`") or text[0] in "-?"
    return "'" + text.replace("'", "''") + "'" if needs_quotes else text


def scaffold(root: Path, skill_id: str, description: str, scripts: list[str]) -> list[Path]:
    folder = root / skill_id
    if folder.exists():
        raise FileExistsError(f"{folder}: already exists; choose another id or remove it first.")
    (folder / "scripts" if scripts else folder).mkdir(parents=True)
    rows = [
        f"| {SCAFFOLD_MARKER} a need | `python skills/{skill_id}/scripts/{name}.py uploads/FILE "
        f"--output outputs/RESULT` |"
        for name in scripts
    ] or [
        f"| {SCAFFOLD_MARKER} a need | {SCAFFOLD_MARKER} what to do: which tool, which arguments |"
    ]
    skill_md = folder / "SKILL.md"
    skill_md.write_text(
        SKILL_TEMPLATE.format(
            id=skill_id,
            description=yaml_line(description),
            title=skill_id.replace("-", " ").capitalize(),
            rows="\n".join(rows),
            fill=SCAFFOLD_MARKER,
        ),
        encoding="utf-8",
    )
    written = [skill_md]
    for name in scripts:
        script = folder / "scripts" / f"{name}.py"
        script.write_text(
            SCRIPT_TEMPLATE.format(id=skill_id, name=name, fill=SCAFFOLD_MARKER), encoding="utf-8"
        )
        written.append(script)
    return written


def main() -> int:
    args = build_parser().parse_args()
    description = check_arguments(args.id, args.description, args.script)
    written = scaffold(Path(args.root), args.id, description, args.script)
    print(f"Created skill {args.id!r}:")
    print("\n".join(path.as_posix() for path in written))
    folder = Path(args.root, args.id).as_posix()
    print(f"Next: replace every '{SCAFFOLD_MARKER}' part, then run")
    print(f"python skills/skill-creator/scripts/validate_skill.py {folder}")
    return 0


if __name__ == "__main__":
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding="utf-8")
    try:
        exit_code = main()
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        exit_code = EXIT_USAGE
    except OSError as error:
        print(f"error: {error}", file=sys.stderr)
        exit_code = EXIT_FAILED
    sys.exit(exit_code)
