"""Every shipped skill loads and every script in it is a working command.

Checked directly here, independently of validate_skill.py, so a bug in the validator cannot hide
a broken shipped skill.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.unit.skills.conftest import SKILLS_DIR

SKILL_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
SHIPPED = {"pdf", "docx-report", "skill-creator"}

SKILL_FOLDERS = sorted(p for p in SKILLS_DIR.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
SCRIPTS = sorted(
    script
    for folder in SKILL_FOLDERS
    for script in (folder / "scripts").glob("*.py")
    if not script.name.startswith("_")
)
ALL_MODULES = sorted(script for folder in SKILL_FOLDERS for script in folder.rglob("*.py"))


def front_matter(skill_md: Path) -> tuple[dict, str]:
    text = skill_md.read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n(.*)", text, re.DOTALL)
    assert match, f"{skill_md} does not start with --- front matter ---"
    return yaml.safe_load(match.group(1)), match.group(2)


def test_the_three_skills_are_shipped():
    assert {p.name for p in SKILL_FOLDERS} >= SHIPPED
    assert len(SCRIPTS) >= 9


@pytest.mark.smoke
@pytest.mark.parametrize("folder", SKILL_FOLDERS, ids=lambda p: p.name)
def test_front_matter_is_what_the_loader_accepts(folder: Path):
    meta, body = front_matter(folder / "SKILL.md")
    assert meta["name"] == folder.name
    assert SKILL_ID.match(meta["name"]) and len(meta["name"]) <= 64
    description = meta["description"]
    assert isinstance(description, str) and description.strip()
    assert "\n" not in description.strip() and len(description) <= 400
    assert body.strip()


@pytest.mark.parametrize("folder", SKILL_FOLDERS, ids=lambda p: p.name)
def test_every_command_in_skill_md_names_an_existing_script(folder: Path):
    _, body = front_matter(folder / "SKILL.md")
    mentioned = set(re.findall(rf"skills/{re.escape(folder.name)}/(scripts/[\w.]+\.py)", body))
    for relative in mentioned:
        assert (folder / relative).is_file(), relative
    scripts = {f"scripts/{p.name}" for p in (folder / "scripts").glob("[!_]*.py")}
    assert scripts <= mentioned, f"scripts SKILL.md never tells the model to run: {scripts - mentioned}"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_script_answers_help(script: Path, tmp_path: Path):
    result = subprocess.run(
        [sys.executable, str(script), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage:")
    assert list(tmp_path.iterdir()) == []  # --help writes nothing


@pytest.mark.parametrize("module", ALL_MODULES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_module_opens_with_a_line_saying_what_it_is_for(module: Path):
    first = module.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith('"""') and len(first) > 20
