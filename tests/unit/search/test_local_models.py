"""`models pull` against a hub on 127.0.0.1: progress, resume after a cut, a 404, a checksum
mismatch; and the pulled static model embedding text (a tiny one the test builds)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from generalAgent import i18n
from generalAgent.config.settings import load_settings
from generalAgent.search.embeddings import LocalEmbeddings, describe_source, embeddings_from_settings
from generalAgent.search.local_models import active_repo, installed, models_dir, pull
from generalAgent.search.model_download import DownloadError
from tests.support.model_hub import HubServer, build_static_model, repo_files

REPO = "minishlab/potion-multilingual-128M"
WORDS = ["backup", "restore", "the", "files", "folder", "备份", "恢复", "文件", "network", "cable", "printer"]


@pytest.fixture
def model_files(tmp_path: Path) -> dict[str, bytes]:
    files = repo_files(build_static_model(tmp_path / "built", WORDS, dimensions=32))
    files["onnx/model.onnx"] = b"another format of the weights, never downloaded"
    return files


def test_pull_downloads_with_progress_and_makes_the_model_active(tmp_path: Path, model_files):
    seen: list[tuple[str, int, int]] = []
    with HubServer({REPO: model_files}) as hub:
        folder = pull("potion-multilingual-128M", tmp_path / "models", hub.url, lambda *a: seen.append(a))
    assert (folder / "model.safetensors").read_bytes() == model_files["model.safetensors"]
    assert not (folder / "onnx").exists()
    assert (
        "model.safetensors",
        len(model_files["model.safetensors"]),
        len(model_files["model.safetensors"]),
    ) in seen
    assert active_repo(tmp_path / "models") == REPO
    assert [m.repo for m in installed(tmp_path / "models")] == [REPO]


@pytest.mark.parametrize("redirect", [False, True], ids=["direct", "redirected to a CDN"])
def test_an_interrupted_download_continues_where_it_stopped(tmp_path: Path, model_files, redirect: bool):
    weights = len(model_files["model.safetensors"])
    with HubServer({REPO: model_files}, cut_after={"model.safetensors": 1000}, redirect=redirect) as hub:
        with pytest.raises(DownloadError, match="run the pull again"):
            pull(REPO, tmp_path / "models", hub.url)
        assert active_repo(tmp_path / "models") is None  # nothing half-pulled is used
        partial = tmp_path / "models" / "minishlab--potion-multilingual-128M" / "model.safetensors.part"
        assert partial.stat().st_size == 1000
        pull(REPO, tmp_path / "models", hub.url)
    ranges = [r for path, r in hub.requests if path.endswith("/model.safetensors")]
    assert ranges == (["", "", "bytes=1000-", "bytes=1000-"] if redirect else ["", "bytes=1000-"])
    folder = tmp_path / "models" / "minishlab--potion-multilingual-128M"
    assert (folder / "model.safetensors").stat().st_size == weights
    assert not partial.exists()


def test_a_missing_file_fails_the_pull_with_the_reason(tmp_path: Path, model_files):
    with HubServer({REPO: model_files}, missing={"tokenizer.json"}) as hub:
        with pytest.raises(DownloadError, match="404"):
            pull(REPO, tmp_path / "models", hub.url)
        with pytest.raises(DownloadError, match="not found"):
            pull("someone/unknown-model", tmp_path / "models", hub.url)
    assert installed(tmp_path / "models") == []


def test_a_checksum_mismatch_deletes_the_file(tmp_path: Path, model_files):
    with (
        HubServer({REPO: model_files}, wrong_sha256={"model.safetensors"}) as hub,
        pytest.raises(DownloadError, match="checksum mismatch") as refused,
    ):
        pull(REPO, tmp_path / "models", hub.url)
    i18n.use_language("zh")  # the detail was English inside the Chinese sentence
    try:
        shown = refused.value.said.shown(i18n._)
    finally:
        i18n.use_language("en")
    assert "校验和不符（应为 " in shown and "checksum" not in shown, shown
    folder = tmp_path / "models" / "minishlab--potion-multilingual-128M"
    assert not (folder / "model.safetensors").exists()
    assert not (folder / "model.safetensors.part").exists()
    assert active_repo(tmp_path / "models") is None


@pytest.mark.parametrize("chunked", [False, True])
def test_a_file_listed_as_10_bytes_served_as_200_mb_is_stopped_and_nothing_kept(
    tmp_path: Path, model_files, chunked: bool
):
    """A hub (or a mirror) sending far more than it lists: with a Content-Length the answer
    is refused before a byte is written; sent chunked it is stopped at the listed size. No
    `.part` stays behind (it could not be continued), and the model is not installed."""
    model_files["config.json"] = b"0123456789"
    with (
        HubServer({REPO: model_files}, oversized={"config.json": 200 << 20}, chunked=chunked) as hub,
        pytest.raises(
            DownloadError, match="config.json: the server sent more than the 10 bytes the hub lists"
        ),
    ):
        pull(REPO, tmp_path / "models", hub.url)
    folder = tmp_path / "models" / "minishlab--potion-multilingual-128M"
    assert not (folder / "config.json").exists() and not (folder / "config.json.part").exists()
    assert sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) < 1 << 20
    assert hub.sent["config.json"] < 100 << 20  # the client stopped reading long before the end
    assert installed(tmp_path / "models") == []


def test_a_second_pull_downloads_nothing(tmp_path: Path, model_files):
    with HubServer({REPO: model_files}) as hub:
        pull(REPO, tmp_path / "models", hub.url)
        first = len(hub.requests)
        pull(REPO, tmp_path / "models", hub.url)
    assert len(hub.requests) == first + 1  # only the file list again


def test_the_pulled_model_is_used_from_then_on(data_dir: Path, tmp_path: Path, model_files):
    settings = load_settings(
        env_file=None, paths={"data_dir": data_dir}, documents={"embedding_models_dir": str(tmp_path / "m")}
    )
    assert embeddings_from_settings(settings) is None  # the tests' environment: EMBEDDING_MODEL empty
    with HubServer({REPO: model_files}) as hub:
        pull(REPO, models_dir(str(tmp_path / "m")), hub.url)
    embedder = embeddings_from_settings(settings)
    assert isinstance(embedder, LocalEmbeddings) and embedder.model == REPO
    template, fields = describe_source(settings)
    assert template.format(**fields) == f"local model {REPO}"
    # A named endpoint model still wins over the pulled one: the user asked for it.
    named = load_settings(
        env_file=None,
        paths={"data_dir": data_dir},
        documents={"embedding_models_dir": str(tmp_path / "m"), "embedding_model": "bge-m3"},
    )
    assert embeddings_from_settings(named).model == "bge-m3"


def test_a_static_model_embeds_by_meaning_of_its_tokens(tmp_path: Path):
    folder = build_static_model(tmp_path / "tiny", WORDS, dimensions=32)
    embedder = LocalEmbeddings("tiny", batch_size=4, folder=folder)
    blobs = embedder.vectors(["backup the files", "the files backup", "printer cable", "zzz unknown"])
    vectors = [np.frombuffer(b, dtype="<f4") for b in blobs]
    assert vectors[0].shape == (32,)
    assert np.allclose(vectors[0], vectors[1], atol=1e-6)  # a mean of token vectors: order-free
    assert float(vectors[0] @ vectors[2]) < 0.99
    assert np.linalg.norm(vectors[0]) == pytest.approx(1.0, abs=1e-5)
    assert not vectors[3].any()  # no known token: a zero vector, nearest nothing
