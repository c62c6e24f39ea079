"""Every install hint names our own distribution, and the one the program prints fits the way
it was installed.

"generalagent" on the package index is another project (it pulls llama-index and more), so
`pip install 'generalAgent[ocr]'` installed someone else's program. The docs and code are
read for every command that installs an extra; the installed wheel is run from a plain
venv, a pipx venv and a uv tool venv (each marked the way that installer marks it), and
`doctor` must print the command for that installer.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from generalAgent.config.install import DISTRIBUTION
from tests.support.wheel import build_wheel, fresh_venv

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
# A requirement with extras inside an install command: `name[extra]` after pip/pipx/uv.
INSTALL_WITH_EXTRA = re.compile(
    r"(?:pip install|pipx (?:install|inject)|uv (?:tool )?(?:install|pip install)|--with)\s+"
    r"(?:-e\s+)?['\"]?([\w./-]*)\[([\w,-]+)\]"
)


def hint_sources() -> list[Path]:
    docs = [ROOT / "README.md", ROOT / "README.zh-CN.md", ROOT / "CONTRIBUTING.md", *ROOT.glob("docs/*.md")]
    code = [p for p in (ROOT / "generalAgent").rglob("*.py") if "builtin" not in p.parts]
    return [*docs, *code, ROOT / "generalAgent/locale/zh_CN/LC_MESSAGES/generalagent.po", ROOT / "Makefile"]


def test_the_distribution_is_ours_and_every_written_hint_names_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == DISTRIBUTION == "generalagent-cli"
    found = []
    for path in hint_sources():
        for match in INSTALL_WITH_EXTRA.finditer(path.read_text(encoding="utf-8")):
            name = match.group(1)
            found.append((path.relative_to(ROOT), match.group(0)))
            # Our distribution by name, or a clone by its path ('.', '/path/to/clone').
            assert name == DISTRIBUTION or name.startswith((".", "/")), (path, match.group(0))
    assert found, "no install hint found: the pattern no longer matches the docs"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def doctor_extras(venv: Path, env: dict[str, str], cwd: Path) -> str:
    result = subprocess.run(
        [str(venv / "bin" / "generalagent"), "doctor", "--offline"],
        cwd=cwd,
        env={k: v for k, v in env.items() if k != "PYTHONPATH"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    shown = " ".join(result.stdout.split())
    (line,) = [part for part in shown.split("✓ ") if part.startswith("extras ")]
    return line


@pytest.mark.parametrize(
    ("layout", "marker", "expected"),
    [
        ("venv", None, "{python} -m pip install 'generalagent-cli[local-embeddings]'"),
        (
            "pipx/venvs/generalagent-cli",
            "pipx_metadata.json",
            "pipx inject generalagent-cli 'sentence-transformers",
        ),
        (
            "uv/tools/generalagent-cli",
            "uv-receipt.toml",
            "uv tool install --with 'sentence-transformers<6,>=3' generalagent-cli",
        ),
    ],
)
def test_doctor_names_the_command_of_the_installer_that_installed_it(
    wheel: Path, tmp_path: Path, cli_env: dict[str, str], layout: str, marker: str | None, expected: str
) -> None:
    venv = fresh_venv(tmp_path, wheel, tmp_path / layout)
    if marker:  # what pipx and uv write into the venvs they make
        (venv / marker).write_text("{}\n" if marker.endswith(".json") else "[tool]\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    line = doctor_extras(venv, cli_env, elsewhere)
    # This environment has OCR and psycopg (the dev extra), not sentence-transformers.
    assert "ocr: installed" in line and "postgres: installed" in line, line
    assert expected.format(python=venv / "bin" / "python") in line, line
    assert "generalAgent[" not in line


@pytest.mark.skipif(Path(sys.prefix) != ROOT / ".venv", reason="not run from the clone's make venv")
def test_doctor_in_a_clone_set_up_by_make_names_make_extras(cli_env: dict[str, str], tmp_path: Path) -> None:
    line = doctor_extras(ROOT / ".venv", cli_env, tmp_path)
    assert f"local-embeddings: make -C {ROOT} extras EXTRAS=local-embeddings" in line, line
