"""get_knowledge_item: read one knowledge item, whole or chunk by chunk."""

from __future__ import annotations

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError


def create_tool(env: ToolEnvironment) -> BaseTool:
    limit = env.settings.documents.max_result_content_size

    @tool("get_knowledge_item")
    def get_knowledge_item(
        item_id: str, runtime: ToolRuntime, chunk_start: int | None = None, chunk_end: int | None = None
    ) -> str:
        """Read a knowledge item. Without a range: its fields and text (long text is cut,
        and the answer says how to read on). With chunk_start/chunk_end: those chunks
        (numbers as in search results; end not included), as many as fit in one answer.

        Args:
            item_id: the id shown by search_knowledge
            chunk_start: first chunk to read (0-based)
            chunk_end: chunk after the last one to read
        """
        # The store loads on the first call, not when the schema is built.
        from generalAgent.knowledge.render import render_item
        from generalAgent.search.lookup import INDEX_ERRORS

        try:
            with env.open_knowledge(env.viewer(runtime)) as store:
                item = store.get_knowledge_item(item_id)
                if item is None:
                    raise ToolError(
                        N_("no knowledge item {id}; search_knowledge shows the ids."), id=repr(item_id)
                    )
                total = store.count_chunks(item_id)
                chunks = None
                if chunk_start is not None or chunk_end is not None:
                    first = max(0, chunk_start or 0)
                    last = (chunk_end if chunk_end is not None else total) - 1
                    if last < first:
                        raise ToolError(
                            N_("chunk_end must be greater than chunk_start ({first})."), first=first
                        )
                    chunks = store.get_chunks_for_item(item_id, first, last)
        except INDEX_ERRORS as exc:
            raise ToolError.of(exc) from exc
        return render_item(item, chunks, total, limit)

    return get_knowledge_item
