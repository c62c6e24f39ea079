"""A wheel of the checkout, built offline, and a fresh venv that has it (tests of the installed
program: tests/e2e/test_installed_wheel.py, tests/e2e/test_install_hints.py).

The wheel is built with the setuptools already installed (no build isolation, no index), and
the fresh venv gets no copies of the dependencies: a `.pth` file adds this environment's
site-packages after its own. Only the folder is added, not its `.pth` files, so the editable
install of the checkout is not importable there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_wheel(target: Path) -> Path:
    source = target / "src"
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    shutil.copy(ROOT / "README.md", source)
    shutil.copytree(
        ROOT / "generalAgent",
        source / "generalAgent",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
    )
    dist = target / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(dist), str(source)],
        check=True,
        capture_output=True,
        timeout=180,
    )
    (wheel,) = dist.glob("*.whl")
    return wheel


def fresh_venv(target: Path, wheel: Path, venv: Path | None = None) -> Path:
    """A venv (at `venv`, target/venv by default) with the wheel and, through a .pth, this
    environment's dependencies."""
    venv = venv or target / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
    subprocess.run(
        [*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
        timeout=180,
    )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (Path(site) / "zz_dependencies.pth").write_text("\n".join(ours) + "\n", encoding="utf-8")
    return venv
