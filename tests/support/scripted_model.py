"""A scripted chat model for unit tests and benchmarks of the graph (no HTTP involved).

It answers from a list of AIMessages (or a function of the request), records every
request with the tools that were bound, and supports `bind_tools` like a real model.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, PrivateAttr

_ids = itertools.count(1)


def tool_call(name: str, args: dict[str, Any] | None = None, call_id: str | None = None) -> dict[str, Any]:
    return {"name": name, "args": args or {}, "id": call_id or f"call_{next(_ids)}", "type": "tool_call"}


def ai(text: str = "", *calls: dict[str, Any], usage: dict[str, Any] | None = None) -> AIMessage:
    return AIMessage(content=text, tool_calls=list(calls), usage_metadata=usage)


@dataclass
class Request:
    messages: list[BaseMessage]
    tools: list[str] = field(default_factory=list)


Responder = Callable[[Request], AIMessage]


class ScriptedChatModel(BaseChatModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    replies: list[AIMessage] = []
    responder: Responder | None = None
    _requests: list[Request] = PrivateAttr(default_factory=list)
    _bound_tools: list[str] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def requests(self) -> list[Request]:
        return self._requests

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable:
        names = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        return _BoundScripted(self, names)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        request = Request(messages=list(messages), tools=list(kwargs.get("_tool_names", [])))
        self._requests.append(request)
        if self.replies:
            reply = self.replies.pop(0)
        elif self.responder is not None:
            reply = self.responder(request)
        else:
            reply = AIMessage(content="OK")
        # A fresh copy: the same scripted message must not be stored twice under one id.
        reply = reply.model_copy(update={"id": None})
        return ChatResult(generations=[ChatGeneration(message=reply)])


class _BoundScripted(Runnable):
    """What `bind_tools` returns: invokes the model with the tool names recorded."""

    def __init__(self, model: ScriptedChatModel, tool_names: list[str]) -> None:
        self.model = model
        self.tool_names = tool_names

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> BaseMessage:
        return self.model.invoke(input, config, _tool_names=self.tool_names, **kwargs)
