"""The skill-creator skill: scaffolding a skill, and the validator catching what would break it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.unit.skills.conftest import RunScript

NEW_SKILL = "skills/skill-creator/scripts/new_skill.py"
VALIDATE = "skills/skill-creator/scripts/validate_skill.py"
MARKER = "FILL" + " IN:"

FINISHED_SCRIPT = '''\
"""Count the words of a text file and write the count to a file."""

import argparse
from pathlib import Path

parser = argparse.ArgumentParser(description="Count words.")
parser.add_argument("input")
parser.add_argument("--output", required=True)
args = parser.parse_args()
count = len(Path(args.input).read_text(encoding="utf-8").split())
Path(args.output).write_text(f"{count}\\n", encoding="utf-8")
print(f"Wrote {args.output}: {count} words.")
'''


def write_skill(root: Path, folder: str, skill_md: str, scripts: dict[str, str] | None = None):
    skill = root / folder
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(skill_md, encoding="utf-8")
    for name, text in (scripts or {}).items():
        (skill / "scripts").mkdir(exist_ok=True)
        (skill / "scripts" / name).write_text(text, encoding="utf-8")
    return skill


def good_skill_md(name: str = "word-count", description: str = "Use to count words.") -> str:
    return (
        f"---\nname: {name}\ndescription: {description}\n---\n\n# Word count\n\n"
        f"Run `python skills/{name}/scripts/count.py uploads/a.txt --output outputs/n.txt`.\n"
    )


@pytest.mark.smoke
def test_scaffold_then_fill_in_then_validate(run_script: RunScript, workspace: Path):
    created = run_script(
        NEW_SKILL,
        "word-count",
        "--description",
        "Use when: the user wants words counted",
        "--script",
        "count",
    )
    assert created.returncode == 0, created.stderr
    folder = workspace / "outputs" / "skills" / "word-count"
    skill_md = folder / "SKILL.md"
    script = folder / "scripts" / "count.py"
    assert "outputs/skills/word-count/SKILL.md" in created.stdout
    text = skill_md.read_text(encoding="utf-8")
    assert text.startswith("---\nname: word-count\n")
    assert "description: 'Use when: the user wants words counted'" in text
    assert "python skills/word-count/scripts/count.py" in text
    assert run_script("outputs/skills/word-count/scripts/count.py", "--help").returncode == 0

    unfinished = run_script(VALIDATE, "outputs/skills/word-count")
    assert unfinished.returncode == 1
    assert unfinished.stdout.startswith("FAIL word-count")
    assert "SKILL.md:" in unfinished.stdout and "scripts/count.py:1" in unfinished.stdout

    skill_md.write_text(re.sub(rf"{MARKER}[^\n|]*", "Counts words.", text), encoding="utf-8")
    script.write_text(FINISHED_SCRIPT, encoding="utf-8")
    finished = run_script(VALIDATE, "outputs/skills/word-count")
    assert finished.returncode == 0, finished.stdout
    assert finished.stdout.startswith("ok   word-count (1 script answers --help)")


def test_scaffolded_script_guards_its_output_and_reports_unfinished_work(
    run_script: RunScript, workspace: Path
):
    run_script(NEW_SKILL, "echo-tool", "--description", "Use to echo.", "--script", "echo")
    (workspace / "uploads" / "in.txt").write_text("hi", encoding="utf-8")
    script = "outputs/skills/echo-tool/scripts/echo.py"
    outside = run_script(script, "uploads/in.txt", "--output", "../x.txt")
    assert outside.returncode == 2 and "outputs/ or temp/" in outside.stderr
    unfinished = run_script(script, "uploads/in.txt", "--output", "outputs/x.txt")
    assert unfinished.returncode == 1
    assert unfinished.stderr.startswith("error: NotImplementedError") and "Traceback" not in (
        unfinished.stderr
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["My_Skill", "--description", "x"], "not a skill id"),
        (["a--b", "--description", "x"], "not a skill id"),
        (["-x", "--description", "x"], ""),
        (["ok-id", "--description", "  "], "one non-empty line"),
        (["ok-id", "--description", "two\nlines"], "one non-empty line"),
        (["ok-id", "--description", "x" * 401], "under 400"),
        (["ok-id", "--description", "x", "--script", "Bad-Name"], "snake_case"),
    ],
)
def test_scaffold_refuses_bad_arguments(
    run_script: RunScript, workspace: Path, args: list[str], message: str
):
    result = run_script(NEW_SKILL, *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert not (workspace / "outputs" / "skills").exists()


def test_scaffold_never_overwrites_an_existing_skill(run_script: RunScript, workspace: Path):
    assert run_script(NEW_SKILL, "notes", "--description", "Use for notes.").returncode == 0
    skill_md = workspace / "outputs" / "skills" / "notes" / "SKILL.md"
    skill_md.write_text("my work", encoding="utf-8")
    again = run_script(NEW_SKILL, "notes", "--description", "Use for notes.")
    assert again.returncode == 1 and "already exists" in again.stderr
    assert skill_md.read_text(encoding="utf-8") == "my work"


BROKEN_SKILLS = [
    ("word-count", None, {}, "no SKILL.md"),
    ("word-count", "# Word count\n\nNo front matter.\n", {}, "must start with a line '---'"),
    ("word-count", "---\nname: word-count\ndescription: x\n", {}, "not closed"),
    ("word-count", "---\nname: [word\n---\nbody\n", {}, "not valid YAML"),
    ("word-count", good_skill_md(name="wordcount"), {}, "differs from the folder name"),
    ("Word-Count", good_skill_md(name="Word-Count"), {}, "lowercase letters"),
    ("word-count", "---\nname: word-count\n---\nbody\n", {}, "no 'description'"),
    (
        "word-count",
        "---\nname: word-count\ndescription: |\n  line one\n  line two\n---\nbody\n",
        {},
        "one line",
    ),
    ("word-count", good_skill_md(description="x" * 401), {}, "allows 400"),
    ("word-count", "---\nname: word-count\ndescription: Use it.\n---\n\n", {}, "no instructions"),
    ("word-count", good_skill_md(), {}, "skills/word-count/scripts/count.py, which does not"),
    (
        "word-count",
        good_skill_md(),
        {"count.py": "import sys\nsys.exit(3)\n"},
        "--help exited with 3",
    ),
    (
        "word-count",
        good_skill_md(),
        {"count.py": "import argparse\nprint('no parser')\n"},
        "printed no usage",
    ),
    ("word-count", good_skill_md(), {"count.py": "def broken(:\n"}, "does not compile"),
]


@pytest.mark.parametrize(("folder", "skill_md", "scripts", "message"), BROKEN_SKILLS)
def test_validator_names_what_is_wrong(
    run_script: RunScript,
    workspace: Path,
    folder: str,
    skill_md: str | None,
    scripts: dict[str, str],
    message: str,
):
    skill = workspace / "temp" / folder
    if skill_md is None:
        skill.mkdir(parents=True)
    else:
        write_skill(workspace / "temp", folder, skill_md, scripts)
    result = run_script(VALIDATE, f"temp/{folder}")
    assert result.returncode == 1, result.stdout
    assert result.stdout.startswith(f"FAIL {folder}")
    assert message in result.stdout


def test_validator_warns_about_scripts_the_instructions_never_mention(run_script: RunScript, workspace: Path):
    write_skill(
        workspace / "temp",
        "word-count",
        good_skill_md(),
        {"count.py": FINISHED_SCRIPT, "extra.py": FINISHED_SCRIPT, "_shared.py": "X = 1\n"},
    )
    result = run_script(VALIDATE, "temp/word-count")
    assert result.returncode == 0, result.stdout
    assert "ok   word-count (2 scripts answer --help)" in result.stdout
    assert "warning: scripts/extra.py is not mentioned" in result.stdout
    assert "_shared.py" not in result.stdout


def test_validator_checks_every_skill_in_a_folder_of_skills(run_script: RunScript):
    result = run_script(VALIDATE, "skills")
    assert result.returncode == 0, result.stdout
    assert [line.split()[1] for line in result.stdout.splitlines() if line.startswith("ok")] == [
        "docx-report",
        "pdf",
        "skill-creator",
    ]
