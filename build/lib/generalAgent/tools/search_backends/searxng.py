"""SearXNG, self-hosted metasearch: `GET {SEARXNG_URL}/search?q=...&format=json`.

From docs.searxng.org/dev/search_api: `q` is required; JSON must be enabled under
`search.formats` in the instance's settings.yml, else the instance answers 403. No key.
The answer's `results` carry `title`, `url`, `content` (the snippet) and, from engines that
date their results, `publishedDate`; SearXNG returns a page of ~20 and has no count
parameter, so the list is cut here.
"""

from __future__ import annotations

from generalAgent.tools.search_backends.backend import (
    BackendConfig,
    WebResult,
    WebSearchError,
    request_json,
    results_from,
)

NAME = "SearXNG"
NEEDS_KEY = False


def search(query: str, config: BackendConfig) -> list[WebResult]:
    if not config.base_url:
        raise WebSearchError("SearXNG needs the address of your instance: set SEARXNG_URL")
    try:
        data = request_json(
            NAME,
            "GET",
            config.base_url.rstrip("/") + "/search",
            config,
            params={"q": query, "format": "json"},
            headers={"Accept": "application/json"},
        )
    except WebSearchError as exc:
        if "HTTP 403" in str(exc):
            raise WebSearchError(
                "SearXNG refused JSON (HTTP 403): add json to search.formats in the instance's settings.yml"
            ) from None
        raise
    return results_from(
        data.get("results") if isinstance(data, dict) else None,
        config,
        lambda item: (item.get("title"), item.get("url"), item.get("content"), item.get("publishedDate")),
    )
