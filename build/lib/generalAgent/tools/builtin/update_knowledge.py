"""update_knowledge: change a knowledge item; new text is re-indexed at once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_
from generalAgent.tools.approval import NEEDS_APPROVAL, CallContext, Reason, describe_knowledge_item
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.errors import ToolError


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("update_knowledge")
    def update_knowledge(
        item_id: str,
        title: str | None = None,
        content: str | None = None,
        domain: str | None = None,
        category: str | None = None,
        tags: list[str] | None = None,
    ) -> str:
        """Change fields of a knowledge item; only the fields given change.

        Args:
            item_id: the id shown by search_knowledge or get_knowledge_item
            title: new title
            content: new full text (replaces the old text)
            domain: new domain
            category: new category
            tags: new list of tags (replaces the old list)
        """
        # The store loads on the first call, not when the schema is built.
        from generalAgent.knowledge import STORE_ERRORS

        if all(v is None for v in (title, content, domain, category, tags)):
            raise ToolError("nothing to change; give at least one of title, content, domain, category, tags.")
        try:
            with env.open_knowledge() as store:
                item = store.update_knowledge(
                    item_id,
                    title=title,
                    content=content,
                    domain=domain,
                    category=category,
                    tags=tags,
                )
        except STORE_ERRORS as exc:
            raise ToolError(str(exc)) from exc
        if item is None:
            raise ToolError(f"no knowledge item {item_id!r}; search_knowledge shows the ids.")
        return f'Updated "{item.title}" (id {item.id}) in {item.domain}.'

    def changes_a_note(args: Mapping[str, Any], context: CallContext) -> Reason:
        note = describe_knowledge_item(env.settings, str(args.get("item_id", "")))
        return Reason(N_("changes {note} in your knowledge base"), {"note": note})

    update_knowledge.metadata = {**(update_knowledge.metadata or {}), NEEDS_APPROVAL: changes_a_note}
    return update_knowledge
