"""What every web search backend shares: the result record, the request, and its failures.

A backend module (searxng.py, bocha.py, ...) knows one service's wire format: where the
query goes, how the key is sent, which fields hold title, URL, date and snippet. It turns
the service's answer into `WebResult`s and nothing else; budgets, framing and wording for
the model are the tool's (tools/builtin/web_search.py). HTTP failures are mapped to one
`WebSearchError` line here, so every backend says "quota reached" the same way. Two
services' requests have one shape (Bocha's and Tavily's JSON POST with a Bearer key:
`post_json`), and every backend reads its list of results with `results_from`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

# Tags some services put around the matched words (Brave's <strong>); bounded, so a hostile
# snippet cannot make the pattern scan far.
_TAG = re.compile(r"<[^<>]{0,200}>")


class WebSearchError(Exception):
    """A search that gave no results: one line saying what happened and what to do."""


@dataclass(frozen=True)
class WebResult:
    """One page a search found. Everything in it comes from the web: untrusted data."""

    title: str
    url: str
    snippet: str
    date: str = ""


@dataclass(frozen=True)
class BackendConfig:
    """What a backend needs from the settings, read once."""

    api_key: str | None
    base_url: str | None
    timeout: float
    max_results: int


def plain_text(value: Any) -> str:
    """A service's text field without markup, entities or runs of whitespace."""
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(_TAG.sub("", value)).split())


def web_url(value: Any) -> str | None:
    """`value` when it is an http(s) URL with a host (a result pointing elsewhere is dropped)."""
    if not isinstance(value, str):
        return None
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return None
    return value.strip() if parts.scheme in {"http", "https"} and parts.hostname else None


def short_date(value: Any) -> str:
    """An ISO timestamp as YYYY-MM-DD; other dates ("3 days ago") as given, briefly."""
    if not isinstance(value, str) or not value.strip():
        return ""
    text = value.strip()
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        return plain_text(text)[:40]


def result(title: Any, url: Any, snippet: Any, date: Any = None) -> WebResult | None:
    """A WebResult from a service's fields, or None when it has no usable URL."""
    link = web_url(url)
    if link is None:
        return None
    return WebResult(
        title=plain_text(title) or link, url=link, snippet=plain_text(snippet), date=short_date(date)
    )


def results_from(
    items: Any, config: BackendConfig, fields: Callable[[dict[str, Any]], tuple[Any, Any, Any, Any]]
) -> list[WebResult]:
    """The WebResults of a service's list of result objects, at most `config.max_results`.
    `fields(item)` picks (title, URL, snippet, date) out of one; an item that is not an
    object, or has no usable URL, is left out."""
    if not isinstance(items, list):
        return []
    found = (result(*fields(item)) for item in items if isinstance(item, dict))
    return [item for item in found if item is not None][: config.max_results]


def require_key(config: BackendConfig, service: str) -> str:
    if not config.api_key:
        raise WebSearchError(
            f"{service} needs an API key: set WEB_SEARCH_API_KEY (or choose another WEB_SEARCH_PROVIDER)"
        )
    return config.api_key


def request_json(
    service: str,
    method: str,
    url: str,
    config: BackendConfig,
    *,
    headers: dict[str, str] | None = None,
    params: dict[str, Any] | None = None,
    body: dict[str, Any] | None = None,
) -> Any:
    """The service's JSON answer; WebSearchError for every way it can fail."""
    try:
        with httpx.Client(timeout=config.timeout, follow_redirects=False) as client:
            response = client.request(method, url, headers=headers, params=params, json=body)
    except httpx.TimeoutException:
        raise WebSearchError(
            f"{service} did not answer within {config.timeout:g} s (WEB_SEARCH_TIMEOUT); try again later"
        ) from None
    except httpx.HTTPError as exc:
        raise WebSearchError(f"cannot reach {service} at {_origin(url)}: {type(exc).__name__}") from None
    if response.status_code >= 400:
        raise WebSearchError(status_error(service, response))
    try:
        return response.json()
    except ValueError:
        raise WebSearchError(f"{service} answered with something that is not JSON") from None


def post_json(service: str, url: str, config: BackendConfig, body: dict[str, Any]) -> dict[str, Any]:
    """POST `body` as JSON with the API key as a Bearer token, the way Bocha and Tavily both
    take a query, and return the answer's JSON object. WebSearchError without a key (nothing
    is sent then), for every way the request fails, and for an answer that is no object."""
    key = require_key(config, service)
    data = request_json(
        service,
        "POST",
        url,
        config,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        body=body,
    )
    if not isinstance(data, dict):
        raise WebSearchError(f"{service} answered with JSON that is not an object")
    return data


def status_error(service: str, response: httpx.Response) -> str:
    """One line for an HTTP error of a search service, with the service's own reason."""
    status = response.status_code
    detail = _detail(response)
    said = f": {detail}" if detail else ""
    out_of_credit = any(word in detail.lower() for word in ("balance", "money", "quota", "credit", "余额"))
    if status in {401, 403, 422} and not out_of_credit:
        return f"{service} refused the request (HTTP {status}{said}); check WEB_SEARCH_API_KEY"
    if status in {402, 403, 429, 432, 433}:
        return (
            f"{service} quota or rate limit reached (HTTP {status}{said}); "
            "wait and retry later, or answer without web search"
        )
    return f"{service} answered HTTP {status}{said}"


def _detail(response: httpx.Response) -> str:
    """The reason a service gave in its error body (each nests it differently), briefly."""
    try:
        data = response.json()
    except ValueError:
        return plain_text(response.text)[:160]
    found: Any = None
    if isinstance(data, dict):
        error = data.get("error") or data.get("detail") or data
        if isinstance(error, dict):
            found = error.get("detail") or error.get("error") or error.get("message") or error.get("msg")
        else:
            found = error
    return plain_text(found if isinstance(found, str) else "")[:160]


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")
