"""The provider's own web search (WEB_SEARCH_PROVIDER=native), as each provider documents it.

Some providers search the web themselves when asked in the request, and the model answers
with what they found; nothing runs on this side. What to send, and where the pages used
come back, is per dialect (`Dialect.web_search`):

- Qwen on DashScope: `enable_search: true` in the body (Model Studio, "Web search");
  the OpenAI-compatible protocol does not return the sources, so none can be listed.
- GLM: a tool `{"type": "web_search", "web_search": {"enable": true, "search_result":
  true, ...}}` beside the functions ("Web Search in Chat"); the pages come back in a
  top-level `web_search` list (`title`, `link`, `publish_date`, `refer`), listed here
  under the answer so every front end shows them and the history keeps them.
- Kimi's `$web_search` is a builtin function the client must answer by echoing the call's
  arguments, a round trip through the tool loop: not supported (use a search service).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Where a message keeps the pages its provider's search used (additional_kwargs).
SOURCES_KEY = "web_sources"
SOURCES_HEADING = "Sources:"
MAX_SOURCES = 20
TITLE_CHARS = 160


@dataclass(frozen=True)
class NativeSearch:
    """How one provider is asked to search, and where it says what it found."""

    body: Mapping[str, Any] = field(default_factory=dict)  # request body keys
    tools: tuple[Mapping[str, Any], ...] = ()  # tools added beside the functions
    sources_field: str | None = None  # response field listing the pages used


def request_with_search(payload: dict[str, Any], search: NativeSearch) -> dict[str, Any]:
    """The request payload asking the provider to search (the payload is changed in place).
    Body keys outside the OpenAI schema travel in `extra_body`, as the SDK requires."""
    if search.body:
        payload["extra_body"] = {**(payload.get("extra_body") or {}), **search.body}
    if search.tools:
        payload["tools"] = [*(payload.get("tools") or []), *(dict(tool) for tool in search.tools)]
    return payload


def sources_from(body: Mapping[str, Any], search: NativeSearch | None) -> list[dict[str, str]]:
    """The pages a response (or stream chunk) says the search used: title, url, date."""
    if search is None or not search.sources_field:
        return []
    found = body.get(search.sources_field)
    pages: list[dict[str, str]] = []
    for item in found if isinstance(found, list) else []:
        if not isinstance(item, Mapping):
            continue
        url = item.get("link") or item.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            continue
        title = item.get("title") if isinstance(item.get("title"), str) else ""
        date = item.get("publish_date") if isinstance(item.get("publish_date"), str) else ""
        pages.append({"title": " ".join(str(title).split())[:TITLE_CHARS], "url": url, "date": str(date)})
    return pages


def merge_sources(kept: list[dict[str, str]], new: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """`kept` plus the pages of `new` not listed yet (a stream may repeat them)."""
    urls = {page["url"] for page in kept}
    return [*kept, *(page for page in new if page["url"] not in urls)][:MAX_SOURCES]


def sources_text(pages: Sequence[dict[str, str]]) -> str:
    """The list shown under the answer: one numbered line per page."""
    lines = [f"\n\n{SOURCES_HEADING}"]
    for number, page in enumerate(pages, 1):
        date = f" ({page['date']})" if page.get("date") else ""
        lines.append(f"[{number}] {page['title'] or page['url']}{date} {page['url']}")
    return "\n".join(lines)
