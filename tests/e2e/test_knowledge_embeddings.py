"""Semantic search plumbing end to end: the real OpenAI client against the local test
server's /embeddings (deterministic hash vectors), vectors stored with their chunks, fused
with BM25, and keyword search carrying on when the endpoint fails."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from generalAgent.config.settings import Settings, load_settings
from generalAgent.knowledge import open_store, search_knowledge
from tests.support.openai_server import ScriptedOpenAIServer, hash_embedding
from tests.support.postgres import fresh_schema_url
from tests.support.silent_server import SilentServer

pytestmark = pytest.mark.e2e

LONG = "\n\n".join(f"Section {i}. " + "Notes on the deployment pipeline. " * 10 for i in range(30))


def semantic_settings(data_dir: Path, base_url: str, store_url: str | None = None) -> Settings:
    return load_settings(
        env_file=None,
        model={"openai_api_key": "sk-test"},
        paths={"data_dir": data_dir, "search_database_url": store_url},
        documents={
            "embedding_model": "test-embed",
            "embedding_base_url": base_url,
            "embedding_batch_size": 8,
        },
    )


def test_vectors_are_written_with_the_chunks_in_batches(data_dir: Path, openai_server: ScriptedOpenAIServer):
    settings = semantic_settings(data_dir, openai_server.base_url)
    with open_store(settings) as store:
        item = store.add_knowledge("Pipeline", LONG)
        chunks = store.count_chunks(item.id)
        rows = store.conn.execute(
            "SELECT v.model, v.vector, f.text FROM chunk_vectors v"
            " JOIN chunks_fts f ON f.rowid = v.chunk_rowid"
        ).fetchall()
    assert chunks > 8 and len(rows) == chunks
    model, blob, text = rows[0]
    assert model == "test-embed"
    stored = np.frombuffer(blob, dtype="<f4")
    assert np.allclose(stored, np.asarray(hash_embedding(text), dtype="<f4"), atol=1e-6)
    requests = [r for r in openai_server.requests if r.path.endswith("/embeddings")]
    assert len(requests) == -(-chunks // 8)  # ceil: batches of EMBEDDING_BATCH_SIZE
    assert all(len(r.body["input"]) <= 8 and r.body["model"] == "test-embed" for r in requests)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """SEARCH_DATABASE_URL: unset (indexes.db), or a fresh schema of the test server."""
    if request.param == "sqlite":
        yield None
        return
    yield from fresh_schema_url()


def test_search_fuses_vector_and_keyword_rankings(
    data_dir: Path, openai_server: ScriptedOpenAIServer, store_url: str | None
):
    settings = semantic_settings(data_dir, openai_server.base_url, store_url)
    with open_store(settings) as store:
        store.add_knowledge("Pipeline", LONG)
        target = store.add_knowledge("Other", "A sentence nobody would type twice.")
        # no word in common with anything stored: only the vectors can answer
        assert search_knowledge(store, "zzyzx qwv").results
        # the query's text equals a chunk's text: its vector is the nearest (cosine 1)
        top = search_knowledge(store, "A sentence nobody would type twice.").results[0]
        assert top.item.id == target.id
    embedding_calls = [r for r in openai_server.requests if r.path.endswith("/embeddings")]
    assert any(r.body["input"] == ["zzyzx qwv"] for r in embedding_calls)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_failing_endpoint_leaves_keyword_search_working_and_says_so_once(data_dir: Path):
    settings = load_settings(
        env_file=None,
        model={"openai_api_key": "sk-test"},
        paths={"data_dir": data_dir},
        documents={
            "embedding_model": "test-embed",
            "embedding_timeout": 2,
            "embedding_base_url": f"http://127.0.0.1:{free_port()}/v1",
        },
    )
    with open_store(settings) as store:
        store.add_knowledge("Pipeline", "The deployment pipeline has four stages.")
        first = search_knowledge(store, "deployment stages")
        second = search_knowledge(store, "deployment stages")
        assert store.conn.execute("SELECT COUNT(*) FROM chunk_vectors").fetchone()[0] == 0
    assert first.results and second.results
    assert first.warning is not None and "Semantic search is off" in first.warning.english()
    assert "keyword search still works" in first.warning.english()
    assert second.warning is None


def test_indexed_documents_get_vectors_too(
    data_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    from generalAgent.documents.index import SearchIndex
    from generalAgent.search.embeddings import embeddings_from_settings

    settings = semantic_settings(data_dir, openai_server.base_url)
    path = tmp_path / "guide.md"
    path.write_text(LONG, encoding="utf-8")
    embedder = embeddings_from_settings(settings)
    with SearchIndex(settings.paths.indexes_db, settings.documents, embedder) as index:
        document = index.index_file(path)
        vectors = index.conn.execute("SELECT COUNT(*) FROM chunk_vectors").fetchone()[0]
    assert document.total_chunks > 1 and vectors == document.total_chunks


def test_the_first_read_waits_for_a_hung_endpoint_once_then_searches_by_keyword(data_dir: Path):
    # The first search imports the built-in knowledge folder (two pages, several batches)
    # before it searches: each batch, each retry of it and then the query waited for the
    # endpoint in turn, EMBEDDING_TIMEOUT each.
    from generalAgent.tools.environment import ToolEnvironment
    from tests.support.tools import run_tool

    with SilentServer() as hung:
        settings = load_settings(
            env_file=None,
            model={"openai_api_key": "sk-test"},
            paths={"data_dir": data_dir},
            documents={
                "embedding_model": "test-embed",
                "embedding_timeout": 1,  # the endpoint never answers: this always runs out
                "embedding_base_url": hung.url,
                "embedding_batch_size": 2,
            },
        )
        env = ToolEnvironment(settings=settings)
        answer, _state = run_tool(settings, "search_knowledge", {"query": "EMBEDDING_MODEL"}, env=env)
        asked = hung.connections
        # A store opened later in the process (here a new tool's) knows it too: no second wait.
        again, _state = run_tool(settings, "search_knowledge", {"query": "EMBEDDING_TIMEOUT"}, env=env)
        asked_again = hung.connections
    assert asked == 1, f"the hung endpoint was waited for {asked} times"
    assert asked_again == 1 and "Semantic search is off for this session" in again
    assert "Semantic search is off for this session" in answer and "keyword search still works" in answer
    assert "EMBEDDING_MODEL" in answer.split("keyword search still works", 1)[1]  # keyword results follow
