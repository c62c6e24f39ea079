"""What a failed model call means for the user, in one line, and keeping the API key out of it.

`describe_model_error` names the cause and what to do; `hide_api_key` masks the key in
an exception before LangGraph stores it in a checkpoint or a log prints it.
"""

from __future__ import annotations

from collections.abc import Callable

from generalAgent.config.settings import ModelSettings
from generalAgent.display import one_line, public_url, url_secrets

# Words of a provider's 400 that point at a setting the user can change.
REASONING_REFUSAL = ("reasoning_content", "reasoning content")
WINDOW_REFUSAL = ("context length", "context window", "too long", "maximum context")


Translate = Callable[[str], str]


def _english(message: str) -> str:
    return message


class AnswerLimitExceeded(Exception):
    """A model call's answer grew past MODEL_ANSWER_MAX_CHARS or streamed past
    MODEL_CALL_MAX_SECONDS: stopped there, and not stored."""

    def __init__(self, setting: str, limit: float) -> None:
        self.setting = setting
        self.limit = limit
        super().__init__(f"the model's answer passed {setting}={limit:g}")


def describe_model_error(
    exc: BaseException, settings: ModelSettings, _: Translate = _english, *, interactive: bool = True
) -> str | None:
    """One line naming the cause of a failed model call, or None if it is not a model error.

    `_` translates the message for a person (the terminal passes the UI's catalog); what a
    sub-agent's parent model reads stays English. The messages are written as `_(...)`
    calls so the catalog extracts them here. The API key is never part of the text:
    provider messages are echoed only after any occurrence of the key is masked.
    `interactive=False` (`-p`) advises running the command again, as there is no /retry.
    """
    import httpx
    import openai

    if isinstance(exc, AnswerLimitExceeded):
        return _(
            "The model's answer was stopped: it passed {setting}={limit:g} and was not kept. "
            "Ask for a shorter answer, or raise {setting}."
        ).format(setting=exc.setting, limit=exc.limit)
    endpoint = public_url(settings.openai_base_url or "https://api.openai.com/v1")
    model = repr(settings.model_name)
    detail = _provider_message(exc, settings, _)
    if isinstance(exc, openai.AuthenticationError):
        return _("The endpoint rejected the API key (401). Check OPENAI_API_KEY in .env.") + detail
    if isinstance(exc, openai.PermissionDeniedError):
        return _("The API key may not use model {model} (403).").format(model=model) + detail
    if isinstance(exc, openai.NotFoundError):
        return (
            _(
                "Model {model} or the endpoint path was not found at {endpoint} (404). "
                "Check MODEL_NAME and OPENAI_BASE_URL."
            ).format(model=model, endpoint=endpoint)
            + detail
        )
    if isinstance(exc, openai.RateLimitError):
        limited = (
            _(
                "Rate limited by the endpoint (429), still after {retries} retries. Wait a moment, then /retry."
            )
            if interactive
            else _(
                "Rate limited by the endpoint (429), still after {retries} retries. "
                "Wait a moment and run the command again."
            )
        )
        return limited.format(retries=settings.model_max_retries) + detail
    if isinstance(exc, openai.APITimeoutError):
        slow = (
            _("The model did not answer within {seconds} s (MODEL_TIMEOUT). /retry, or raise MODEL_TIMEOUT.")
            if interactive
            else _(
                "The model did not answer within {seconds} s (MODEL_TIMEOUT). "
                "Run the command again, or raise MODEL_TIMEOUT."
            )
        )
        return slow.format(seconds=f"{settings.model_timeout:g}")
    if isinstance(exc, openai.APIConnectionError) and _broke_off(exc):
        if not interactive:
            return _(
                "The connection to the model broke off before the answer was complete. Run the command again."
            )
        return _(
            "The connection to the model broke off before the answer was complete. /retry sends your message again."
        )
    if isinstance(exc, openai.APIConnectionError):
        unreachable = (
            _(
                "Cannot reach the model endpoint {endpoint}. Check OPENAI_BASE_URL and your network, then /retry."
            )
            if interactive
            else _("Cannot reach the model endpoint {endpoint}. Check OPENAI_BASE_URL and your network.")
        )
        return unreachable.format(endpoint=endpoint)
    if isinstance(exc, openai.BadRequestError):
        return _("The endpoint refused the request (400).") + detail + _bad_request_advice(detail, _)
    if isinstance(exc, openai.InternalServerError | openai.APIStatusError):
        status = getattr(exc, "status_code", "?")
        failed = (
            _("The model endpoint failed ({status}). /retry in a moment.")
            if interactive
            else _("The model endpoint failed ({status}). Run the command again in a moment.")
        )
        return failed.format(status=status) + detail
    if isinstance(exc, openai.APIError | httpx.HTTPError):
        broke = (
            _("The connection to the model broke off ({error}). /retry.")
            if interactive
            else _("The connection to the model broke off ({error}).")
        )
        return broke.format(error=type(exc).__name__) + detail
    return None


def _bad_request_advice(detail: str, _: Translate) -> str:
    lowered = detail.lower()
    if any(words in lowered for words in REASONING_REFUSAL):
        return " " + _(
            "Set MODEL_PROVIDER to this provider (e.g. deepseek, kimi) so its reasoning is sent back."
        )
    if any(words in lowered for words in WINDOW_REFUSAL):
        return " " + _(
            "The conversation outgrew the model's window: set MODEL_CONTEXT_WINDOW to the model's real window."
        )
    return ""


def hide_api_key(exc: BaseException, settings: ModelSettings) -> None:
    """Mask the API key wherever a failed call's exception carries it, in place.

    Some endpoints echo the key in their error body; LangGraph stores a failed step's
    exception (its repr) in the checkpoint, and logs print it, so the key would end up
    in sessions.db and the log file. Called before such an exception leaves a node.
    """
    secrets = _secrets(settings)
    if not secrets:
        return
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        for secret in secrets:
            cause.args = tuple(_masked(arg, secret) for arg in cause.args)
            for attribute in ("message", "body"):
                value = getattr(cause, attribute, None)
                if value is not None:
                    try:
                        setattr(cause, attribute, _masked(value, secret))
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


def _provider_message(exc: BaseException, settings: ModelSettings, _: Translate = _english) -> str:
    body = getattr(exc, "body", None)
    message = ""
    if isinstance(body, dict):
        error = body.get("error", body)
        message = str(error.get("message", "")) if isinstance(error, dict) else str(error)
    elif getattr(exc, "message", None):
        message = str(exc.message)  # type: ignore[attr-defined]
    for secret in _secrets(settings):
        message = message.replace(secret, "***")
    message = one_line(message)
    return " " + _("Provider says: {message}").format(message=message) if message else ""


def _secrets(settings: ModelSettings) -> list[str]:
    """The API key and any credentials written into OPENAI_BASE_URL: never shown or stored."""
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
    return [s for s in (key, *url_secrets(settings.openai_base_url)) if len(s) >= 4]
