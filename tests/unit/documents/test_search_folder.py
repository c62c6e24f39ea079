"""A folder is a corpus: search_folder indexes what changed and searches every document."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from generalAgent.config.settings import Settings
from generalAgent.documents.folder import FolderSearch, render_folder_search, search_folder, searchable_files
from generalAgent.documents.search import SearchFailure
from generalAgent.graph.nodes.tools import build_tool_node
from generalAgent.search.budgets import ContentBudget, content_size
from generalAgent.tools.builtin.search_folder import create_tool
from generalAgent.tools.environment import ToolEnvironment
from tests.support.documents import make_pdf

THREAD = "session-1"


@pytest.fixture
def library(tmp_path: Path) -> Path:
    folder = tmp_path / "library"
    (folder / "ops").mkdir(parents=True)
    (folder / "ops" / "backup.md").write_text(
        "# Backup\n\nCopy the tree with rsync -aHAX to keep hard links.\n\n# Restore\n\nRestore from the copy.\n",
        encoding="utf-8",
    )
    (folder / "值班.md").write_text("# 值班\n\n值班电话 555-0199，备份失败时先通知值班。\n", encoding="utf-8")
    make_pdf(folder / "report.pdf", [["Intro page."], ["The backup window is 02:00 to 04:00 UTC."]])
    (folder / ".hidden.md").write_text("backup secrets\n", encoding="utf-8")
    (folder / "notes.bin").write_bytes(b"\x00backup")
    return folder


def search(settings: Settings, folder: Path, query: str | list[str], **options: object) -> FolderSearch:
    return search_folder(settings.paths.indexes_db, settings.documents, folder, query, **options)  # type: ignore[arg-type]


def test_every_document_is_searched_and_hits_are_grouped_per_document(settings: Settings, library: Path):
    result = search(settings, library, "backup")
    assert (result.files, result.indexed, result.unchanged, result.pending) == (3, 3, 0, 0)
    files = [d.file for d in result.documents]
    assert sorted(files) == sorted(str(p) for p in (library / "ops" / "backup.md", library / "report.pdf"))
    pdf = next(d for d in result.documents if d.file.endswith("report.pdf"))
    assert pdf.language == "en" and pdf.results[0].place == "page 2"
    text = render_folder_search(result)
    assert text.startswith(
        f"3 document(s) searched in {library} (languages: English, Chinese) — 3 newly indexed."
    )
    assert f"## {library / 'report.pdf'} (pdf, English text)" in text and "page 2" in text
    assert "secrets" not in text  # hidden files are not searched


def test_unchanged_files_are_not_read_again_and_a_changed_one_is_picked_up(settings: Settings, library: Path):
    search(settings, library, "backup")
    again = search(settings, library, "backup")
    assert (again.indexed, again.unchanged) == (0, 3)
    changed = library / "ops" / "backup.md"
    changed.write_text("# Backup\n\nSnapshots are taken with zfs snapshot every night.\n", encoding="utf-8")
    os.utime(changed, ns=(changed.stat().st_atime_ns, changed.stat().st_mtime_ns + 5_000_000_000))
    result = search(settings, library, "zfs snapshot")
    assert (result.indexed, result.unchanged) == (1, 2)
    assert [d.file for d in result.documents] == [str(changed)]


def test_a_folder_indexed_past_the_deadline_answers_from_what_is_indexed(settings: Settings, library: Path):
    result = search(settings, library, "backup", index_seconds=0)
    assert result.pending == 3 and result.documents == ()
    assert "3 not indexed yet" in render_folder_search(result)
    assert search(settings, library, "backup").documents  # the next search goes on


def test_a_list_of_phrasings_and_the_language_advice(settings: Settings, tmp_path: Path):
    folder = tmp_path / "manuals"
    folder.mkdir()
    for n in range(3):
        (folder / f"m{n}.md").write_text(
            f"# Logs {n}\n\nShow the log since the last boot with journalctl -b.\n"
        )
    # Nothing there is about penguins: the dictionary gloss (penguin feather …) finds nothing either.
    missed = render_folder_search(search(settings, folder, "企鹅羽毛的颜色"))
    assert "No passage matches" in missed and "The documents are in English and the query is not" in missed
    both = search(settings, folder, ["上次启动以来的日志", "log since the last boot"])
    assert len(both.documents) == 3


def test_the_call_budget_holds_over_many_documents(settings: Settings, tmp_path: Path):
    folder = tmp_path / "many"
    folder.mkdir()
    for n in range(30):
        parts = [f"# Part {k} of {n}\n\n" + "walrus tusks and ivory. " * 40 for k in range(4)]
        (folder / f"doc{n:02}.md").write_text("\n\n".join(parts) + "\n")
    result = search(settings, folder, "walrus tusks", max_results=20)
    budget = ContentBudget.from_settings(settings.documents)
    hits = [hit for document in result.documents for hit in document.results]
    assert len(hits) == 20
    assert sum(content_size(hit) for hit in hits) <= budget.call_chars
    assert all(content_size(hit) <= budget.result_chars for hit in hits)
    assert all(len(c.text) <= budget.chunk_chars for hit in hits for c in hit.matched)


def test_symbolic_links_out_of_the_folder_are_not_followed(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    folder = tmp_path / "folder"
    (folder / "sub").mkdir(parents=True)
    (folder / "own.md").write_text("own\n")
    (folder / "sub" / "deep.md").write_text("deep\n")
    (folder / "link.md").symlink_to(outside / "secret.md")
    (folder / "linked").symlink_to(outside, target_is_directory=True)
    (folder / "inside.md").symlink_to(folder / "sub" / "deep.md")  # stays inside: taken
    expected = [folder / "inside.md", folder / "own.md", folder / "sub" / "deep.md"]
    assert searchable_files(folder) == (expected, False)
    assert searchable_files(folder, limit=2) == (expected[:2], True)


def test_a_file_is_not_a_folder(settings: Settings, library: Path):
    with pytest.raises(SearchFailure, match="is not a folder"):
        search(settings, library / "值班.md", "值班")


def run_tool(settings: Settings, **args: object) -> str:
    graph = StateGraph(MessagesState)
    tool = create_tool(ToolEnvironment(settings=settings))
    graph.add_node("tools", build_tool_node([tool], settings.tools.tool_result_max_chars))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    call = AIMessage(content="", tool_calls=[{"name": "search_folder", "args": args, "id": "c1"}])
    result = graph.compile().invoke({"messages": [call]}, config={"configurable": {"thread_id": THREAD}})
    return str(result["messages"][-1].content)


def test_the_tool_searches_a_workspace_folder_and_shows_workspace_paths(settings: Settings, library: Path):
    uploads = settings.paths.workspaces_dir / THREAD / "uploads"
    uploads.mkdir(parents=True)
    shutil.copytree(library, uploads / "library")
    text = run_tool(settings, folder="uploads/library", query=["值班 备份", "backup window"])
    assert "3 document(s) searched in uploads/library" in text
    assert "## uploads/library/report.pdf (pdf, English text)" in text
    assert "## uploads/library/值班.md" in text
    assert "not a folder" in run_tool(settings, folder="uploads/library/值班.md", query="值班")
    assert "outside" in run_tool(settings, folder="../", query="x") or "Error" in run_tool(
        settings, folder="../", query="x"
    )


def test_a_hit_in_one_document_does_not_hide_the_same_chunk_number_of_another(
    settings: Settings, tmp_path: Path
):
    """Context chunks are told apart per document: chunk 2 of a.md being a hit once kept
    chunk 2 of b.md out of b.md's context."""
    folder = tmp_path / "pair"
    folder.mkdir()
    for name, hit in (("a.md", 2), ("b.md", 3)):
        sections = [
            f"# Part {n}\n\n" + ("The walrus rests here. " if n == hit else f"Plain words number {n}. ") * 8
            for n in range(6)
        ]
        (folder / name).write_text("\n\n".join(sections), encoding="utf-8")
    result = search(settings, folder, "walrus")
    by_file = {Path(d.file).name: d.results[0] for d in result.documents}
    first, second = by_file["a.md"].chunk_index, by_file["b.md"].chunk_index
    assert second == first + 1  # b.md's neighbour before its hit has a.md's hit's number
    assert first in {p.chunk_index for p in by_file["b.md"].context}


