"""Semantic search in search_file and search_folder: the real OpenAI client against the test
server's /embeddings (deterministic hash vectors), vector rankings fused with BM25, and a
dead endpoint falling back to keyword search with one notice."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings, load_settings
from generalAgent.documents.folder import search_folder
from generalAgent.documents.search import search_document
from generalAgent.search.embeddings import embeddings_from_settings
from tests.support.openai_server import ScriptedOpenAIServer

pytestmark = pytest.mark.e2e

GUIDE = "\n\n".join(
    [f"# Part {n}\n\nNotes on the deployment pipeline, stage {n}." for n in range(6)]
    + ["# Odd one\n\nA sentence nobody would type twice."]
)


def semantic_settings(data_dir: Path, base_url: str) -> Settings:
    return load_settings(
        env_file=None,
        model={"openai_api_key": "sk-test"},
        paths={"data_dir": data_dir},
        documents={
            "embedding_model": "test-embed",
            "embedding_base_url": base_url,
            "embedding_batch_size": 8,
        },
    )


def test_search_file_fuses_the_vector_ranking_with_bm25(
    data_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    settings = semantic_settings(data_dir, openai_server.base_url)
    embedder = embeddings_from_settings(settings)
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")

    def search(query: str | list[str]) -> dict:
        return search_document(settings.paths.indexes_db, settings.documents, path, query, vectors=embedder)

    # No word in common with the text: only the vectors can answer.
    assert search("zzyzx qwv").results
    # The query's text is a chunk's own text: its vector is the nearest (cosine 1).
    chunk_text = "# Odd one\n\nA sentence nobody would type twice."
    assert search(["zzyzx", chunk_text]).results[0].hit.heading == "Odd one"
    calls = [r for r in openai_server.requests if r.path.endswith("/embeddings")]
    assert any(r.body["input"] == ["zzyzx qwv"] for r in calls)


def test_search_folder_uses_the_vectors_of_every_document(
    data_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    settings = semantic_settings(data_dir, openai_server.base_url)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nThe first manual.", encoding="utf-8")
    (folder / "b.md").write_text("# Beta\n\nThe second manual.", encoding="utf-8")
    result = search_folder(
        settings.paths.indexes_db,
        settings.documents,
        folder,
        "zzyzx qwv",
        vectors=embeddings_from_settings(settings),
    )
    assert {d.file for d in result.documents} == {str(folder / "a.md"), str(folder / "b.md")}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_dead_endpoint_falls_back_to_keywords_with_one_notice(data_dir: Path, tmp_path: Path):
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph

    from generalAgent.graph.nodes.tools import build_tool_node
    from generalAgent.tools.builtin.search_file import create_tool
    from generalAgent.tools.environment import ToolEnvironment

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
    uploads = settings.paths.workspaces_dir / "s1" / "uploads"
    uploads.mkdir(parents=True)
    (uploads / "guide.md").write_text(GUIDE, encoding="utf-8")
    graph = StateGraph(MessagesState)
    graph.add_node("tools", build_tool_node([create_tool(ToolEnvironment(settings=settings))], 60_000))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    compiled = graph.compile()

    def run(query: str) -> str:
        call = AIMessage(
            content="",
            tool_calls=[
                {"name": "search_file", "args": {"file_path": "uploads/guide.md", "query": query}, "id": "c"}
            ],
        )
        out = compiled.invoke({"messages": [call]}, config={"configurable": {"thread_id": "s1"}})
        return str(out["messages"][-1].content)

    first, second = run("deployment pipeline"), run("deployment pipeline")
    assert "Note: Embeddings failed, indexed for keyword search only" in first
    assert "passage(s) in uploads/guide.md" in first and "passage(s) in uploads/guide.md" in second
    assert "Note:" not in second  # told once; later searches do not wait for the endpoint
