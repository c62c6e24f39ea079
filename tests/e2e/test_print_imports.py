"""A quick start for scripts: `generalagent -p` imports nothing its first request does not need.

The real CLI answers `-p hi` from the local test server in a fresh process; the modules it
imported are read from that process. Document libraries, jieba, OCR, MCP, PostgreSQL, the
interactive prompt and the rich parts only the chat or other commands draw stay out
(python -X importtime shows each costs tens to hundreds of milliseconds).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.openai_server import Reply, ScriptedOpenAIServer

# Each with why -p must not need it.
NOT_NEEDED = {
    "jieba": "Chinese segmentation: only when text is indexed or searched",
    "pypdfium2": "PDF: only when a PDF is read",
    "rapidocr_onnxruntime": "OCR runs in its own process, only for scanned pages",
    "onnxruntime": "OCR or local embeddings only",
    "numpy": "OCR or embeddings only",
    "openpyxl": "XLSX only",
    "docx": "DOCX only",
    "pptx": "PPTX only",
    "sentence_transformers": "local embeddings only",
    "psycopg": "only with DATABASE_URL",
    "langgraph.checkpoint.postgres": "only with DATABASE_URL",
    "mcp": "only when an MCP server is configured",
    "langchain_mcp_adapters": "only when an MCP server is configured",
    "prompt_toolkit": "the interactive chat's input line",
    "rich.markdown": "drawing Markdown answers in the chat (markdown-it, pygments)",
    "markdown_it": "drawing Markdown answers in the chat",
    "generalAgent.cli.chat": "the interactive chat and its slash commands",
    "generalAgent.cli.views": "the chat's read-only /commands",
    "generalAgent.cli.builtin_commands": "the chat's slash-command records",
    "generalAgent.cli.completion": "the chat's Tab completion",
    "generalAgent.cli.custom_commands": "the user's /commands, typed in the chat only",
    "generalAgent.cli.session_resume": "the chat's --resume picker and recap",
    "generalAgent.cli.documents_commands": "`index` and `search`: loaded only when the command line names one",
    "generalAgent.cli.search_commands": "`search`: loaded only when the command line names it",
    "generalAgent.cli.knowledge_commands": "`kb`: loaded only when the command line names it",
    "generalAgent.cli.config_commands": "`config`: loaded only when the command line names it",
    "generalAgent.cli.mcp_commands": "`mcp`: loaded only when the command line names it",
    "generalAgent.cli.search_view": "search results drawn by `search` and `kb search`",
    "generalAgent.cli.doctor": "`doctor` only",
    "generalAgent.cli.acp": "`acp` only",
    "acp": "the Agent Client Protocol: `acp` only",
    "typer.rich_utils": "typer's rich help, drawn only for -h",
    "generalAgent.documents.ocr_worker": "OCR runs in its own process",
    "generalAgent.cli.escape_key": "Esc cancels the chat's turns; -p has no prompt to return to",
    "rich.status": "the chat's spinner",
    "generalAgent.documents.search": "search_file's engine: loaded when the tool is first called",
    "generalAgent.documents.folder": "search_folder's engine: loaded when the tool is first called",
    "generalAgent.documents.index": "the document index: loaded when a document is searched or hashed",
    "generalAgent.documents.tables": "query_table's engine: loaded when the tool is first called",
    "generalAgent.knowledge.store": "the knowledge base: opened when a knowledge tool is first called",
    "generalAgent.knowledge.builtin": "the built-in knowledge folder: imported when the knowledge base is first read",
    "generalAgent.knowledge.items": "the knowledge records: add_knowledge marks a note untrusted when it stores one",
    "generalAgent.search.chunking": "the chunker: only when a document is chunked or its blocks joined",
    "generalAgent.search.connection": "indexes.db: opened by a search or knowledge tool only",
}
# Not listed: rich.progress, rich.table, rich.syntax and pygments, which httpx's own
# command-line module imports whenever click and rich are installed (as they are here),
# and langsmith, which langchain_core imports: a bare `import langchain_openai` has them.

# Runs the CLI as `generalagent -p hi` does and writes the modules it imported on exit.
RUN = """
import atexit, json, runpy, sys
target = sys.argv[1]
atexit.register(lambda: json.dump(sorted(sys.modules), open(target, "w")))
sys.argv = ["generalagent", "-p", "hi"]
runpy.run_module("generalAgent", run_name="__main__")
"""


def imported_by_print_mode(cli_env: dict[str, str], workdir: Path, tmp_path: Path) -> set[str]:
    modules = tmp_path / "modules.json"
    result = subprocess.run(
        [sys.executable, "-c", RUN, str(modules)],
        env=cli_env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stdout == "Hello.\n", result.stderr
    return set(json.loads(modules.read_text(encoding="utf-8")))


def test_print_mode_imports_nothing_its_request_does_not_need(
    openai_server: ScriptedOpenAIServer, cli_env: dict[str, str], workdir: Path, tmp_path: Path
) -> None:
    openai_server.add(Reply(text="Hello."), Reply(text="Hello."))
    imported_by_print_mode(cli_env, workdir, tmp_path)  # the first run also makes the data folder
    imported = imported_by_print_mode(cli_env, workdir, tmp_path)
    assert "langgraph" in imported and "generalAgent.cli.once" in imported  # it did run the agent
    loaded = {name: why for name, why in NOT_NEEDED.items() if name in imported}
    assert loaded == {}, f"-p imported modules it does not need: {loaded}"
    # Nor did it open the knowledge base to import the built-in knowledge folder: that
    # waits for the first knowledge tool call.
    assert not (Path(cli_env["DATA_DIR"]) / "indexes.db").exists()
