"""Downloading a model's files from a Hugging Face hub: listed, resumable and verified.

`generalagent models pull` is the only caller, so nothing is fetched unless the user asks.
The hub is `HF_ENDPOINT` (https://huggingface.co, or a mirror that speaks the same API such
as https://hf-mirror.com for users in mainland China). The file list comes from the hub's
tree API, which gives each file's size and checksum: the SHA-256 of files kept in Git LFS
(the weights), the git blob SHA-1 of the others. A file is downloaded into `NAME.part`
beside its final place and renamed only once its size and checksum match, so a folder
never holds a half-written or corrupted model; a server sending more than the listed size is
stopped at that size and its `.part` deleted (a file listed as 10 B never grows to 200 MB); an interrupted download continues from the
`.part` file's length with an HTTP Range request on the next pull.

Why not huggingface_hub (installed anyway, with tokenizers): its downloader (2.4.0,
`file_download.http_get`) writes whatever the server sends and compares the size only at
the end. Against a local server sending 200 MB for a file listed as 10 B it wrote all
209,715,200 bytes to its `.incomplete` file, left it there and raised "Consistency check
failed" (11-16 s); this module refuses the answer from its Content-Length, or stops at the
10th byte when it is sent chunked, and deletes the `.part`
(tests/unit/search/test_local_models.py). Its progress bars are tqdm's, outside the
terminal's language and rich display, and its cache layout is not the models folder's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx

from generalAgent.display import N_, Message

CHUNK_BYTES = 1 << 20  # read and hashed this much at a time: memory stays flat for a 500 MB file
CONNECT_SECONDS = 20.0
# Between two pieces of a download: a stalled mirror fails the pull instead of hanging it.
READ_SECONDS = 60.0


class DownloadError(Exception):
    """The model could not be downloaded; the message says why and what to try.

    Raised with an N_-marked template and its fields: `str(exc)` is English, `said` the
    sentence as data that `models pull` shows in the UI language."""

    def __init__(self, template: str, /, **fields: object) -> None:
        self.said = Message(
            template,
            {name: value if isinstance(value, Message) else str(value) for name, value in fields.items()},
        )
        super().__init__(self.said.english())


@dataclass(frozen=True)
class HubFile:
    """One file of a model repository as the hub lists it."""

    path: str
    size: int
    sha256: str = ""  # files in Git LFS (the weights)
    git_sha1: str = ""  # the others: the git blob id of their bytes


# Called with (file path, bytes of it done, its size) as a download advances.
Progress = Callable[[str, int, int], None]


def list_files(client: httpx.Client, endpoint: str, repo: str, revision: str = "main") -> list[HubFile]:
    """The files of `repo` at `revision`, with sizes and checksums, from the hub's tree API."""
    url = f"{endpoint.rstrip('/')}/api/models/{repo}/tree/{quote(revision, safe='')}?recursive=true"
    try:
        response = client.get(url)
    except httpx.HTTPError as exc:
        raise DownloadError(
            N_("cannot reach {endpoint} ({problem}); check HF_ENDPOINT"),
            endpoint=endpoint,
            problem=type(exc).__name__,
        ) from None
    if response.status_code in (401, 403, 404):
        raise DownloadError(
            N_("{repo} was not found on {endpoint} (HTTP {status})"),
            repo=repo,
            endpoint=endpoint,
            status=response.status_code,
        )
    if response.status_code != 200:
        raise DownloadError(
            N_("{endpoint} answered HTTP {status} for the list of {repo}'s files"),
            endpoint=endpoint,
            status=response.status_code,
            repo=repo,
        )
    try:
        entries = response.json()
    except json.JSONDecodeError:
        raise DownloadError(
            N_("{endpoint} did not answer with a list of files; is HF_ENDPOINT a hub?"), endpoint=endpoint
        ) from None
    files = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("type") != "file":
            continue
        lfs = entry.get("lfs") if isinstance(entry.get("lfs"), dict) else None
        files.append(
            HubFile(
                path=str(entry["path"]),
                size=int(entry.get("size", 0)),
                sha256=str(lfs.get("oid", "")) if lfs else "",
                git_sha1="" if lfs else str(entry.get("oid", "")),
            )
        )
    return files


