"""add_knowledge: remember a note in the knowledge base (searchable at once).

A note written in a turn that read untrusted content is stored with the source
"agent-untrusted" (tools/provenance.py), and every search shows it as such.
"""

from __future__ import annotations

from langchain_core.tools import BaseTool, tool

from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError
from generalAgent.tools.provenance import state_read_untrusted


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("add_knowledge")
    def add_knowledge(
        title: str,
        content: str,
        runtime: ToolRuntime,
        domain: str = "general",
        category: str = "",
        tags: list[str] | None = None,
        space: str = "",
    ) -> str:
        """Save a note to the knowledge base so later searches find it.

        Args:
            title: a few words saying what it is
            content: the text to remember (Markdown headings are kept as sections)
            domain: the area it belongs to, e.g. "ops", "finance" (default "general")
            category: optional finer grouping within the domain
            tags: optional labels, e.g. ["release", "checklist"]
            space: a team space to share it in, e.g. "team" (default: the user's own)
        """
        # The store loads on the first call, not when the schema is built.
        from generalAgent.knowledge import STORE_ERRORS, open_store
        from generalAgent.knowledge.items import UNTRUSTED_SOURCE

        untrusted = state_read_untrusted(runtime.state)
        try:
            with open_store(env.settings) as store:
                item = store.add_knowledge(
                    title,
                    content,
                    domain=domain,
                    category=category,
                    tags=tags or [],
                    source=UNTRUSTED_SOURCE if untrusted else "agent",
                    space=space,
                )
                chunks = store.count_chunks(item.id)
        except STORE_ERRORS as exc:
            raise ToolError.of(exc) from exc
        marked = " It is marked as written after reading untrusted content." if untrusted else ""
        return f'Saved "{item.title}" in {item.domain} (id {item.id}, {chunks} chunks).{marked}'

    return add_knowledge
