"""update_knowledge: change a knowledge item; new text is re-indexed at once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_
from generalAgent.tools.approval import NEEDS_APPROVAL, CallContext, Reason, describe_knowledge_item
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError
from generalAgent.tools.provenance import state_read_untrusted


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("update_knowledge")
    def update_knowledge(
        item_id: str,
        runtime: ToolRuntime,
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
        from generalAgent.knowledge.items import UNTRUSTED_SOURCE

        # New words written after the session read untrusted content are marked so.
        untrusted = (title is not None or content is not None) and state_read_untrusted(runtime.state)
        if all(v is None for v in (title, content, domain, category, tags)):
            raise ToolError(
                N_("nothing to change; give at least one of title, content, domain, category, tags.")
            )
        try:
            with env.open_knowledge(env.viewer(runtime)) as store:
                item = store.update_knowledge(
                    item_id,
                    title=title,
                    content=content,
                    domain=domain,
                    category=category,
                    tags=tags,
                    source=UNTRUSTED_SOURCE if untrusted else None,
                )
        except STORE_ERRORS as exc:
            raise ToolError.of(exc) from exc
        if item is None:
            raise ToolError(N_("no knowledge item {id}; search_knowledge shows the ids."), id=repr(item_id))
        marked = " It is marked as written after reading untrusted content." if untrusted else ""
        return f'Updated "{item.title}" (id {item.id}) in {item.domain}.{marked}'

    def changes_a_note(args: Mapping[str, Any], context: CallContext) -> Reason:
        note = describe_knowledge_item(env.settings, str(args.get("item_id", "")))
        return Reason(N_("changes {note} in your knowledge base"), {"note": note})

    update_knowledge.metadata = {**(update_knowledge.metadata or {}), NEEDS_APPROVAL: changes_a_note}
    return update_knowledge
