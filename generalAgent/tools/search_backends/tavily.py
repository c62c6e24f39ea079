"""Tavily, a search API for agents (free monthly credits), reachable from mainland China.

From docs.tavily.com: `POST https://api.tavily.com/search` with `Authorization: Bearer
tvly-...` and a JSON body; `query` is required, `max_results` 0-20 (default 5),
`search_depth` basic or advanced, `topic` general or news. The answer: `{"query",
"answer", "results": [{"title", "url", "content", "score", "published_date"?}],
"response_time"}`. Errors: 400 bad request, 401 missing or invalid key, 429 rate limit,
432 plan limit, 433 pay-as-you-go limit, each with `{"detail": {"error": "..."}}`.
"""

from __future__ import annotations

from generalAgent.tools.search_backends.backend import (
    BackendConfig,
    WebResult,
    request_json,
    require_key,
    result,
)

NAME = "Tavily"
NEEDS_KEY = True
ENDPOINT = "https://api.tavily.com/search"


def search(query: str, config: BackendConfig) -> list[WebResult]:
    key = require_key(config, NAME)
    data = request_json(
        NAME,
        "POST",
        config.base_url or ENDPOINT,
        config,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        body={"query": query, "max_results": config.max_results, "search_depth": "basic", "topic": "general"},
    )
    items = data.get("results") or [] if isinstance(data, dict) else []
    found = [
        result(item.get("title"), item.get("url"), item.get("content"), item.get("published_date"))
        for item in items
        if isinstance(item, dict)
    ]
    return [item for item in found if item is not None][: config.max_results]
