"""Where settings come from: the environment, the folder's `.env` and a user-level `.env`.

Priority, highest first: environment variables, `./.env` (the folder the command runs
in), then the user-level file (`~/.config/generalagent/.env` on Linux, the platform's
equivalent elsewhere; GENERALAGENT_CONFIG_DIR moves it). So an installed `generalagent`
works from any folder with the user-level file alone, and a project folder can still
override it, once the user trusts that folder (config/trust.py): an untrusted folder's
`.env` is not read at all.

Every setting remembers where its value came from (`SettingSource`), so `config show`
and `doctor` can say it, and the rules for settings from a folder can be applied.

A relative path setting (DATA_DIR, SKILLS_DIR, ...) is relative to the folder of the file
that set it, so the user-level file's `DATA_DIR=data` means the same folder wherever the
command runs. With no DATA_DIR anywhere, data lives in the platform's user data folder
(`~/.local/share/generalagent` on Linux) whichever `.env` was found, so `--resume`, the
indexes and the knowledge base are the same from every folder; a folder keeps a store of
its own only when its `.env` says `DATA_DIR=data` (config/data_home.py moves the `./data`
older versions made there).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from generalAgent.config.trust import FolderTrust

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
    """The data home: sessions, indexes and the knowledge base, unless DATA_DIR names another."""
    override = os.environ.get(CONFIG_DIR_VARIABLE, "").strip()
    if override:
        return Path(override).expanduser() / "data"
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


@dataclass(frozen=True)
class ConfigFiles:
    """The `.env` files in effect, lowest priority first (the order they apply in)."""

    user: Path | None  # the user-level file, if it exists
    folder: Path | None  # ./.env, if it exists and the folder is trusted
    trust: FolderTrust = field(default_factory=FolderTrust)  # the decision about the folder

    @classmethod
    def find(cls, cwd: Path | None = None, trust: FolderTrust | None = None) -> ConfigFiles:
        """The files of the folder `cwd` (the current one), under `trust` (the stored decision)."""
        from generalAgent.config.trust import folder_trust

        here = cwd or Path.cwd()
        trust = trust or folder_trust(here)
        user = user_config_dir() / ENV_FILE_NAME
        folder = here / ENV_FILE_NAME
        if not folder.is_file() or not trust.applies:
            return cls(user if user.is_file() else None, None, trust)
        if user.is_file() and user.resolve() == folder.resolve():  # run in the user-level folder
            return cls(user, None, trust)
        return cls(user if user.is_file() else None, folder, trust)

    @property
    def in_order(self) -> tuple[Path, ...]:
        return tuple(path for path in (self.user, self.folder) if path is not None)


def raw_values(files: ConfigFiles) -> dict[str, str | None]:
    """Every variable by lower-case name, as pydantic-settings used to merge them: the files in
    order (a later one wins), then the environment over them. A `KEY` without `=` in a file
    is None (unset); `KEY=` is the empty text (the settings treat it as unset where a field
    allows it)."""
    from dotenv import dotenv_values

    values: dict[str, str | None] = {}
    for path in files.in_order:
        if path.is_file() or path.is_fifo():
            values.update(
                {key.lower(): value for key, value in dotenv_values(path, encoding="utf-8").items()}
            )
    values.update({key.lower(): value for key, value in os.environ.items()})
    return values


SourceKind = Literal["environment", "folder file", "user file", "given", "default"]


@dataclass(frozen=True)
class SettingSource:
    """Where one setting's value came from."""

    kind: SourceKind
    path: Path | None = None  # the file, for "folder file" and "user file"

    def describe(self) -> str:
        return f"{self.kind} {self.path}" if self.path is not None else self.kind

    @property
    def from_folder(self) -> bool:
        return self.kind == "folder file"


DEFAULT_SOURCE = SettingSource("default")


def setting_sources(
    files: ConfigFiles, names: Iterable[str], given: Iterable[str] = ()
) -> dict[str, SettingSource]:
    """For each setting (lower-case field name), where its value came from.

    The same order as `raw_values` and `load_settings` apply: a value given in code, then the
    environment, then the folder's file, then the user-level file, else the default.
    """
    from dotenv import dotenv_values

    given_names = {name.lower() for name in given}
    environment = {key.lower() for key in os.environ}
    in_file: dict[str, SettingSource] = {}
    for kind, path in (("user file", files.user), ("folder file", files.folder)):
        if path is None:
            continue
        source = SettingSource(kind, path)  # type: ignore[arg-type] # one of the two kinds above
        for key in dotenv_values(path):
            in_file[key.lower()] = source  # the folder's file is read last: it wins
    sources: dict[str, SettingSource] = {}
    for name in names:
        key = name.lower()
        if key in given_names:
            sources[key] = SettingSource("given")
        elif key in environment:
            sources[key] = SettingSource("environment")
        else:
            sources[key] = in_file.get(key, DEFAULT_SOURCE)
    return sources


def path_origins(files: ConfigFiles, names: Iterable[str]) -> dict[str, Path]:
    """For each path setting a file sets, the folder its relative value is relative to.

    A value from the environment (or not set at all) has no entry: it stays relative to
    the current folder.
    """
    from dotenv import dotenv_values  # the settings' own .env reader (config/sources.py)

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
