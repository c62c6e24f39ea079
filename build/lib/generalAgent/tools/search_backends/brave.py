"""Brave Search API (a free plan after sign-up), from its own index.

From api-dashboard.search.brave.com/docs: `GET https://api.search.brave.com/res/v1/web/search`
with `q` (required, at most 400 characters) and `count` (at most 20); the key goes in the
`X-Subscription-Token` header, with `Accept: application/json`. The answer's `web.results`
carry `title`, `url`, `description` (with <strong> around matches) and, when dated,
`page_age` (ISO) or `age` ("2 days ago"). Errors: `{"type": "ErrorResponse", "error":
{"code", "detail", "status"}}`, 422 for a bad token, 429 for the rate or monthly limit.
"""

from __future__ import annotations

from generalAgent.tools.search_backends.backend import (
    BackendConfig,
    WebResult,
    request_json,
    require_key,
    results_from,
)

NAME = "Brave"
NEEDS_KEY = True
ENDPOINT = "https://api.search.brave.com/res/v1/web/search"
MAX_QUERY_CHARS = 400


def search(query: str, config: BackendConfig) -> list[WebResult]:
    key = require_key(config, NAME)
    data = request_json(
        NAME,
        "GET",
        config.base_url or ENDPOINT,
        config,
        headers={"Accept": "application/json", "X-Subscription-Token": key},
        params={"q": query[:MAX_QUERY_CHARS], "count": min(config.max_results, 20)},
    )
    web = data.get("web") if isinstance(data, dict) else None
    return results_from(
        web.get("results") if isinstance(web, dict) else None,
        config,
        lambda item: (
            item.get("title"),
            item.get("url"),
            item.get("description"),
            item.get("page_age") or item.get("age"),
        ),
    )
