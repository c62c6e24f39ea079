"""add_knowledge: remember a note, or a document of the workspace, in the knowledge base
(searchable at once; a document's pages are kept and cited, as `kb add FILE` keeps them).

A note written in a turn that read untrusted content is stored with the source
"agent-untrusted" (tools/provenance.py), and every search shows it as such.
"""

from __future__ import annotations

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError
from generalAgent.tools.provenance import state_read_untrusted


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("add_knowledge")
    def add_knowledge(
        title: str,
        runtime: ToolRuntime,
        content: str = "",
        file_path: str = "",
        domain: str = "general",
        category: str = "",
        tags: list[str] | None = None,
        space: str = "",
    ) -> str:
        """Save a note, or a document of the workspace, to the knowledge base so later searches find it.

        Args:
            title: a few words saying what it is
            content: the text to remember (Markdown headings are kept as sections)
            file_path: instead of content, a document in the workspace to save whole, e.g.
                uploads/q3.pdf (searches cite its pages)
            domain: the area it belongs to, e.g. "ops", "finance" (default "general")
            category: optional finer grouping within the domain
            tags: optional labels, e.g. ["release", "checklist"]
            space: a team space to share it in, e.g. "team" (default: the user's own)
        """
        # The store loads on the first call, not when the schema is built.
        from generalAgent.documents.extract import extract_document
        from generalAgent.documents.reading import DocumentError
        from generalAgent.knowledge import STORE_ERRORS, open_store
        from generalAgent.knowledge.items import UNTRUSTED_SOURCE

        if bool(content.strip()) == bool(file_path.strip()):
            raise ToolError(
                N_("give either content (a note) or file_path (a document of the workspace), not both.")
            )
        untrusted = state_read_untrusted(runtime.state)
        blocks, source_path = None, None
        if file_path.strip():
            workspace = env.workspace(runtime)
            path = workspace.resolve(file_path)
            if not path.is_file():
                raise ToolError(
                    N_("{path} is not a file in the workspace; list_workspace_files shows them."),
                    path=file_path,
                )
            try:
                read = extract_document(path, env.settings.documents, open_file=workspace.open_for_reading)
            except DocumentError as exc:
                raise ToolError.of(exc) from exc
            blocks, source_path = read.blocks, str(path)
        try:
            with open_store(env.settings, env.viewer(runtime)) as store:
                item = store.add_knowledge(
                    title,
                    content,
                    domain=domain,
                    category=category,
                    tags=tags or [],
                    source=UNTRUSTED_SOURCE if untrusted else ("file" if blocks is not None else "agent"),
                    source_path=source_path,
                    blocks=blocks,
                    space=space,
                )
                chunks = store.count_chunks(item.id)
        except STORE_ERRORS as exc:
            raise ToolError.of(exc) from exc
        marked = " It is marked as written after reading untrusted content." if untrusted else ""
        return f'Saved "{item.title}" in {item.domain} (id {item.id}, {chunks} chunks).{marked}'

    return add_knowledge
