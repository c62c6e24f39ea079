"""delete_knowledge: remove a knowledge item with its passages (and vectors)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_
from generalAgent.tools.approval import NEEDS_APPROVAL, CallContext, Reason, describe_knowledge_item
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("delete_knowledge")
    def delete_knowledge(item_id: str, runtime: ToolRuntime) -> str:
        """Delete a knowledge item for good (an indexed file can be indexed again later).

        Args:
            item_id: the id shown by search_knowledge or get_knowledge_item
        """
        # The store loads on the first call, not when the schema is built.
        from generalAgent.search.lookup import INDEX_ERRORS

        try:
            with env.open_knowledge(env.viewer(runtime)) as store:
                item = store.get_knowledge_item(item_id)
                if item is None:
                    raise ToolError(
                        N_("no knowledge item {id}; search_knowledge shows the ids."), id=repr(item_id)
                    )
                store.delete_knowledge(item_id)
        except INDEX_ERRORS as exc:
            raise ToolError.of(exc) from exc
        return f'Deleted "{item.title}" (id {item_id}) from {item.domain}.'

    def deletes_a_note(args: Mapping[str, Any], context: CallContext) -> Reason:
        note = describe_knowledge_item(env.settings, str(args.get("item_id", "")))
        return Reason(N_("deletes {note} from your knowledge base for good"), {"note": note})

    delete_knowledge.metadata = {**(delete_knowledge.metadata or {}), NEEDS_APPROVAL: deletes_a_note}
    return delete_knowledge
