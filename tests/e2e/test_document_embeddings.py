"""Semantic search in search_file and search_folder: the real OpenAI client against the test
server's /embeddings (deterministic hash vectors). Indexing writes no vectors; they come
after, from a pass that can stop anywhere and continue, that follows new, changed and
deleted chunks and a change of model; until then BM25 answers. A dead endpoint falls back
to keyword search with one notice."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from generalAgent.config.settings import Settings, load_settings
from generalAgent.documents.folder import search_folder
from generalAgent.documents.search import FileSearch, search_document
from generalAgent.search.background_embedding import BackgroundEmbedding, embed_pending, pending_count
from generalAgent.search.connection import connect
from generalAgent.search.embeddings import EmbeddingError, EndpointEmbeddings, embeddings_from_settings
from generalAgent.search.semantic import unembedded_chunks
from tests.support.documents import make_long_scan
from tests.support.openai_server import ScriptedOpenAIServer

pytestmark = pytest.mark.e2e

GUIDE = "\n\n".join(
    [f"# Part {n}\n\nNotes on the deployment pipeline, stage {n}." for n in range(6)]
    + ["# Odd one\n\nA sentence nobody would type twice."]
)
ODD = "# Odd one\n\nA sentence nobody would type twice."


def semantic_settings(data_dir: Path, base_url: str, model: str = "test-embed") -> Settings:
    return load_settings(
        env_file=None,
        model={"openai_api_key": "sk-test"},
        paths={"data_dir": data_dir},
        documents={"embedding_model": model, "embedding_base_url": base_url, "embedding_batch_size": 2},
    )


def embedding_calls(server: ScriptedOpenAIServer) -> list:
    return [r for r in server.requests if r.path.endswith("/embeddings")]


def test_bm25_answers_until_the_vectors_exist_then_they_are_fused(
    data_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    settings = semantic_settings(data_dir, openai_server.base_url)
    embedder = embeddings_from_settings(settings)
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")

    def search(query: str | list[str]) -> FileSearch:
        return search_document(settings.paths.indexes_db, settings.documents, path, query, vectors=embedder)

    # Indexing embeds nothing and the search does not wait for it: keywords answer.
    assert search("deployment pipeline").results
    assert search("zzyzx qwv").results == ()
    assert embedding_calls(openai_server) == []
    with connect(settings.paths.indexes_db) as conn:
        assert embed_pending(conn, embedder, 2) == 7
    # No word in common with the text: only the vectors can answer now.
    assert search("zzyzx qwv").results
    # The query's text is a chunk's own text: its vector is the nearest (cosine 1).
    assert search(["zzyzx", ODD]).results[0].hit.heading == "Odd one"
    assert any(r.body["input"] == ["zzyzx qwv"] for r in embedding_calls(openai_server))


def test_an_interrupted_pass_continues_where_it_stopped(
    data_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    settings = semantic_settings(data_dir, openai_server.base_url)
    embedder = embeddings_from_settings(settings)
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    search_document(settings.paths.indexes_db, settings.documents, path, "pipeline")
    stop = threading.Event()
    with connect(settings.paths.indexes_db) as conn:
        # Stopped after the first batch (Ctrl-C, the process ending): that batch is kept.
        assert embed_pending(conn, embedder, 2, progress=lambda done, total: stop.set(), stop=stop) == 2
        assert pending_count(conn, "test-embed") == 5
        sent = sum(len(r.body["input"]) for r in embedding_calls(openai_server))
        assert embed_pending(conn, embedder, 2) == 5  # the rest, nothing twice
        assert sum(len(r.body["input"]) for r in embedding_calls(openai_server)) == sent + 5
        assert pending_count(conn, "test-embed") == 0


def test_a_batch_too_slow_for_the_timeout_is_embedded_in_smaller_batches(
    data_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    """An endpoint on a loaded machine answers batches of more than two texts after 3 s,
    past the 1 s EMBEDDING_TIMEOUT: the pass halves its batches until they fit and embeds
    every chunk, instead of failing with nothing embedded."""
    settings = load_settings(
        env_file=None,
        model={"openai_api_key": "sk-test"},
        paths={"data_dir": data_dir},
        documents={
            "embedding_model": "test-embed",
            "embedding_base_url": openai_server.base_url,
            "embedding_timeout": 1.0,
        },
    )
    embedder = embeddings_from_settings(settings)
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    search_document(settings.paths.indexes_db, settings.documents, path, "pipeline")
    openai_server.slow_embeddings_over, openai_server.slow_embedding_seconds = 2, 3.0
    with connect(settings.paths.indexes_db) as conn:
        assert embed_pending(conn, embedder, 8) == 7
        assert pending_count(conn, "test-embed") == 0
    sizes = [len(r.body["input"]) for r in embedding_calls(openai_server)]
    assert sizes[0] == 7 and max(sizes[-3:]) <= 2


def test_the_public_document_api_embeds_and_searches_by_meaning(
    data_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    """create_index embeds the chunks it wrote and search_in_index fuses their vectors:
    a query sharing no word with the text finds a passage, as search_file's does."""
    from generalAgent.documents import create_index, search_in_index

    settings = semantic_settings(data_dir, openai_server.base_url)
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    create_index(path, settings)
    with connect(settings.paths.indexes_db) as conn:
        assert pending_count(conn, "test-embed") == 0
    assert search_in_index(path, "zzyzx qwv", 3, settings)
    assert search_in_index(path, ["zzyzx", ODD], 3, settings)[0].heading == "Odd one"


