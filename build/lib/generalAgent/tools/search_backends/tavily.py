"""Tavily, a search API for agents (free monthly credits), reachable from mainland China.

From docs.tavily.com: `POST https://api.tavily.com/search` with `Authorization: Bearer
tvly-...` and a JSON body; `query` is required, `max_results` 0-20 (default 5),
`search_depth` basic or advanced, `topic` general or news. The answer: `{"query",
"answer", "results": [{"title", "url", "content", "score", "published_date"?}],
"response_time"}`. Errors: 400 bad request, 401 missing or invalid key, 429 rate limit,
432 plan limit, 433 pay-as-you-go limit, each with `{"detail": {"error": "..."}}`.
"""

from __future__ import annotations

from generalAgent.tools.search_backends.backend import BackendConfig, WebResult, post_json, results_from

NAME = "Tavily"
NEEDS_KEY = True
ENDPOINT = "https://api.tavily.com/search"


def search(query: str, config: BackendConfig) -> list[WebResult]:
    data = post_json(
        NAME,
        config.base_url or ENDPOINT,
        config,
        {"query": query, "max_results": config.max_results, "search_depth": "basic", "topic": "general"},
    )
    return results_from(
        data.get("results"),
        config,
        lambda item: (item.get("title"), item.get("url"), item.get("content"), item.get("published_date")),
    )
