"""The knowledge tools driven through LangGraph's ToolNode, as the model calls them."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from generalAgent.config.settings import Settings, load_settings
from generalAgent.graph.nodes.tools import build_tool_node
from generalAgent.tools.builtin import (
    add_knowledge,
    delete_knowledge,
    get_knowledge_item,
    search_knowledge,
    update_knowledge,
)
from generalAgent.tools.environment import ToolEnvironment

MODULES = (add_knowledge, update_knowledge, delete_knowledge, get_knowledge_item, search_knowledge)


def make_runner(settings: Settings, env: ToolEnvironment | None = None):
    env = env or ToolEnvironment(settings=settings)
    graph = StateGraph(MessagesState)
    graph.add_node(
        "tools", build_tool_node([m.create_tool(env) for m in MODULES], settings.tools.tool_result_max_chars)
    )
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    compiled = graph.compile()

    def run(name: str, **args: object) -> str:
        call = AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": "c1"}])
        result = compiled.invoke({"messages": [call]}, config={"configurable": {"thread_id": "t"}})
        return str(result["messages"][-1].content)

    return run


def item_id_of(text: str) -> str:
    return text.split("(id ")[1].split(",")[0].split(")")[0]


@pytest.mark.smoke
def test_add_search_update_get_delete(settings: Settings):
    run = make_runner(settings)
    added = run(
        "add_knowledge",
        title="发布流程",
        content="先打标签，再构建，最后发布。",
        domain="ops",
        tags=["release"],
    )
    assert added.startswith('Saved "发布流程" in ops')
    item_id = item_id_of(added)

    found = run("search_knowledge", query="构建 发布", domain="ops")
    assert "1 result(s)" in found and f"id: {item_id}" in found and "先打标签" in found
    assert "Nothing in the knowledge base" in run("search_knowledge", query="构建", domain="hr")

    updated = run("update_knowledge", item_id=item_id, content="先测试，再发布。")
    assert updated.startswith("Updated")
    assert "先测试" in run("get_knowledge_item", item_id=item_id)
    assert "Nothing" in run("search_knowledge", query="打标签")

    assert run("delete_knowledge", item_id=item_id).startswith('Deleted "发布流程"')
    assert run("get_knowledge_item", item_id=item_id).startswith("Error: no knowledge item")


def test_errors_are_returned_as_text(settings: Settings):
    run = make_runner(settings)
    assert run("add_knowledge", title="", content="x").startswith("Error: A knowledge item needs")
    assert run("add_knowledge", title="t", content="x", domain="documents").startswith("Error:")
    missing = run("update_knowledge", item_id="nope", title="x")
    assert missing.startswith("Error: no knowledge item")
    assert run("update_knowledge", item_id="nope").startswith("Error: nothing to change")
    assert run("delete_knowledge", item_id="nope").startswith("Error: no knowledge item")
    assert run("search_knowledge", query=" ").startswith("Error: empty query")


def test_long_items_are_read_on_by_chunk_ranges(data_dir, tmp_path):
    settings = load_settings(
        env_file=None, paths={"data_dir": data_dir}, documents={"max_result_content_size": 2_000}
    )
    run = make_runner(settings)
    text = "\n\n".join(f"Part {i}: " + "detail " * 50 for i in range(40))
    item_id = item_id_of(run("add_knowledge", title="Manual", content=text))
    whole = run("get_knowledge_item", item_id=item_id)
    assert "(cut: 2,000 of" in whole and "chunk_start=0" in whole
    first = run("get_knowledge_item", item_id=item_id, chunk_start=0, chunk_end=10)
    assert first.count("chunk ") >= 2 and "read on with chunk_start=" in first
    following = int(first.rsplit("chunk_start=", 1)[1].rstrip(")"))
    more = run("get_knowledge_item", item_id=item_id, chunk_start=following)
    assert f"chunk {following}:" in more
    assert "chunk_end must be greater" in run(
        "get_knowledge_item", item_id=item_id, chunk_start=5, chunk_end=5
    )


def test_search_results_stay_within_the_call_budget(data_dir):
    settings = load_settings(
        env_file=None,
        paths={"data_dir": data_dir},
        documents={"max_total_content_size": 6_000, "max_result_content_size": 2_000},
    )
    run = make_runner(settings)
    for n in range(6):
        run("add_knowledge", title=f"Book {n}", content="walrus " + "filler text " * 2_000)
    text = run("search_knowledge", query="walrus", max_results=6)
    assert text.count("\n[") == 6
    body = sum(len(line) for line in text.splitlines() if line.startswith("      "))
    assert body <= 6_000 + 6 * 6 * 40  # content budget plus the indentation of each line


@pytest.mark.parametrize("backend", ["sqlite"])  # indexes.db's own damage
def test_a_damaged_database_is_reported_not_raised(settings: Settings):
    settings.paths.indexes_db.write_bytes(b"this is not a SQLite database" * 100)
    run = make_runner(settings)
    for name, args in (
        ("search_knowledge", {"query": "x"}),
        ("add_knowledge", {"title": "t", "content": "c"}),
        ("get_knowledge_item", {"item_id": "x"}),
    ):
        text = run(name, **args)
        assert text.startswith("Error: The index database") and "is damaged" in text, name
        assert "holds your knowledge base: move it aside rather than deleting it" in text, name


def test_a_full_answer_fits_the_tool_answer_cap_and_names_what_did_not_fit(data_dir):
    """Twenty long notes: the budget allows more text than one tool answer holds, so the
    answer keeps whole results and lists the rest; the tools node never cuts it."""
    settings = load_settings(
        env_file=None,
        model={"model_name": "m", "openai_api_key": "k"},
        paths={"data_dir": data_dir},
        tools={"tool_result_max_chars": 20_000},
    )
    run = make_runner(settings)
    for number in range(20):
        run(
            "add_knowledge",
            title=f"Release note {number}",
            content="\n".join(f"line {n} of the rollout checklist for step {number}" for n in range(100)),
        )
    answer = run("search_knowledge", query="rollout checklist", max_results=20)
    assert len(answer) <= 20_000 and "Output cut" not in answer
    shown = answer.split(" result(s)")[0].rsplit("\n", 1)[-1]
    assert 1 <= int(shown) < 20
    assert f"{20 - int(shown)} more result(s) did not fit in one answer" in answer
    assert "get_knowledge_item" in answer


def test_the_number_of_results_defaults_to_the_setting(data_dir):
    settings = load_settings(
        env_file=None,
        model={"model_name": "m", "openai_api_key": "k"},
        paths={"data_dir": data_dir},
        documents={"search_max_results_default": 2},
    )
    run = make_runner(settings)
    for number in range(4):
        run("add_knowledge", title=f"Note {number}", content=f"deployment window number {number}")
    assert run("search_knowledge", query="deployment window").startswith("2 result(s)")
    assert run("search_knowledge", query="deployment window", max_results=4).startswith("4 result(s)")


def test_the_builtin_folder_is_imported_when_the_knowledge_base_is_first_read(data_dir, tmp_path):
    """Not when the tools are built (a session that never reads the knowledge base never
    opens the folder), but before the first search, once per process; the news is told once."""
    folder = tmp_path / "knowledge"
    (folder / "ops").mkdir(parents=True)
    (folder / "ops" / "release.md").write_text(
        "# Release checklist\n\nTag, build, then ship.\n", encoding="utf-8"
    )
    settings = load_settings(env_file=None, paths={"data_dir": data_dir, "knowledge_dir": folder})
    env = ToolEnvironment(settings=settings)
    run = make_runner(settings, env)
    assert not settings.paths.indexes_db.exists() and env.drain_notices() == []

    found = run("search_knowledge", query="release checklist")
    assert "Release checklist" in found and "Tag, build, then ship." in found
    assert env.drain_notices() == ["Built-in knowledge: 1 added."]
    assert env.drain_notices() == []  # told once

    (folder / "ops" / "release.md").write_text("# Release checklist\n\nTag and ship.\n", encoding="utf-8")
    run("search_knowledge", query="release")
    assert env.drain_notices() == []  # checked once per process: the next start imports the change


def test_a_builtin_folder_that_cannot_be_imported_is_told_and_the_notes_still_answer(data_dir, tmp_path):
    folder = tmp_path / "knowledge"
    (folder / "ops").mkdir(parents=True)
    (folder / "ops" / "empty.md").write_text("---\ntitle: Nothing\n---\n", encoding="utf-8")
    settings = load_settings(env_file=None, paths={"data_dir": data_dir, "knowledge_dir": folder})
    env = ToolEnvironment(settings=settings)
    run = make_runner(settings, env)
    item_id = item_id_of(run("add_knowledge", title="Mine", content="my own note"))
    assert env.drain_notices() == []  # saving a note does not need the folder
    assert "my own note" in run("get_knowledge_item", item_id=item_id)
    (news,) = env.drain_notices()
    assert news.startswith("Built-in knowledge: 1 failed.") and "ops/empty.md: the page is empty" in news


def test_an_unreachable_search_database_is_reported_not_raised(data_dir) -> None:
    import socket

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = load_settings(
        env_file=None,
        paths={"data_dir": data_dir, "search_database_url": f"postgresql://nobody@127.0.0.1:{port}/none"},
    )
    run = make_runner(settings)
    for name, args in (
        ("search_knowledge", {"query": "x"}),
        ("add_knowledge", {"title": "t", "content": "c"}),
    ):
        text = run(name, **args)
        assert text.startswith("Error: Cannot reach the search database"), (name, text)


def test_the_model_reads_which_english_keywords_the_dictionary_searched(settings: Settings):
    """search_knowledge names the dictionary gloss a lone Chinese question was also searched
    as, in the sentence search_file and search_folder use; an English question gets none."""
    run = make_runner(settings)
    run(
        "add_knowledge",
        title="Kernel modules",
        content="Use lsmod to list the kernel modules that are currently loaded.",
        domain="linux",
    )
    found = run("search_knowledge", query="怎么查看已加载的内核模块", domain="linux")
    assert "lsmod" in found
    said = [line for line in found.splitlines() if line.startswith("The query was also searched in English")]
    assert len(said) == 1 and "kernel" in said[0], found
    assert "also searched" not in run("search_knowledge", query="kernel modules", domain="linux")