def test_new_changed_and_deleted_chunks_are_followed(
    data_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    settings = semantic_settings(data_dir, openai_server.base_url)
    embedder = embeddings_from_settings(settings)
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    db = settings.paths.indexes_db
    search_document(db, settings.documents, path, "pipeline")
    with connect(db) as conn:
        embed_pending(conn, embedder, 2)
        path.write_text(GUIDE + "\n\n# Appendix\n\nA new closing section.", encoding="utf-8")
        search_document(db, settings.documents, path, "pipeline")  # re-indexed: new chunks
        assert pending_count(conn, "test-embed") == 8
        embed_pending(conn, embedder, 2)
        total = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        assert conn.execute("SELECT COUNT(*) FROM chunk_vectors").fetchone()[0] == total == 8
        conn.execute("DELETE FROM items")  # the document removed: its vectors go with it
        assert conn.execute("SELECT COUNT(*) FROM chunk_vectors").fetchone()[0] == 0


def test_a_change_of_model_re_embeds_everything(
    data_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    first = semantic_settings(data_dir, openai_server.base_url, "model-a")
    second = semantic_settings(data_dir, openai_server.base_url, "model-b")
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    search_document(first.paths.indexes_db, first.documents, path, "pipeline")
    with connect(first.paths.indexes_db) as conn:
        embed_pending(conn, embeddings_from_settings(first), 2)
        assert unembedded_chunks(conn, "model-b") == 7
        embed_pending(conn, embeddings_from_settings(second), 2)
        models = {row[0] for row in conn.execute("SELECT model FROM chunk_vectors")}
    assert models == {"model-b"}
    hits = search_document(
        second.paths.indexes_db,
        second.documents,
        path,
        ["zzyzx", ODD],
        vectors=embeddings_from_settings(second),
    ).results
    assert hits[0].hit is not None and hits[0].hit.heading == "Odd one"


def test_search_folder_uses_the_vectors_of_every_document(
    data_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    settings = semantic_settings(data_dir, openai_server.base_url)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nThe first manual.", encoding="utf-8")
    (folder / "b.md").write_text("# Beta\n\nThe second manual.", encoding="utf-8")
    embedder = embeddings_from_settings(settings)
    db = settings.paths.indexes_db
    assert search_folder(db, settings.documents, folder, "zzyzx qwv", vectors=embedder).documents == ()
    background = BackgroundEmbedding(db, embedder, 2)
    background.kick()
    assert background.wait(60) and background.problem is None
    result = search_folder(db, settings.documents, folder, "zzyzx qwv", vectors=embedder)
    assert {d.file for d in result.documents} == {str(folder / "a.md"), str(folder / "b.md")}


def test_stopping_the_background_pass_gives_up_the_batch_in_flight_at_once(
    data_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    # The chat's background embedding used to stop only after the batch in flight was
    # answered: up to EMBEDDING_TIMEOUT (60 s and more) with a loaded local endpoint.
    settings = semantic_settings(data_dir, openai_server.base_url)
    embedder = EndpointEmbeddings("test-embed", openai_server.base_url, "sk-test", 2, timeout=120.0)
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    db = settings.paths.indexes_db
    search_document(db, settings.documents, path, "pipeline")  # indexed, nothing embedded
    openai_server.hold_embeddings_of = "Notes"  # answered only when the test ends
    background = BackgroundEmbedding(db, embedder, 2)
    background.kick()
    deadline = time.monotonic() + 30
    while not embedding_calls(openai_server):
        assert time.monotonic() < deadline, "no batch was sent"
        time.sleep(0.05)
    asked = time.monotonic()
    background.stop()
    assert background.wait(10), "the pass still waits for the held batch"
    stopped = time.monotonic() - asked
    assert stopped < 1.0, f"the pass ended {stopped:.2f} s after stop()"
    assert background.problem is None  # a stop is no failure: semantic search stays on
    with connect(db) as conn:
        assert pending_count(conn, embedder.model) == 7  # the batch waits for the next pass


def test_a_partly_ocred_document_keeps_semantic_search_and_says_what_was_left_unread(
    data_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    settings = semantic_settings(data_dir, openai_server.base_url)
    embedder = embeddings_from_settings(settings)
    documents = settings.documents.model_copy(update={"ocr_max_pages_per_document": 1})
    path = make_long_scan(tmp_path / "scan.pdf", 2, ["Invoice number 4711", "Paid in March."])

    def search() -> FileSearch:
        return search_document(settings.paths.indexes_db, documents, path, "zzyzx qwv", vectors=embedder)

    first = search()
    assert "OCR_MAX_PAGES_PER_DOCUMENT=1" in first.notes
    assert first.warning is None  # the note is not a failure of semantic search
    with connect(settings.paths.indexes_db) as conn:
        assert embed_pending(conn, embedder, 2) >= 1
    # No word in common: only the vectors answer, so the OCR note did not turn them off.
    assert search().results


def test_the_search_tool_keeps_semantic_search_on_after_an_ocr_note(
    data_dir: Path, openai_server: ScriptedOpenAIServer
):
    # search_file handed FileSearch.warning, which held reading's notes too, to the session's
    # semantic search as a failure: a scan's "pages left unread" turned vectors off.
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
            "embedding_base_url": openai_server.base_url,
            "ocr_max_pages_per_document": 1,
        },
    )
    uploads = settings.paths.workspaces_dir / "s1" / "uploads"
    uploads.mkdir(parents=True)
    make_long_scan(uploads / "scan.pdf", 2, ["Invoice number 4711", "Paid in March."])
    env = ToolEnvironment(settings=settings)
    graph = StateGraph(MessagesState)
    graph.add_node("tools", build_tool_node([create_tool(env)], 60_000))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    call = AIMessage(
        content="",
        tool_calls=[
            {"name": "search_file", "args": {"file_path": "uploads/scan.pdf", "query": "invoice"}, "id": "c"}
        ],
    )
    out = graph.compile().invoke({"messages": [call]}, config={"configurable": {"thread_id": "s1"}})
    answer = str(out["messages"][-1].content)
    assert "OCR_MAX_PAGES_PER_DOCUMENT=1" in answer, answer  # the note still reaches the model
    semantic = env.semantic_search()
    assert semantic is not None and semantic.for_query() is not None, semantic.background.problem
    assert "Semantic search is off" not in answer


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_dead_endpoint_falls_back_to_keywords_with_one_notice(data_dir: Path):
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
    env = ToolEnvironment(settings=settings)
    graph = StateGraph(MessagesState)
    graph.add_node("tools", build_tool_node([create_tool(env)], 60_000))
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

    first = run("deployment pipeline")  # answered by keywords while the pass starts
    semantic = env.semantic_search()
    assert semantic is not None and semantic.background.wait(60)
    second, third = run("deployment pipeline"), run("deployment pipeline")
    answers = [first, second, third]
    assert all("passage(s) in uploads/guide.md" in answer for answer in answers)
    notices = [a for a in answers if "Semantic search is off for this session" in a]
    assert len(notices) == 1 and "keyword search still works" in notices[0]
    assert "Note:" not in third  # told once; later searches do not wait for the endpoint
    with pytest.raises(EmbeddingError):
        semantic.background.embedder.vectors(["still dead"])


class HeldEmbeddings:
    """An embedder that does not answer until released: a slow endpoint or a large model."""

    model = "held"

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def vectors(self, texts, progress=None):
        self.started.set()
        assert self.release.wait(600)
        return [bytes(16) for _ in texts]


def test_a_search_never_waits_for_the_embedding_pass(data_dir: Path, tmp_path: Path):
    settings = load_settings(env_file=None, paths={"data_dir": data_dir})
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    db = settings.paths.indexes_db
    search_document(db, settings.documents, path, "pipeline")
    held = HeldEmbeddings()
    background = BackgroundEmbedding(db, held, 2)
    background.kick()
    try:
        assert held.started.wait(60)  # the pass is waiting for its first batch's vectors
        # Indexing another document (a write) and searching both go on meanwhile.
        other = tmp_path / "other.md"
        other.write_text("# Other\n\nRelease notes for the pipeline.", encoding="utf-8")
        began = time.monotonic()
        assert search_document(db, settings.documents, other, "release notes").results
        assert search_document(db, settings.documents, path, "deployment pipeline").results
        assert time.monotonic() - began < 60  # the held pass would make it ten minutes
        assert background.running
    finally:
        held.release.set()
    assert background.wait(60) and background.problem is None
    with connect(db) as conn:
        assert pending_count(conn, "held") == 0  # the document indexed meanwhile too: its rowids came later


MANUAL = "\n\n".join(
    [f"# Part {n}\n\nNotes on the package archive and its mirrors, part {n}." for n in range(30)]
    + ["# Kernel modules\n\nlsmod shows which loadable kernel modules are currently loaded."]
)


def test_a_chinese_question_keeps_its_dictionary_answer_beside_the_vectors(
    data_dir: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    """A lone Chinese question over an English manual, with vectors that know nothing of
    its meaning (the test server's hash vectors put five other sections first; before, they
    took the whole top five): the section its dictionary gloss finds first is still among
    the first five hits (ranking.UNCOVERED_SEATS)."""
    settings = semantic_settings(data_dir, openai_server.base_url)
    embedder = embeddings_from_settings(settings)
    path = tmp_path / "manual.md"
    path.write_text(MANUAL, encoding="utf-8")

    def headings(vectors: object) -> list[str]:
        found = search_document(
            settings.paths.indexes_db, settings.documents, path, "列出已加载的内核模块", vectors=vectors
        )
        return [result.hit.heading for result in found.results]

    assert headings(None)[0] == "Kernel modules"
    with connect(settings.paths.indexes_db) as conn:
        assert embed_pending(conn, embedder, 2) == 31
    assert "Kernel modules" in headings(embedder)[:5]
