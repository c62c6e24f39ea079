"""Local embedding models: which ones `models pull` offers, where they are kept, which is active.

A pulled model lives in the user's cache (EMBEDDING_MODELS_DIR, by default
~/.cache/generalagent/models on Linux), one folder per hub repository (`owner--name`),
with a `.complete` mark written once every file is verified: a folder without it is an
interrupted pull that the next pull continues. The file `active` names the model that
semantic search uses from then on (unless EMBEDDING_LOCAL_MODEL says otherwise).

The default is minishlab/potion-multilingual-128M: a static model (search/static_embeddings.py)
distilled from BAAI/bge-m3, 101 languages, MIT licensed, ~500 MB, which needs neither torch
nor a GPU. Any sentence-transformers repository can be pulled too and runs when the
`local-embeddings` extra (sentence-transformers, torch) is installed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from generalAgent.config.sources import CONFIG_DIR_VARIABLE
from generalAgent.display import N_

if TYPE_CHECKING:  # httpx takes ~0.3-0.8 s to import: only a pull needs it, not every search
    import httpx

    from generalAgent.search.model_download import HubFile, Progress

Runtime = Literal["static", "sentence-transformers"]
COMPLETE_MARK = ".complete"
ACTIVE_FILE = "active"
DEFAULT_HUB = "https://huggingface.co"


@dataclass(frozen=True)
class KnownModel:
    """A model `models pull` knows by a short name, with the facts a user chooses by."""

    name: str
    repo: str
    runtime: Runtime
    licence: str
    languages: str  # N_-marked: `models list` shows it in the UI language
    size: str


CATALOGUE = (
    KnownModel(
        "potion-multilingual-128M",
        "minishlab/potion-multilingual-128M",
        "static",
        "MIT",
        N_("101 languages (distilled from bge-m3)"),
        "~500 MB",
    ),
    KnownModel("potion-base-8M", "minishlab/potion-base-8M", "static", "MIT", N_("English"), "~30 MB"),
    KnownModel(
        "paraphrase-multilingual-MiniLM-L12-v2",
        "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
        "sentence-transformers",
        "Apache-2.0",
        N_("50+ languages (needs the local-embeddings extra)"),
        "~470 MB",
    ),
)
DEFAULT_MODEL = CATALOGUE[0].name

# Other formats of the same weights that a hub repository often carries besides the one we read.
SKIPPED_FOLDERS = ("onnx/", "openvino/", "coreml/")
SKIPPED_SUFFIXES = (".onnx", ".h5", ".msgpack", ".ot", ".gguf", ".tflite", ".pt")


def models_dir(configured: str | None) -> Path:
    """EMBEDDING_MODELS_DIR, or the user's cache folder for generalagent's models (under
    GENERALAGENT_CONFIG_DIR when that is set)."""
    if configured:
        return Path(configured).expanduser()
    override = os.environ.get(CONFIG_DIR_VARIABLE, "").strip()
    if override:  # one folder for everything (as user_data_dir does): tests, portable set-ups
        return Path(override).expanduser() / "cache" / "models"
    import platformdirs

    return Path(platformdirs.user_cache_dir("generalagent", appauthor=False)) / "models"


def repo_of(name: str) -> str:
    """The hub repository of a catalogue name, or `name` itself when it is `owner/name`."""
    for known in CATALOGUE:
        if name.lower() in (known.name.lower(), known.repo.lower()):
            return known.repo
    if name.count("/") == 1 and all(part.strip() for part in name.split("/")):
        return name.strip()
    raise ValueError(name)


def folder_of(root: Path, repo: str) -> Path:
    return root / repo.replace("/", "--")


def is_complete(folder: Path) -> bool:
    return (folder / COMPLETE_MARK).is_file()


def wanted(files: list[HubFile]) -> list[HubFile]:
    """The files a model needs: one format of its weights (safetensors when there are)."""
    has_safetensors = any(f.path.endswith(".safetensors") for f in files)
    kept = []
    for file in files:
        if file.path.startswith(SKIPPED_FOLDERS) or file.path.endswith(SKIPPED_SUFFIXES):
            continue
        if has_safetensors and file.path.endswith(".bin"):
            continue
        kept.append(file)
    return kept


def pull(
    name: str,
    root: Path,
    endpoint: str,
    progress: Progress | None = None,
    *,
    activate: bool = True,
    transport: httpx.BaseTransport | None = None,
) -> Path:
    """Download the model `name` (catalogue name or `owner/name`) into `root`, verified,
    continuing an interrupted pull; make it the active model. Returns its folder.
    Raises ValueError for a name that is neither, DownloadError when the download fails."""
    from generalAgent.search.model_download import download_repo

    repo = repo_of(name)
    folder = folder_of(root, repo)
    folder.mkdir(parents=True, exist_ok=True)
    download_repo(endpoint, repo, folder, wanted, progress, transport=transport)
    (folder / COMPLETE_MARK).write_text(repo + "\n", encoding="utf-8")
    if activate:
        set_active(root, repo)
    return folder


def set_active(root: Path, repo: str) -> None:
    """Make the pulled model `repo` the one semantic search uses."""
    path = root / ACTIVE_FILE
    temporary = path.with_name(ACTIVE_FILE + ".tmp")
    temporary.write_text(repo + "\n", encoding="utf-8")
    os.replace(temporary, path)


def active_repo(root: Path) -> str | None:
    """The repository of the active pulled model, if it is still complete in `root`."""
    try:
        repo = (root / ACTIVE_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return repo if repo and is_complete(folder_of(root, repo)) else None


@dataclass(frozen=True)
class InstalledModel:
    repo: str
    folder: Path
    bytes: int
    active: bool


def installed(root: Path) -> list[InstalledModel]:
    """The complete pulled models in `root`, by repository name."""
    if not root.is_dir():
        return []
    active = active_repo(root)
    found = []
    for folder in sorted(root.iterdir()):
        if folder.is_dir() and is_complete(folder):
            repo = (folder / COMPLETE_MARK).read_text(encoding="utf-8").strip() or folder.name
            size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
            found.append(InstalledModel(repo, folder, size, repo == active))
    return found


def pulled_folder(root: Path, name: str) -> Path | None:
    """The folder of the pulled model `name` (catalogue name or `owner/name`), if complete."""
    try:
        folder = folder_of(root, repo_of(name))
    except ValueError:
        return None
    return folder if is_complete(folder) else None
