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

from collections.abc import Mapping
from typing import Any

import openai
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import Field

from generalAgent.providers.dialect import Dialect
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

    def _get_request_payload(
        self, input_: LanguageModelInput, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
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
        return generation

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
        return result

    def _keep_reasoning(self, kept: dict[str, Any], source: Mapping[str, Any]) -> None:
        text = reasoning_from(source, self.dialect.reasoning_fields)
        if text:
            kept[REASONING_KEY] = text
        if self.dialect.details_field:
            details = wrap_details(source.get(self.dialect.details_field))
            if details:
                kept[DETAILS_KEY] = details
