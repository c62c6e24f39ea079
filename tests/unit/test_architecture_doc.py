"""docs/architecture.md names every module of the package, so a newcomer finds each one."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "generalAgent"


def test_every_module_has_its_line_in_the_architecture() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    modules = sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        # builtin/ is package data: the skills' scripts are run as files, never imported
        if path.name != "__init__.py" and path.relative_to(PACKAGE).parts[0] != "builtin"
    )
    assert len(modules) > 80
    missing = [module for module in modules if module not in text]
    assert not missing, f"name these modules in docs/architecture.md: {missing}"


def test_no_module_named_there_is_gone() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Modules", 1)[1].split("\n## ", 1)[0]
    named = [
        word for line in section.splitlines() for word in line.split()[:1] if word.endswith((".py", ".yaml"))
    ]
    assert named, "the Modules section lists no module"
    gone = [module for module in named if not (PACKAGE / module).exists()]
    assert not gone, f"docs/architecture.md names modules that no longer exist: {gone}"
