"""A Hugging Face hub on 127.0.0.1 for `models pull` tests, and a tiny static model to serve.

The server answers the two requests a pull makes, as huggingface.co (and hf-mirror.com)
do: `GET /api/models/{repo}/tree/{revision}` (files with size, git blob id, and for LFS
files the SHA-256) and `GET /{repo}/resolve/{revision}/{path}` (the bytes, honouring
`Range: bytes=N-` with 206). Tests can make it cut a download after some bytes, lie about
a checksum, lose a file (404), or serve a file far longer than it lists (with or without a
Content-Length).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

LFS_SUFFIXES = (".safetensors", ".bin")


def build_static_model(
    folder: Path,
    words: list[str],
    dimensions: int = 16,
    seed: int = 7,
    synonyms: dict[str, str] | None = None,
) -> Path:
    """A model2vec-format model in `folder`: a word-level tokenizer.json (built with the
    `tokenizers` library) over `words` plus [UNK], a random embedding matrix, config.json.
    `synonyms` maps a word to another whose vector it gets: they mean the same to the model."""
    import numpy as np
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder.mkdir(parents=True, exist_ok=True)
    vocabulary = {"[UNK]": 0, **{word: n + 1 for n, word in enumerate(dict.fromkeys(words))}}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocabulary, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    matrix = np.random.default_rng(seed).standard_normal((len(vocabulary), dimensions)).astype(np.float32)
    for word, same in (synonyms or {}).items():
        matrix[vocabulary[word]] = matrix[vocabulary[same]]
    save_file({"embeddings": matrix}, str(folder / "model.safetensors"))
    config = {"model_type": "model2vec", "normalize": True, "hidden_dim": dimensions}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "README.md").write_text("---\nlicense: mit\n---\nA test model.\n", encoding="utf-8")
    return folder


@dataclass
class HubServer:
    """Serves the files of `repos` ({repo: {path: bytes}}); see the module for the faults."""

    repos: dict[str, dict[str, bytes]]
    cut_after: dict[str, int] = field(default_factory=dict)  # path -> bytes sent before the cut (once)
    wrong_sha256: set[str] = field(default_factory=set)  # paths listed with a wrong checksum
    missing: set[str] = field(default_factory=set)  # paths listed but answered with 404
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, Range header)
    # Answer file requests with a redirect to /cdn/... first, as huggingface.co does for LFS files.
    redirect: bool = False
    # path -> bytes of zeros served instead of the file (its listing unchanged), and whether
    # they are sent chunked, without a Content-Length; `sent` counts what went out.
    oversized: dict[str, int] = field(default_factory=dict)
    chunked: bool = False
    sent: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> HubServer:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                hub.requests.append((self.path, self.headers.get("Range", "")))
                hub.answer(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def tree(self, repo: str) -> list[dict[str, Any]]:
        entries = []
        for path, data in self.repos[repo].items():
            blob = hashlib.sha1(f"blob {len(data)}\0".encode() + data, usedforsecurity=False).hexdigest()
            entry: dict[str, Any] = {"type": "file", "oid": blob, "size": len(data), "path": path}
            if path.endswith(LFS_SUFFIXES):
                sha = hashlib.sha256(data).hexdigest()
                entry["lfs"] = {"oid": "0" * 64 if path in self.wrong_sha256 else sha, "size": len(data)}
            elif path in self.wrong_sha256:
                entry["oid"] = "0" * 40
            entries.append(entry)
        return entries

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?")[0]
        cdn = path.startswith("/cdn/")
        if cdn:
            path = path[len("/cdn") :]
        for repo, files in self.repos.items():
            if path.startswith(f"/api/models/{repo}/tree/"):
                self._send(handler, 200, json.dumps(self.tree(repo)).encode(), "application/json")
                return
            prefix = f"/{repo}/resolve/main/"
            if path.startswith(prefix) and path[len(prefix) :] in files:
                name = path[len(prefix) :]
                if name in self.missing:
                    break
                if self.redirect and not cdn:
                    handler.send_response(302)
                    handler.send_header("Location", f"/cdn{path}")
                    handler.send_header("Content-Length", "0")
                    handler.end_headers()
                    return
                self._file(handler, name, files[name])
                return
        self._send(handler, 404, b'{"error": "Repository Not Found"}', "application/json")

    def _file(self, handler: BaseHTTPRequestHandler, name: str, data: bytes) -> None:
        if name in self.oversized:
            self._flood(handler, name, self.oversized[name])
            return
        start = 0
        asked = handler.headers.get("Range", "")
        if asked.startswith("bytes=") and asked.endswith("-"):
            start = int(asked[len("bytes=") : -1])
        body = data[start:]
        handler.send_response(206 if start else 200)
        handler.send_header("Content-Length", str(len(body)))
        if start:
            handler.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        handler.end_headers()
        cut = self.cut_after.pop(name, None)
        if cut is not None:
            handler.wfile.write(body[:cut])
            handler.wfile.flush()
            handler.close_connection = True
            return  # the client sees the connection end before Content-Length bytes
        handler.wfile.write(body)

    def _flood(self, handler: BaseHTTPRequestHandler, name: str, size: int) -> None:
        handler.send_response(200)
        if self.chunked:
            handler.send_header("Transfer-Encoding", "chunked")
        else:
            handler.send_header("Content-Length", str(size))
        handler.end_headers()
        piece = b"\0" * (1 << 16)
        self.sent[name] = 0
        try:
            while self.sent[name] < size:
                part = piece[: size - self.sent[name]]
                if self.chunked:
                    handler.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                else:
                    handler.wfile.write(part)
                self.sent[name] += len(part)
            if self.chunked:
                handler.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass  # the client stopped reading and closed the connection
        handler.close_connection = True

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, kind: str) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)


def repo_files(folder: Path) -> dict[str, bytes]:
    """The files of a model folder as a hub repository would hold them."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }
