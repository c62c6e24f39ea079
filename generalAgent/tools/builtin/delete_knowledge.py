"""delete_knowledge: remove a knowledge item with its passages (and vectors)."""

from __future__ import annotations

import sqlite3

from langchain_core.tools import BaseTool, tool

from generalAgent.knowledge import open_store
from generalAgent.search.database import DatabaseError
from generalAgent.search.lookup import QueryError
from generalAgent.tools.environment import ToolEnvironment


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("delete_knowledge")
    def delete_knowledge(item_id: str) -> str:
        """Delete a knowledge item for good (an indexed file can be indexed again later).

        Args:
            item_id: the id shown by search_knowledge or get_knowledge_item
        """
        try:
            with open_store(env.settings) as store:
                item = store.get_knowledge_item(item_id)
                if item is None:
                    return f"Error: no knowledge item {item_id!r}; search_knowledge shows the ids."
                store.delete_knowledge(item_id)
        except (DatabaseError, QueryError, sqlite3.Error) as exc:
            return f"Error: {exc}"
        return f'Deleted "{item.title}" (id {item_id}) from {item.domain}.'

    return delete_knowledge
