"""add_knowledge: remember a note in the knowledge base (searchable at once)."""

from __future__ import annotations

from langchain_core.tools import BaseTool, tool

from generalAgent.knowledge import STORE_ERRORS, open_store
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.errors import ToolError


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("add_knowledge")
    def add_knowledge(
        title: str,
        content: str,
        domain: str = "general",
        category: str = "",
        tags: list[str] | None = None,
    ) -> str:
        """Save a note to the knowledge base so later searches find it.

        Args:
            title: a few words saying what it is
            content: the text to remember (Markdown headings are kept as sections)
            domain: the area it belongs to, e.g. "ops", "finance" (default "general")
            category: optional finer grouping within the domain
            tags: optional labels, e.g. ["release", "checklist"]
        """
        try:
            with open_store(env.settings) as store:
                item = store.add_knowledge(
                    title,
                    content,
                    domain=domain,
                    category=category,
                    tags=tags or [],
                    source="agent",
                )
                chunks = store.count_chunks(item.id)
        except STORE_ERRORS as exc:
            raise ToolError(str(exc)) from exc
        return f'Saved "{item.title}" in {item.domain} (id {item.id}, {chunks} chunks).'

    return add_knowledge
