"""The built-in tools' one-line descriptions (config/tools.yaml), as /tools and the Tab menu show them.

tools.yaml holds them in English; they are listed here so `make i18n` carries them into the
catalog and the terminal shows them in the UI language (`shown_description`). The model
reads each tool's own English description, never these. tests/unit/cli/test_tool_descriptions.py
fails when tools.yaml gains or changes a description that is not listed here.
"""

from __future__ import annotations

from generalAgent.i18n import N_, _

TOOL_DESCRIPTIONS = {
    "now": N_("Current date and time (UTC, or a given IANA time zone)."),
    "todo_write": N_("Plan multi-step work as a todo list (replaces the whole list)."),
    "todo_read": N_("Show the current todo list."),
    "read_file": N_("Read a workspace file (text with line numbers; documents as a preview)."),
    "write_file": N_("Write a text file in your folder (asks, shows the diff) or under outputs/ or temp/."),
    "edit_file": N_(
        "Replace exact text in a file of your folder (asks, shows the diff) or under outputs/ or temp/."
    ),
    "list_workspace_files": N_("List the files of the session workspace."),
    "find_files": N_("Find workspace files by glob pattern."),
    "search_file": N_(
        "Find passages in one workspace document (PDF, DOCX, XLSX, PPTX, Markdown, text, code), Chinese or English."
    ),
    "search_folder": N_(
        "Find passages across every document under a workspace folder, grouped per document."
    ),
    "search_knowledge": N_(
        "Search the knowledge base (notes, built-in knowledge, indexed files) by domain, category and tags."
    ),
    "query_table": N_(
        "Exact answers from an XLSX sheet, a CSV, or a DOCX or PDF table by one read-only SQL SELECT."
    ),
    "view_page": N_(
        "Look at a PDF page or an image file as a picture (charts, diagrams, scans); OCR text for text-only models."
    ),
    "fetch_web": N_("Fetch an http(s) page as readable text (no local or private addresses by default)."),
    "web_search": N_(
        "Search the web (SearXNG, Bocha, Tavily or Brave, as WEB_SEARCH_PROVIDER says) for pages with title, URL, date and snippet."
    ),
    "run_bash_command": N_("Run a shell command in the workspace; the user approves every call."),
    "delegate_task": N_("Hand a task to an isolated sub-agent (available once you @mention an agent)."),
    "add_knowledge": N_("Save a note to the knowledge base."),
    "update_knowledge": N_("Change a knowledge item; new text is re-indexed."),
    "delete_knowledge": N_("Delete a knowledge item."),
    "get_knowledge_item": N_("Read one knowledge item, whole or chunk by chunk."),
}


def shown_description(description: str) -> str:
    """A tool's description in the UI language: a built-in one translated, others as given."""
    return _(description) if description in TOOL_DESCRIPTIONS.values() else description
