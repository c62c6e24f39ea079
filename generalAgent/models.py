"""The chat model factory: ChatOpenAI against any OpenAI-compatible endpoint.

Nothing provider-specific: OpenAI, DeepSeek, Qwen (DashScope), Kimi, GLM, vLLM, Ollama
and llama.cpp servers all work by OPENAI_BASE_URL. Streaming is on, and usage is asked
for in the stream (`stream_usage`) so every turn can show input / cached / output tokens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generalAgent.config.settings import ModelSettings

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI


class ModelNotConfigured(Exception):
    """MODEL_NAME or OPENAI_API_KEY is missing; the message tells the user what to set."""


def setup_guidance(missing: list[str]) -> str:
    names = " and ".join(missing)
    return (
        f"No model configured: set {names} in .env (copy .env.example to .env and edit it), "
        "or in the environment.\n"
        "Example for OpenAI:\n"
        "  MODEL_NAME=gpt-4.1-mini\n"
        "  OPENAI_API_KEY=sk-...\n"
        "Any OpenAI-compatible endpoint works: also set OPENAI_BASE_URL, e.g.\n"
        "  DeepSeek  OPENAI_BASE_URL=https://api.deepseek.com/v1      MODEL_NAME=deepseek-chat\n"
        "  Qwen      OPENAI_BASE_URL=https://dashscope.aliyuncs.com/compatible-mode/v1  MODEL_NAME=qwen-plus\n"
        "  Ollama    OPENAI_BASE_URL=http://localhost:11434/v1         MODEL_NAME=qwen2.5 (any OPENAI_API_KEY)"
    )


def build_chat_model(settings: ModelSettings) -> ChatOpenAI:
    missing = settings.missing()
    if missing:
        raise ModelNotConfigured(setup_guidance(missing))
    from langchain_openai import ChatOpenAI

    assert settings.model_name is not None and settings.openai_api_key is not None  # not missing()
    return ChatOpenAI(
        model=settings.model_name,
        api_key=settings.openai_api_key,
        base_url=settings.openai_base_url,
        timeout=settings.model_timeout,
        max_retries=settings.model_max_retries,
        temperature=settings.model_temperature,
        streaming=True,
        stream_usage=True,
    )


def describe_model_error(exc: BaseException, settings: ModelSettings) -> str | None:
    """One line naming the cause of a failed model call, or None if it is not a model error.

    The API key is never part of the text: provider messages are echoed only after any
    occurrence of the key is masked.
    """
    import httpx
    import openai

    endpoint = settings.openai_base_url or "https://api.openai.com/v1"
    model = settings.model_name
    detail = _provider_message(exc, settings)
    if isinstance(exc, openai.AuthenticationError):
        return f"The endpoint rejected the API key (401). Check OPENAI_API_KEY in .env.{detail}"
    if isinstance(exc, openai.PermissionDeniedError):
        return f"The API key may not use model {model!r} (403).{detail}"
    if isinstance(exc, openai.NotFoundError):
        return f"Model {model!r} or the endpoint path was not found at {endpoint} (404). Check MODEL_NAME and OPENAI_BASE_URL.{detail}"
    if isinstance(exc, openai.RateLimitError):
        return f"Rate limited by the endpoint (429), still after {settings.model_max_retries} retries. Wait a moment, then /retry.{detail}"
    if isinstance(exc, openai.APITimeoutError):
        return f"The model did not answer within {settings.model_timeout:g} s (MODEL_TIMEOUT). /retry, or raise MODEL_TIMEOUT."
    if isinstance(exc, openai.APIConnectionError) and _broke_off(exc):
        return "The connection to the model broke off before the answer was complete. /retry sends your message again."
    if isinstance(exc, openai.APIConnectionError):
        return f"Cannot reach the model endpoint {endpoint}. Check OPENAI_BASE_URL and your network, then /retry."
    if isinstance(exc, openai.BadRequestError):
        return f"The endpoint refused the request (400).{detail}"
    if isinstance(exc, openai.InternalServerError | openai.APIStatusError):
        status = getattr(exc, "status_code", "?")
        return f"The model endpoint failed ({status}). /retry in a moment.{detail}"
    if isinstance(exc, openai.APIError | httpx.HTTPError):
        return f"The connection to the model broke off ({type(exc).__name__}). /retry.{detail}"
    return None


def hide_api_key(exc: BaseException, settings: ModelSettings) -> None:
    """Mask the API key wherever a failed call's exception carries it, in place.

    Some endpoints echo the key in their error body; LangGraph stores a failed step's
    exception (its repr) in the checkpoint, and logs print it, so the key would end up
    in sessions.db and the log file. Called before such an exception leaves a node.
    """
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
    if len(key) < 4:
        return
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        cause.args = tuple(_masked(arg, key) for arg in cause.args)
        for attribute in ("message", "body"):
            value = getattr(cause, attribute, None)
            if value is not None:
                try:
                    setattr(cause, attribute, _masked(value, key))
                except AttributeError:  # a read-only property: nothing stored there to mask
                    continue
        cause = cause.__cause__ or cause.__context__


def _masked(value: object, key: str) -> object:
    if isinstance(value, str):
        return value.replace(key, "***")
    if isinstance(value, dict):
        return {k: _masked(v, key) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_masked(v, key) for v in value)
    return value


def _broke_off(exc: BaseException) -> bool:
    """True when the connection was made and then lost mid-response (reset, closed early).

    The client reports both that and an unreachable endpoint as a connection error; only
    the cause tells them apart, and the advice differs (retry vs. check OPENAI_BASE_URL).
    """
    import importlib

    mid_response: tuple[type[BaseException], ...] = (ConnectionResetError, BrokenPipeError)
    for name in ("httpx", "httpx2"):  # the OpenAI client uses one or the other, by version
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        mid_response += (module.ReadError, module.RemoteProtocolError, module.WriteError)
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, mid_response):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _provider_message(exc: BaseException, settings: ModelSettings) -> str:
    body = getattr(exc, "body", None)
    message = ""
    if isinstance(body, dict):
        error = body.get("error", body)
        message = str(error.get("message", "")) if isinstance(error, dict) else str(error)
    elif getattr(exc, "message", None):
        message = str(exc.message)  # type: ignore[attr-defined]
    message = " ".join(message.split())[:200]
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
    if key and len(key) >= 4:
        message = message.replace(key, "***")
    return f" Provider says: {message}" if message else ""
