"""The wheel, installed outside the repository, finds its skills, agents and knowledge.

`pip install .` and `pipx install .` install the wheel; what is not package data is not
there. This builds the wheel from a copy of the sources (so nothing of the checkout can
be found by accident), installs it into a fresh venv in a temporary folder, and runs the
installed `generalagent` from another folder: `doctor --offline` and `-p` with `@pdf`
against the local model server, and what built-in knowledge its settings find.

Offline and quick: the wheel is built with the setuptools already installed (no build
isolation, no index), and the fresh venv gets no copies of the dependencies: a `.pth`
file adds this environment's site-packages after its own. Only the folder is added, not
its `.pth` files, so the editable install of the checkout is not importable there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from generalAgent.agent_profiles import load_agent_profiles
from generalAgent.config.paths import builtin_path
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.wheel import build_wheel, fresh_venv

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
# Run by the installed interpreter: where generalAgent is, and the knowledge its settings find.
FOUND_THERE = (
    "import generalAgent; from generalAgent.config.settings import load_settings; "
    "folder = load_settings(env_file=None).paths.knowledge_dir; print(generalAgent.__file__); "
    "[print(p.relative_to(folder)) for p in sorted(folder.glob('*/*.md'))]"
)


def test_the_installed_wheel_has_its_skills_agents_and_knowledge(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    wheel = build_wheel(tmp_path)
    venv = fresh_venv(tmp_path, wheel)
    command = str(venv / "bin" / "generalagent")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in cli_env.items() if k != "PYTHONPATH"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [command, *args],
            cwd=elsewhere,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=90,
        )

    found = subprocess.run(
        [str(venv / "bin" / "python"), "-c", FOUND_THERE],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert found[0].startswith(str(venv)), found  # the wheel's copy, not the checkout
    knowledge = sorted(
        p.relative_to(builtin_path("knowledge")) for p in builtin_path("knowledge").glob("*/*.md")
    )
    assert found[1:] == [str(path) for path in knowledge]  # built-in knowledge, as kb sync reads it

    doctor = run("doctor", "--offline")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    shipped = sorted(p.name for p in builtin_path("skills").iterdir() if (p / "SKILL.md").is_file())
    detail = " ".join(doctor.stdout.split())
    agents = load_agent_profiles(builtin_path("agents")).profiles
    assert f"; {len(shipped)} skills; {len(agents)} agents" in detail, detail

    openai_server.add(Reply(text="The PDF skill is ready."))
    answered = run("-p", "@pdf how many pages has it?")
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout == "The PDF skill is ready.\n"
    request = openai_server.chat_requests[-1]
    assert "run_bash_command" in request.tool_names  # the skill's allowed-tools
    assert "read skills/pdf/SKILL.md" in request.messages[-1]["content"]
    assert "Unknown @pdf" not in answered.stderr


def test_doctor_fails_without_skills(cli_env: dict[str, str], workdir: Path) -> None:
    empty = workdir / "no-skills"
    empty.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "generalAgent", "doctor", "--offline"],
        cwd=workdir,
        env={**cli_env, "SKILLS_DIR": str(empty)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert result.returncode == 1
    shown = " ".join(result.stdout.split())
    assert "0 skills" in shown and "no skills in" in shown and "1 check failed" in shown
