"""`ChatOpenAI`, taught one provider dialect at its three documented extension points.

- `_get_request_payload`: after LangChain builds the OpenAI messages, stored reasoning
  is put back on the assistant messages the dialect names (`reasoning.add_reasoning_echo`);
- `_convert_chunk_to_generation_chunk`: each streamed delta's reasoning is kept on the
  chunk (`additional_kwargs["reasoning_content"]`, concatenated as chunks merge) and the
  usage chunk is read with the dialect's cache field;
- `_create_chat_result`: the same for a whole (non-streamed) response.
Thinking switches go in the body as `extra_body`, set once when the model is built.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import openai
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import Field

from generalAgent.providers.dialect import Dialect
from generalAgent.providers.native_search import (
    MAX_ECHOES,
    SOURCES_KEY,
    echo_messages,
    merge_sources,
    request_with_search,
    sources_from,
    sources_text,
    without_echoed_calls,
)
from generalAgent.providers.reasoning import (
    DETAILS_KEY,
    REASONING_KEY,
    add_reasoning_echo,
    reasoning_from,
    wrap_details,
)
from generalAgent.providers.usage import usage_metadata


class DialectChatModel(ChatOpenAI):
    """A chat model for one provider; `dialect` says where it differs from OpenAI."""

    dialect: Dialect = Field(exclude=True)
    # WEB_SEARCH_PROVIDER=native and the dialect has a search of its own (native_search.py).
    native_search: bool = Field(default=False, exclude=True)

    def _get_request_payload(
        self, input_: LanguageModelInput, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if self.native_search and self.dialect.web_search is not None:
            request_with_search(payload, self.dialect.web_search)
        wire = payload.get("messages")
        if isinstance(wire, list):
            messages = self._convert_input(input_).to_messages()
            if len(messages) == len(wire):
                add_reasoning_echo(messages, wire, self.dialect)
        return payload

    def _convert_chunk_to_generation_chunk(
        self, chunk: dict, default_chunk_class: type, base_generation_info: dict | None
    ) -> ChatGenerationChunk | None:
        generation = super()._convert_chunk_to_generation_chunk(
            chunk, default_chunk_class, base_generation_info
        )
        if generation is None or not isinstance(generation.message, AIMessageChunk):
            return generation
        message = generation.message
        choices = chunk.get("choices") or []
        delta = choices[0].get("delta") if choices and isinstance(choices[0], Mapping) else None
        if isinstance(delta, Mapping):
            self._keep_reasoning(message.additional_kwargs, delta)
        usage = chunk.get("usage")
        if isinstance(usage, Mapping):
            message.usage_metadata = usage_metadata(usage, self.dialect.cache_fields)
        pages = sources_from(chunk, self.dialect.web_search) if self.native_search else []
        if pages:
            message.additional_kwargs[SOURCES_KEY] = pages
        return generation

    def _use_responses_api(self, payload: dict) -> bool:
        # GLM's web_search tool looks like one of OpenAI's built-in Responses tools to
        # LangChain; these providers speak chat completions only.
        return False if self.native_search else super()._use_responses_api(payload)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """The stream, and after it the list of pages the provider's search used, if any.

        A call to a function the provider wants echoed (Kimi's $web_search) is not passed on:
        it is answered with its own arguments and the request is sent again, the provider
        searching in between, and the answer streams on as one message."""
        search = self.dialect.web_search if self.native_search else None
        echoed_name = search.echoed_function if search else None
        pages: list[dict[str, str]] = []
        for _ in range(MAX_ECHOES + 1):
            echoed: dict[int, dict[str, str]] = {}
            others = False  # calls of the agent's own tools in the same answer
            for generation in super()._stream(messages, stop, run_manager, **kwargs):
                message = generation.message
                pages = merge_sources(pages, message.additional_kwargs.pop(SOURCES_KEY, []))
                if echoed_name and isinstance(message, AIMessageChunk):
                    kept = without_echoed_calls(message, echoed_name, echoed)
                    others = others or bool(kept.tool_call_chunks)
                    generation = ChatGenerationChunk(message=kept, generation_info=generation.generation_info)
                yield generation
            if not echoed or others or not echoed_name:
                break
            messages = [*messages, *echo_messages(echoed, echoed_name)]
        if pages:
            listed = self._sources_chunk(pages)
            if run_manager is not None:
                run_manager.on_llm_new_token(listed.text, chunk=listed)
            yield listed

    async def _astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        pages: list[dict[str, str]] = []
        async for generation in super()._astream(*args, **kwargs):
            pages = merge_sources(pages, generation.message.additional_kwargs.pop(SOURCES_KEY, []))
            yield generation
        if pages:
            listed = self._sources_chunk(pages)
            run_manager = kwargs.get("run_manager") or (args[2] if len(args) > 2 else None)
            if run_manager is not None:
                await run_manager.on_llm_new_token(listed.text, chunk=listed)
            yield listed

    @staticmethod
    def _sources_chunk(pages: list[dict[str, str]]) -> ChatGenerationChunk:
        text = sources_text(pages)
        return ChatGenerationChunk(
            text=text, message=AIMessageChunk(content=text, additional_kwargs={SOURCES_KEY: pages})
        )

    def _create_chat_result(
        self, response: dict | openai.BaseModel, generation_info: dict | None = None
    ) -> ChatResult:
        result = super()._create_chat_result(response, generation_info)
        body = response if isinstance(response, dict) else response.model_dump()
        usage = body.get("usage")
        for generation, choice in zip(result.generations, body.get("choices") or [], strict=False):
            message = generation.message
            if not isinstance(message, AIMessage):
                continue
            wire = choice.get("message") if isinstance(choice, Mapping) else None
            if isinstance(wire, Mapping):
                self._keep_reasoning(message.additional_kwargs, wire)
            if isinstance(usage, Mapping):
                message.usage_metadata = usage_metadata(usage, self.dialect.cache_fields)
            pages = sources_from(body, self.dialect.web_search) if self.native_search else []
            if pages and isinstance(message.content, str):
                message.content += sources_text(pages)
                message.additional_kwargs[SOURCES_KEY] = pages
        return result

    def _keep_reasoning(self, kept: dict[str, Any], source: Mapping[str, Any]) -> None:
        text = reasoning_from(source, self.dialect.reasoning_fields)
        if text:
            kept[REASONING_KEY] = text
        if self.dialect.details_field:
            details = wrap_details(source.get(self.dialect.details_field))
            if details:
                kept[DETAILS_KEY] = details
