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
- Kimi: a builtin function `$web_search` (`{"type": "builtin_function", "function":
  {"name": "$web_search"}}`), with thinking off ("Use the Web Search Tool"). The model
  calls it; the client answers with the call's arguments unchanged and asks again, and
  Kimi searches in between. That round trip happens inside one model call here
  (`echo_messages`, chat_model.py), so the graph never sees the call. Kimi returns no
  list of pages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage

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
    # A builtin function the client answers by echoing its arguments (Kimi's $web_search).
    echoed_function: str | None = None
    # Body keys the search cannot go with (Kimi: reasoning_effort, once thinking is off).
    drops: tuple[str, ...] = ()


def request_with_search(payload: dict[str, Any], search: NativeSearch) -> dict[str, Any]:
    """The request payload asking the provider to search (the payload is changed in place).
    Body keys outside the OpenAI schema travel in `extra_body`, as the SDK requires."""
    if search.body or search.drops:
        kept = {k: v for k, v in (payload.get("extra_body") or {}).items() if k not in search.drops}
        payload["extra_body"] = {**kept, **search.body}
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


# Round trips one model call may make for an echoed function before it answers as it is.
MAX_ECHOES = 3


def without_echoed_calls(
    chunk: AIMessageChunk, name: str, echoed: dict[int, dict[str, str]]
) -> AIMessageChunk:
    """`chunk` without its pieces of calls to `name`, which are collected in `echoed` (by
    index: only a call's first piece carries its name)."""
    pieces = chunk.tool_call_chunks
    if not pieces:
        return chunk
    kept = []
    for piece in pieces:
        index = piece.get("index")
        if piece.get("name") == name or (index is not None and index in echoed):
            entry = echoed.setdefault(index if index is not None else len(echoed), {"id": "", "args": ""})
            entry["id"] = entry["id"] or (piece.get("id") or "")
            entry["args"] += piece.get("args") or ""
        else:
            kept.append(piece)
    if len(kept) == len(pieces):
        return chunk
    fields = chunk.model_dump(exclude={"tool_calls", "invalid_tool_calls", "tool_call_chunks", "type"})
    return AIMessageChunk(**fields, tool_call_chunks=kept)


def echo_messages(echoed: Mapping[int, Mapping[str, str]], name: str) -> list[BaseMessage]:
    """The assistant's calls to `name` and, for each, the tool answer that repeats its arguments."""
    calls = []
    for entry in echoed.values():
        try:
            args = json.loads(entry["args"] or "{}")
        except ValueError:
            args = {}
        calls.append({"id": entry["id"], "name": name, "args": args if isinstance(args, dict) else {}})
    answers: list[BaseMessage] = [
        ToolMessage(content=entry["args"], tool_call_id=entry["id"], name=name) for entry in echoed.values()
    ]
    return [AIMessage(content="", tool_calls=calls), *answers]
