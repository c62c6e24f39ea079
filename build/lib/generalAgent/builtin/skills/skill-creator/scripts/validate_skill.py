"""Check that a skill folder will load and work: front matter, instructions, scripts' --help.

The front-matter rules are the ones generalAgent's skill loader enforces (a skill that breaks
them is skipped with a warning at start-up), plus checks that catch a skill the model could not
use: scripts that do not answer --help, paths in SKILL.md that do not exist, scaffold text left
in. Problems make the exit status 1; warnings do not.
"""

from __future__ import annotations

import argparse
import py_compile
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

try:
    import yaml
except ImportError:
    sys.exit(
        f"error: PyYAML is not installed for {sys.executable}; "
        "run the script with the Python that runs generalAgent."
    )

SKILL_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_ID = 64
MAX_DESCRIPTION = 400
KNOWN_KEYS = {"name", "description", "allowed-tools"}
# In two pieces so that this file does not match its own check.
SCAFFOLD_MARKER = "FILL" + " IN:"
LONG_SKILL_MD_LINES = 300
HELP_TIMEOUT_SECONDS = 30
TEXT_SUFFIXES = {".md", ".py", ".txt", ".json", ".yaml", ".yml", ".csv"}


@dataclass
class Findings:
    skill: str
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    scripts_checked: int = 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Validate skill folders (or a folder of skills) for generalAgent.",
        epilog="Examples: validate_skill.py outputs/skills/meeting-minutes ; "
        "validate_skill.py skills",
    )
    parser.add_argument("paths", nargs="+", help="a skill folder, or a folder holding skills")
    parser.add_argument(
        "--no-run", action="store_true", help="do not run the scripts (only compile them)"
    )
    return parser


def skill_folders(path: Path) -> list[Path]:
    """`path` itself if it is a skill, else its sub-folders as the loader sees them."""
    if (path / "SKILL.md").exists() or not path.is_dir():
        return [path]
    children = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    return children or [path]


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise ValueError("no front matter: SKILL.md must start with a line '---'")
    for end in range(1, len(lines)):
        if lines[end].strip() in {"---", "..."}:
            break
    else:
        raise ValueError("front matter is not closed by a line '---'")
    try:
        data = yaml.safe_load("".join(lines[1:end])) or {}
    except yaml.YAMLError as error:
        raise ValueError(
            f"front matter is not valid YAML: {' '.join(str(error).split())}"
        ) from None
    if not isinstance(data, dict):
        raise ValueError("front matter must be key: value lines (name, description)")
    return data, "".join(lines[end + 1 :])


def check_front_matter(meta: dict[str, object], folder: Path, findings: Findings) -> None:
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        findings.problems.append("front matter has no 'name'")
    elif not SKILL_ID.match(name) or len(name) > MAX_ID:
        findings.problems.append(
            f"name {name!r}: use lowercase letters, digits and single hyphens (at most {MAX_ID})"
        )
    elif name != folder.name:
        findings.problems.append(
            f"name {name!r} differs from the folder name {folder.name!r}; they must be equal"
        )
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        findings.problems.append("front matter has no 'description' (one line: when to use it)")
    elif "\n" in description.strip():
        findings.problems.append("description spans several lines; make it one line")
    elif len(description) > MAX_DESCRIPTION:
        findings.problems.append(
            f"description has {len(description)} characters; the loader allows {MAX_DESCRIPTION}"
        )
    unknown = sorted(set(meta) - KNOWN_KEYS)
    if unknown:
        findings.warnings.append(f"front matter keys the loader ignores: {', '.join(unknown)}")


