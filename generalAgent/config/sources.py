"""Where settings come from: the environment, the folder's `.env` and a user-level `.env`.

Priority, highest first: environment variables, `./.env` (the folder the command runs
in), then the user-level file (`~/.config/generalagent/.env` on Linux, the platform's
equivalent elsewhere; GENERALAGENT_CONFIG_DIR moves it). So an installed `generalagent`
works from any folder with the user-level file alone, and a project folder can still
override it.

A relative path setting (DATA_DIR, SKILLS_DIR, ...) is relative to the folder of the file
that set it, so the user-level file's `DATA_DIR=data` means the same folder wherever the
command runs. With no DATA_DIR anywhere, data lives in `./data` next to a folder `.env`
(as it always has), else, when only the user-level file exists, in the platform's user data
folder (`~/.local/share/generalagent` on Linux), so `--resume` finds every session.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "generalagent"
CONFIG_DIR_VARIABLE = "GENERALAGENT_CONFIG_DIR"
ENV_FILE_NAME = ".env"


def user_config_dir() -> Path:
    """The folder of the user-level `.env` (and AGENTS.md, mcp.json ...)."""
    override = os.environ.get(CONFIG_DIR_VARIABLE, "").strip()
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def user_data_dir() -> Path:
    """Where sessions and indexes live when only the user-level file configures the command."""
    override = os.environ.get(CONFIG_DIR_VARIABLE, "").strip()
    if override:
        return Path(override).expanduser() / "data"
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


@dataclass(frozen=True)
class ConfigFiles:
    """The `.env` files in effect, lowest priority first (the order pydantic-settings wants)."""

    user: Path | None  # the user-level file, if it exists
    folder: Path | None  # ./.env, if it exists

    @classmethod
    def find(cls, cwd: Path | None = None) -> ConfigFiles:
        user = user_config_dir() / ENV_FILE_NAME
        folder = (cwd or Path.cwd()) / ENV_FILE_NAME
        return cls(user if user.is_file() else None, folder if folder.is_file() else None)

    @property
    def in_order(self) -> tuple[Path, ...]:
        return tuple(path for path in (self.user, self.folder) if path is not None)

    def describe(self) -> str:
        """For `doctor` and the first-run message: which files were read."""
        if not self.in_order:
            return f"no .env in this folder and no user-level {user_config_dir() / ENV_FILE_NAME}"
        return " + ".join(str(path) for path in reversed(self.in_order)) + " (first wins)"


def path_origins(files: ConfigFiles, names: Iterable[str]) -> dict[str, Path]:
    """For each path setting a file sets, the folder its relative value is relative to.

    A value from the environment (or not set at all) has no entry: it stays relative to
    the current folder.
    """
    from dotenv import dotenv_values  # pydantic-settings' own .env reader

    wanted = {name.lower() for name in names}
    origins: dict[str, Path] = {}
    for path in files.in_order:  # later (higher-priority) files win
        for key, value in dotenv_values(path).items():
            if key.lower() in wanted and value:
                origins[key.lower()] = path.resolve().parent
    for name in list(origins):
        if _in_environment(name, os.environ):
            del origins[name]
    return origins


def _in_environment(name: str, environ: Mapping[str, str]) -> bool:
    return any(key.lower() == name and value.strip() for key, value in environ.items())
