"""The chat model renders a search query into the documents' language, once per session.

A search whose one phrasing is in another script than its documents adds a rendering
(search/query_rendering.py decides when and into which language); this is the model call
behind it, handed to the search tools through the run's context (`RunContext.render_query`,
set by the tools node of both graphs), so each session gets its own cache and cancel.

One short request: the template (templates/query_rendering.md) as the system message and
the query as the user's; the answer's first line, trimmed, is the rendering. Each
(language, query) is asked once per session (SessionScope keeps the answers); the call's
tokens are reported like a summary's, as a `{"usage": ...}` event, so they count in the
turn's usage. A failure or a cancel gives no rendering (the search goes on with the
query alone) rather than failing the search. The answer is data: it only ever becomes
a search query, quoted before it reaches FTS5 (search/query.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from generalAgent.config.settings import ModelSettings
from generalAgent.graph.cancellation import AnswerLimits, TurnCancelled, invoke_cancellable
from generalAgent.graph.prompts import TEMPLATES
from generalAgent.search.language import language_name
from generalAgent.search.query import normalise_query
from generalAgent.tools.run_context import QueryRenderer, SessionScope

LOGGER = logging.getLogger(__name__)

# A rendering is a keyword phrase: anything longer is not one, and is cut.
MAX_RENDERING_CHARS = 300
# The query sent: a search query is short; a longer one is cut (as search/query.py cuts it).
MAX_QUERY_CHARS = 500


class QueryRendering:
    """Renders search queries with one chat model; `for_session` binds it to a session."""

    def __init__(self, model: BaseChatModel, settings: ModelSettings) -> None:
        self.model = model
        self.settings = settings

    def for_session(self, scope: SessionScope) -> QueryRenderer:
        """The renderer of one session: its cache and its cancel token."""

        def render(query: str, language: str, on_usage: Callable[[dict[str, Any]], None]) -> str | None:
            return self.render(scope, query, language, on_usage)

        return render

    def render(
        self, scope: SessionScope, query: str, language: str, on_usage: Callable[[dict[str, Any]], None]
    ) -> str | None:
        text = normalise_query(query)[:MAX_QUERY_CHARS].strip()
        if not text:
            return None
        known = scope.rendering(language, text)
        if known is not None:
            return known
        limits = AnswerLimits(self.settings.model_answer_max_chars, self.settings.model_call_max_seconds)
        try:
            response = invoke_cancellable(
                self.model, rendering_request(text, language), {}, scope.cancelled, limits
            )
        except TurnCancelled:
            return None
        except Exception as exc:  # any failure of the call: the search goes on without it
            LOGGER.warning("rendering a search query failed: %s", exc)
            return None
        if response.usage_metadata:
            on_usage(dict(response.usage_metadata))
        rendered = rendering_of(response.text if isinstance(response.text, str) else "")
        if rendered:
            scope.remember_rendering(language, text, rendered)
        return rendered or None


def rendering_request(query: str, language: str) -> list[SystemMessage | HumanMessage]:
    """The request: the rendering prompt for `language`, then the query as the user's message."""
    template = (TEMPLATES / "query_rendering.md").read_text(encoding="utf-8").strip()
    return [
        SystemMessage(content=template.format(language=language_name(language))),
        HumanMessage(content=query),
    ]


def rendering_of(answer: str) -> str:
    """The rendering in a model's answer: its first non-blank line, without quotes around
    it, at most MAX_RENDERING_CHARS; "" when there is none."""
    for line in answer.splitlines():
        line = line.strip().strip("\"'“”‘’「」`").strip()
        if line:
            return normalise_query(line)[:MAX_RENDERING_CHARS].strip()
    return ""