def test_the_model_reads_which_english_keywords_the_dictionary_searched(settings: Settings, tmp_path: Path):
    """As search_file says it: a lone Chinese question over an English folder names the
    dictionary's keywords it was also searched as; an English question names none."""
    folder = tmp_path / "manuals"
    folder.mkdir()
    (folder / "modules.md").write_text("# Kernel modules\n\nUse lsmod to list the loaded kernel modules.\n")
    (folder / "mail.md").write_text("# Mail\n\nThe spool keeps messages until they are delivered.\n")
    result = search(settings, folder, "怎么查看已加载的内核模块")
    assert {"kernel", "module"} <= set(result.glossed.split())
    text = render_folder_search(result)
    assert "lsmod" in text
    assert (
        f'The query was also searched in English as "{result.glossed}" (keywords from a Chinese-English'
        in text
    )
    english = search(settings, folder, "kernel modules")
    assert english.glossed == "" and "also searched" not in render_folder_search(english)


def test_the_advice_to_ask_again_in_english_follows_the_gloss_only_as_a_fallback(
    settings: Settings, tmp_path: Path
):
    """As search_file: a folder whose English passages the dictionary gloss found is not
    said to have matched "only words the two share"; a Chinese question found by a shared
    word alone still is."""
    folder = tmp_path / "manuals"
    folder.mkdir()
    (folder / "modules.md").write_text("# Kernel modules\n\nUse lsmod to list the loaded kernel modules.\n")
    (folder / "mail.md").write_text("# Mail\n\nThe spool keeps messages until they are delivered.\n")
    glossed = render_folder_search(search(settings, folder, "怎么查看已加载的内核模块")).splitlines()
    gloss = next(n for n, line in enumerate(glossed) if line.startswith("The query was also searched"))
    assert not any("only words the two share" in line for line in glossed), glossed
    assert glossed[gloss + 1].startswith("If these passages do not answer the question, search again")

    shared = render_folder_search(search(settings, folder, "lsmod 内核"))
    assert "also searched" not in shared
    assert "Note: the documents are in English and the query is not, so only words the two share" in shared
