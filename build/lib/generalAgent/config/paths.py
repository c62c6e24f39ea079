"""Where path settings point: the folders shipped in the package, and relative values anchored.

A relative path setting (DATA_DIR, SKILLS_DIR, ...) is relative to the folder of the file
that set it (config/sources.py: `path_origins`), so the user-level file's `DATA_DIR=data`
means the same folder wherever the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from generalAgent.config.sources import ConfigFiles, path_origins

if TYPE_CHECKING:
    from generalAgent.config.settings import PathSettings

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def builtin_path(name: str) -> Path:
    """A folder that ships inside the package (`skills`, `agents`, `knowledge`): the same
    place in a clone, after `pip install .` and after `pipx install .` (package data)."""
    return PACKAGE_DIR / "builtin" / name


def anchored_paths(paths: PathSettings, files: ConfigFiles, given: dict[str, Any]) -> PathSettings:
    """Relative path settings made relative to the file that set them (config/sources.py)."""
    names = [name for name, info in type(paths).model_fields.items() if info.annotation is Path]
    origins = path_origins(files, [name for name in names if name not in given])
    update: dict[str, Path] = {}
    for name, folder in origins.items():
        value = getattr(paths, name)
        if not value.is_absolute():
            update[name] = folder / value.expanduser()
    return paths.model_copy(update=update) if update else paths