def download_file(
    client: httpx.Client,
    endpoint: str,
    repo: str,
    revision: str,
    file: HubFile,
    folder: Path,
    progress: Progress | None = None,
) -> Path:
    """`file` of `repo` in `folder`, downloaded (or continued) and verified; returns its path.

    A file already in place with the right size and checksum is not downloaded again."""
    target = folder / file.path
    if not target.resolve().is_relative_to(folder.resolve()):
        raise DownloadError(N_("the hub listed a file outside the model folder: {path}"), path=file.path)
    if target.is_file() and target.stat().st_size == file.size and _checksum_problem(target, file) is None:
        if progress is not None:
            progress(file.path, file.size, file.size)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    done = partial.stat().st_size if partial.exists() else 0
    if done > file.size:
        partial.unlink()
        done = 0
    url = f"{endpoint.rstrip('/')}/{repo}/resolve/{quote(revision, safe='')}/{quote(file.path)}"
    headers = {"Range": f"bytes={done}-"} if 0 < done < file.size else {}
    if done < file.size or file.size == 0:
        try:
            with client.stream("GET", url, headers=headers) as response:
                if response.status_code == 404:
                    raise DownloadError(
                        N_("{path} of {repo} is missing on {endpoint} (HTTP 404)"),
                        path=file.path,
                        repo=repo,
                        endpoint=endpoint,
                    )
                if response.status_code not in (200, 206):
                    raise DownloadError(
                        N_("{endpoint} answered HTTP {status} for {path}"),
                        endpoint=endpoint,
                        status=response.status_code,
                        path=file.path,
                    )
                if response.status_code == 200:
                    done = 0  # the server ignored the Range: start the file again
                announced = response.headers.get("Content-Length", "")
                if announced.isdigit() and done + int(announced) > file.size:
                    raise _oversize(partial, file)
                with partial.open("ab" if done else "wb") as out:
                    for piece in response.iter_bytes():  # as received: a cut keeps what came
                        if done + len(piece) > file.size:
                            # Not one byte past the size the hub listed: a server (or a mirror)
                            # sending more would otherwise fill the disk before the check.
                            out.close()
                            raise _oversize(partial, file)
                        out.write(piece)
                        done += len(piece)
                        if progress is not None:
                            progress(file.path, done, file.size)
        except httpx.HTTPError as exc:
            raise DownloadError(
                N_("the download of {path} stopped ({problem}); run the pull again to continue"),
                path=file.path,
                problem=type(exc).__name__,
            ) from None
    size = partial.stat().st_size
    if size != file.size:
        raise DownloadError(
            N_("{path} is {size} bytes, the hub says {listed}; run the pull again to continue"),
            path=file.path,
            size=size,
            listed=file.size,
        )
    problem = _checksum_problem(partial, file)
    if problem is not None:
        partial.unlink()  # a wrong file must not be continued: the next pull starts it again
        raise DownloadError(
            N_("{path}: {problem}; the file was deleted, run the pull again"), path=file.path, problem=problem
        )
    partial.replace(target)
    return target


def download_repo(
    endpoint: str,
    repo: str,
    folder: Path,
    choose: Callable[[list[HubFile]], list[HubFile]],
    progress: Progress | None = None,
    revision: str = "main",
    transport: httpx.BaseTransport | None = None,
) -> list[Path]:
    """The files of `repo` that `choose` keeps of its list, downloaded into `folder` (see the module)."""
    timeout = httpx.Timeout(READ_SECONDS, connect=CONNECT_SECONDS)
    with httpx.Client(follow_redirects=True, timeout=timeout, transport=transport) as client:
        files = choose(list_files(client, endpoint, repo, revision))
        if not files:
            raise DownloadError(
                N_("{repo} on {endpoint} has none of the files a model needs"), repo=repo, endpoint=endpoint
            )
        return [download_file(client, endpoint, repo, revision, f, folder, progress) for f in files]


def _oversize(partial: Path, file: HubFile) -> DownloadError:
    """The error for a file served longer than listed; its `.part` is deleted (it cannot be
    continued: which of its bytes are right is unknown)."""
    partial.unlink(missing_ok=True)
    return DownloadError(
        N_(
            "{path}: the server sent more than the {size} bytes the hub lists; "
            "nothing of it was kept, check HF_ENDPOINT"
        ),
        path=file.path,
        size=f"{file.size:,}",
    )


def _checksum_problem(path: Path, file: HubFile) -> Message | None:
    """Why the bytes at `path` are not `file` (None when they are, or the hub gave no checksum)."""
    if file.sha256:
        digest = hashlib.sha256()
    elif file.git_sha1:
        digest = hashlib.sha1(usedforsecurity=False)
        digest.update(f"blob {path.stat().st_size}\0".encode())
    else:
        return None
    with path.open("rb") as stream:
        while piece := stream.read(CHUNK_BYTES):
            digest.update(piece)
    expected = file.sha256 or file.git_sha1
    if digest.hexdigest() != expected.lower():
        return Message(
            N_("checksum mismatch (expected {expected}…, got {got}…)"),
            {"expected": expected[:12], "got": digest.hexdigest()[:12]},
        )
    return None
