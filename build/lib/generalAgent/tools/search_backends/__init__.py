"""Web search backends: one small module per service, chosen by WEB_SEARCH_PROVIDER.

Each module has `NAME`, `NEEDS_KEY` and `search(query, config) -> list[WebResult]`, and
its docstring cites what the service documents (endpoint, auth header, fields). Modules
are imported only when a search runs, so nothing here costs start-up time.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from generalAgent.config.settings import ToolSettings
from generalAgent.tools.search_backends.backend import BackendConfig, WebResult, WebSearchError

__all__ = [
    "BACKENDS",
    "BackendConfig",
    "WebResult",
    "WebSearchError",
    "backend_config",
    "load_backend",
    "run_search",
]

# WEB_SEARCH_PROVIDER value → module of this package.
BACKENDS = {"searxng": "searxng", "bocha": "bocha", "tavily": "tavily", "brave": "brave"}


def load_backend(provider: str) -> ModuleType:
    if provider == "native":
        raise WebSearchError(
            "WEB_SEARCH_PROVIDER=native: the model provider searches by itself (Qwen, GLM, Kimi), so answer "
            "directly; with any other provider there is no web search: tell the user to set "
            "WEB_SEARCH_PROVIDER to searxng, bocha, tavily or brave"
        )
    if provider not in BACKENDS:
        raise WebSearchError(
            "web search is not configured: set WEB_SEARCH_PROVIDER to searxng (with SEARXNG_URL), "
            "bocha, tavily or brave (with WEB_SEARCH_API_KEY)"
        )
    return importlib.import_module(f"{__name__}.{BACKENDS[provider]}")


def backend_config(settings: ToolSettings, max_results: int | None = None) -> BackendConfig:
    key = settings.web_search_api_key.get_secret_value() if settings.web_search_api_key else None
    base = settings.searxng_url if settings.web_search_provider == "searxng" else settings.web_search_base_url
    limit = settings.web_search_max_results if max_results is None else max_results
    return BackendConfig(
        api_key=key,
        base_url=base,
        timeout=settings.web_search_timeout,
        max_results=max(1, min(limit, settings.web_search_max_results)),
    )


def run_search(
    settings: ToolSettings, query: str, max_results: int | None = None
) -> tuple[str, list[WebResult]]:
    """(the service's name, its results) for `query`; WebSearchError in one line otherwise."""
    backend = load_backend(settings.web_search_provider)
    return backend.NAME, backend.search(query, backend_config(settings, max_results))
