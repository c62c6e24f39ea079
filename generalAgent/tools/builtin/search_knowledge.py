"""search_knowledge: search everything the user has given the agent (notes, pages, files)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError

if TYPE_CHECKING:
    from generalAgent.knowledge import KnowledgeStore


def create_tool(env: ToolEnvironment) -> BaseTool:
    # One store per process, opened on first use: it remembers that embeddings failed so the
    # user is told once, and keeps its connection (guarded: tools may run in threads).
    lock = threading.Lock()
    holder: list[KnowledgeStore] = []

    @tool("search_knowledge")
    def search_knowledge_tool(
        query: str | list[str],
        runtime: ToolRuntime,
        domain: str | None = None,
        category: str | None = None,
        tags: list[str] | None = None,
        max_results: int | None = None,
        space: str | None = None,
    ) -> str:
        """Search the knowledge base: saved notes, built-in knowledge and every indexed file.

        Returns the best items with their matching passages and the passages around them.
        Chinese and English; items with more of the words, and rarer ones, come first, and
        naming a document helps. Use specific words. Each indexed file's language is shown;
        words match only in a text's own language, so when the files are in another
        language than the user's, give query as a list: the user's words and their
        rendering in that language (searched together, fused). Filter with domain (list them with the domains in results, e.g. "documents"
        for indexed files), category, or tags (any of them). Long items come back as a
        preview plus passages; read on with get_knowledge_item.

        Args:
            query: words to look for, e.g. "发布流程 rollback", or a list of phrasings of the
                same question, e.g. ["回滚 流程", "rollback procedure"] (up to 5)
            domain: only this domain
            category: only this category
            tags: only items with at least one of these tags
            max_results: items to return, 1-20 (leave it unset for the usual number)
            space: only this space, e.g. a team's "team", or "" for the user's own (default: all
                the user's spaces)
        """
        # The store, the search and its budgets load on the first call, not with the schema.
        from generalAgent.knowledge import search_knowledge
        from generalAgent.knowledge.render import render_search
        from generalAgent.knowledge.store import STORE_ERRORS
        from generalAgent.search.budgets import ContentBudget
        from generalAgent.search.embeddings import stopped_by
        from generalAgent.search.query import phrasings

        if not phrasings(query):
            raise ToolError(N_("empty query; give the words to look for."))
        try:
            viewer = env.viewer(runtime)
            with lock, stopped_by(env.cancel_token(runtime)):  # Ctrl-C gives up a query's embedding
                if not holder:
                    holder.append(env.open_knowledge(viewer))
                holder[0].viewer = viewer  # this call's user: the store is shared by every run
                result = search_knowledge(
                    holder[0],
                    query,
                    domain=domain,
                    category=category,
                    tags=tags,
                    max_results=max_results,
                    budget=ContentBudget.from_settings(env.settings.documents),
                    space=space,
                    render=env.query_renderer(runtime),
                )
        except STORE_ERRORS as exc:  # the index's errors, and a space the user is not in
            raise ToolError.of(exc) from exc
        filters = ", ".join(
            f"{name}: {value}"
            for name, value in (
                ("domain", domain),
                ("category", category),
                ("tags", ", ".join(tags or [])),
                ("space", space),
            )
            if value
        )
        return render_search(result, filters, env.settings.tools.tool_result_max_chars)

    return search_knowledge_tool