def check_body(body: str, folder: Path, findings: Findings) -> None:
    if not body.strip():
        findings.problems.append("SKILL.md has no instructions after the front matter")
        return
    lines = body.count("\n") + 1
    if lines > LONG_SKILL_MD_LINES:
        findings.warnings.append(
            f"SKILL.md is {lines} lines; the model reads all of it on every use - move detail "
            "to references/"
        )
    own_paths = re.findall(rf"skills/{re.escape(folder.name)}/([\w./-]+)", body)
    for relative in sorted({p.rstrip(".,;:") for p in own_paths}):
        if not (folder / relative).exists():
            findings.problems.append(
                f"SKILL.md mentions skills/{folder.name}/{relative}, which does not exist"
            )
    for script in sorted((folder / "scripts").glob("*.py")):
        if not script.name.startswith("_") and f"scripts/{script.name}" not in body:
            findings.warnings.append(
                f"scripts/{script.name} is not mentioned in SKILL.md, so the model will not run it"
            )


def check_scaffold_text(folder: Path, findings: Findings) -> None:
    for file in sorted(folder.rglob("*")):
        if not file.is_file() or file.suffix not in TEXT_SUFFIXES:
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            findings.problems.append(f"{file.relative_to(folder)} is not UTF-8")
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if SCAFFOLD_MARKER in line:
                findings.problems.append(
                    f"{file.relative_to(folder)}:{number} still has scaffold text "
                    f"({SCAFFOLD_MARKER})"
                )


def check_scripts(folder: Path, findings: Findings, *, run: bool) -> None:
    """Every scripts/*.py compiles; those not starting with _ are commands that answer --help."""
    scripts = sorted((folder / "scripts").glob("*.py"))
    with tempfile.TemporaryDirectory() as scratch:
        for script in scripts:
            label = f"scripts/{script.name}"
            try:
                py_compile.compile(str(script), cfile=str(Path(scratch) / "c.pyc"), doraise=True)
            except py_compile.PyCompileError as error:
                findings.problems.append(f"{label} does not compile: {error.msg.strip()}")
                continue
            if script.name.startswith("_") or not run:
                continue
            findings.scripts_checked += 1
            # From an empty folder: a script that writes on --help writes nowhere that matters.
            try:
                result = subprocess.run(
                    [sys.executable, str(script.resolve()), "--help"],
                    cwd=scratch,
                    capture_output=True,
                    text=True,
                    encoding="utf-8",
                    errors="replace",
                    timeout=HELP_TIMEOUT_SECONDS,
                )
            except subprocess.TimeoutExpired:
                findings.problems.append(
                    f"{label} --help did not finish in {HELP_TIMEOUT_SECONDS} s"
                )
                continue
            if result.returncode != 0:
                last = (result.stderr.strip().splitlines() or ["no output"])[-1]
                findings.problems.append(f"{label} --help exited with {result.returncode}: {last}")
            elif "usage" not in result.stdout.lower():
                findings.problems.append(f"{label} --help printed no usage text")


def validate(folder: Path, *, run: bool) -> Findings:
    findings = Findings(folder.name)
    skill_md = folder / "SKILL.md"
    if not folder.is_dir():
        findings.problems.append(f"{folder}: no such folder")
        return findings
    if not skill_md.is_file():
        findings.problems.append("no SKILL.md in the folder")
        return findings
    try:
        meta, body = split_front_matter(skill_md.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        findings.problems.append("SKILL.md is not UTF-8")
        return findings
    except ValueError as error:
        findings.problems.append(str(error))
        return findings
    check_front_matter(meta, folder, findings)
    check_body(body, folder, findings)
    check_scaffold_text(folder, findings)
    check_scripts(folder, findings, run=run)
    return findings


def main() -> int:
    args = build_parser().parse_args()
    failed = 0
    for argument in args.paths:
        for folder in skill_folders(Path(argument)):
            findings = validate(folder, run=not args.no_run)
            scripts = findings.scripts_checked
            verb = "script answers" if scripts == 1 else "scripts answer"
            detail = f"{scripts} {verb} --help" if scripts else "no scripts run"
            if findings.problems:
                failed += 1
                print(f"FAIL {findings.skill}")
                for problem in findings.problems:
                    print(f"  - {problem}")
            else:
                print(f"ok   {findings.skill} ({detail})")
            for warning in findings.warnings:
                print(f"  warning: {warning}")
    return 1 if failed else 0


if __name__ == "__main__":
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding="utf-8")
    sys.exit(main())
