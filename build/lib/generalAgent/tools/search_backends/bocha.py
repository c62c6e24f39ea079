"""Bocha (博查), a search API built for AI use, reachable from mainland China.

From its API documentation (open.bochaai.com): `POST https://api.bochaai.com/v1/web-search`
with `Authorization: Bearer <key>` and a JSON body; `query` is required, `count` 1-50
(default 10), `summary` asks for a longer extract, `freshness` defaults to noLimit. The
answer wraps a Bing-compatible body: `{"code": 200, "data": {"webPages": {"value": [{"name",
"url", "snippet", "summary", "datePublished", ...}]}}}`. Errors come with an HTTP status
(401 bad key, 403 no balance left, 429 rate limit) and `{"code", "message", "log_id"}`.
"""

from __future__ import annotations

from generalAgent.tools.search_backends.backend import (
    BackendConfig,
    WebResult,
    WebSearchError,
    post_json,
    results_from,
)

NAME = "Bocha"
NEEDS_KEY = True
ENDPOINT = "https://api.bochaai.com/v1/web-search"


def search(query: str, config: BackendConfig) -> list[WebResult]:
    data = post_json(
        NAME,
        config.base_url or ENDPOINT,
        config,
        {"query": query, "count": config.max_results, "summary": True, "freshness": "noLimit"},
    )
    if str(data.get("code", 200)) != "200":
        message = data.get("msg") or data.get("message")
        raise WebSearchError(f"Bocha answered with an error: {message or 'no results object'}")
    pages = ((data.get("data") or {}).get("webPages") or {}).get("value")
    return results_from(
        pages,
        config,
        lambda page: (
            page.get("name"),
            page.get("url"),
            page.get("summary") or page.get("snippet"),
            page.get("datePublished") or page.get("dateLastCrawled"),
        ),
    )
