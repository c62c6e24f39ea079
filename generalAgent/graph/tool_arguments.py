"""Tool calls as the model sent them, made safe to run: strict JSON, one id per call.

`unique_call_ids`: answers, approvals and ToolMessages are paired with their call by the
call's id, so two calls of one message with the same id (or none: some local servers
send `""`) would share one answer: one "yes" would approve a call the user refused.
Every call gets an id of its own before the approval step (the planner renumbers what
it receives, and the approval step renumbers a message a client stored by other means),
so each call gets exactly its own answer and its own ToolMessage.

Bounded: a call whose arguments are larger than TOOL_ARGUMENT_MAX_CHARS or nested deeper
than TOOL_ARGUMENT_MAX_DEPTH (`refuse_unbounded_calls`) is kept only as an invalid call
with empty arguments and an error naming the setting: the arguments are stored with the
session and sent again on every request, so a 30 MB argument would be re-sent each turn,
and 600 levels of nesting ended the turn with RecursionError in code that walks them.

Strict JSON:

When a model streams, the client rebuilds each call's arguments with a lenient parser
that closes what was left open, so arguments cut off mid-string (a dropped connection, a
model stopped by its token limit) come back as a valid-looking call with truncated
values: `write_file` would save half a file. The raw argument text is only seen chunk by
chunk, so `RawToolArguments` collects it during the call, and `reject_repaired_calls`
turns every call whose raw text does not parse strictly into an invalid call, which the
tools node answers with an error the model can correct.

Argument aliases:

The built-in file tools name their file `path` (read_file, write_file, edit_file, ...) or
`file_path` (search_file, query_table, view_page), and models mix them up (DeepSeek and
Qwen often): the call failed with "Field required" and cost a round trip.
`rename_argument_aliases` renames the other spelling (ARGUMENT_ALIASES) to the one the
tool's schema has, before the approval step, the hooks and the tool see the call. The
schemas the model is shown do not change (the prompt bytes, and so the provider's prompt
cache, stay the same). Only when the schema lacks the spelling sent, has the other, and
the call does not already carry it; a call with both spellings is left as it was sent.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, AIMessageChunk


class RawToolArguments(BaseCallbackHandler):
    """Collects the raw argument text of every streamed tool call, by call id (and
    occurrence, for an id that repeats)."""

    def __init__(self) -> None:
        self._ids: dict[int, str] = {}
        self._text: dict[int, str] = {}

    def on_llm_new_token(self, token: Any, *, chunk: Any = None, **kwargs: Any) -> None:
        message = getattr(chunk, "message", None)
        if not isinstance(message, AIMessageChunk):
            return
        for piece in message.tool_call_chunks:
            index = piece.get("index")
            index = index if isinstance(index, int) else len(self._ids)
            call_id = piece.get("id")
            if call_id or index not in self._ids:
                # A call's first piece carries its id ("" from some servers), later ones None.
                self._ids[index] = call_id or ""
            self._text[index] = self._text.get(index, "") + (piece.get("args") or "")

    def by_id(self) -> dict[str, str]:
        """Raw arguments by call id; with a repeated (or empty) id, one text per call with it,
        in the order they came, under `occurrence_key(id, n)` for the n-th after the first."""
        texts: dict[str, str] = {}
        seen: dict[str, int] = {}
        for index in sorted(self._ids):
            call_id = self._ids[index]
            number = seen.get(call_id, 0)
            seen[call_id] = number + 1
            texts[occurrence_key(call_id, number)] = self._text.get(index, "")
        return texts


# A spelling a model sends -> the spelling a tool may have instead (both ways).
ARGUMENT_ALIASES: dict[str, str] = {"path": "file_path", "file_path": "path"}


def rename_argument_aliases(message: Any, parameters: Mapping[str, Collection[str]]) -> Any:
    """`message` with each call's aliased argument renamed to the spelling its tool's
    schema has (`parameters`: the argument names of each tool by name); the same object
    when no call needs it. A tool not in `parameters` keeps its calls as they are."""
    if not isinstance(message, AIMessage) or not message.tool_calls:
        return message
    calls = [_renamed(call, parameters.get(call.get("name") or "")) for call in message.tool_calls]
    if all(new is old for new, old in zip(calls, message.tool_calls, strict=True)):
        return message
    return message.model_copy(update={"tool_calls": calls})


def _renamed(call: Any, names: Collection[str] | None) -> Any:
    args = call.get("args")
    if names is None or not isinstance(args, dict):
        return call
    renamed: dict[str, Any] = {}
    for key, value in args.items():
        other = ARGUMENT_ALIASES.get(key)
        if other is not None and key not in names and other in names and other not in args:
            renamed[other] = value
        else:
            renamed[key] = value
    if list(renamed) == list(args):
        return call
    return {**call, "args": renamed}


def occurrence_key(call_id: str, number: int) -> str:
    """The key of the `number`-th (from 0) call with this id among a message's calls."""
    return call_id if number == 0 else f"{call_id}\x00{number}"


def reject_repaired_calls(message: Any, raw_arguments: dict[str, str]) -> Any:
    """`message` with calls whose raw arguments are not strict JSON moved to invalid_tool_calls."""
    if not isinstance(message, AIMessage) or not message.tool_calls or not raw_arguments:
        return message
    valid, invalid = [], list(message.invalid_tool_calls)
    seen: dict[str, int] = {}
    for call in message.tool_calls:
        call_id = call.get("id") or ""
        number = seen.get(call_id, 0)
        seen[call_id] = number + 1
        raw = raw_arguments.get(occurrence_key(call_id, number))
        error = _json_error(raw) if raw is not None else None
        if error is None:
            valid.append(call)
            continue
        invalid.append(
            {
                "type": "invalid_tool_call",
                "id": call.get("id"),
                "name": call.get("name"),
                "args": raw,
                "error": f"{error} (the arguments were cut off or malformed)",
            }
        )
    if len(valid) == len(message.tool_calls):
        return message
    return message.model_copy(update={"tool_calls": valid, "invalid_tool_calls": invalid})


# How an invalid call refused for its size or depth says so (the tools node answers it
# with the error as it is, not as a JSON error).
REFUSED = "refused: "


def refuse_unbounded_calls(
    message: Any, raw_arguments: dict[str, str], max_chars: int, max_depth: int
) -> Any:
    """`message` with every call whose arguments are too large or too deep moved to
    invalid_tool_calls, its arguments dropped; the same object when none is."""
    if not isinstance(message, AIMessage) or not (message.tool_calls or message.invalid_tool_calls):
        return message
    valid: list[Any] = []
    invalid: list[Any] = []
    changed = False
    for call in message.tool_calls:
        problem = _unbounded(call.get("args"), raw_arguments.get(call.get("id") or ""), max_chars, max_depth)
        if problem is None:
            valid.append(call)
            continue
        changed = True
        invalid.append(_refused_call(call, problem))
    for broken in message.invalid_tool_calls:
        raw = broken.get("args")
        if isinstance(raw, str) and len(raw) > max_chars:
            changed = True
            invalid.append(_refused_call(broken, _too_large(len(raw), max_chars)))
        else:
            invalid.append(broken)
    if not changed:
        return message
    return message.model_copy(update={"tool_calls": valid, "invalid_tool_calls": invalid})


def refuse_excess_calls(message: Any, max_calls: int) -> Any:
    """`message` with its tool calls past the first `max_calls` moved to invalid_tool_calls
    (answered with an error naming TOOL_CALLS_MAX_PER_MESSAGE, arguments not kept); the
    same object when it has no more."""
    if not isinstance(message, AIMessage) or len(message.tool_calls) <= max_calls:
        return message
    count = len(message.tool_calls)
    problem = (
        f"the message has {count:,} tool calls, more than {max_calls:,} "
        "(TOOL_CALLS_MAX_PER_MESSAGE); call at most that many at once"
    )
    excess = [_refused_call(call, problem) for call in message.tool_calls[max_calls:]]
    return message.model_copy(
        update={
            "tool_calls": message.tool_calls[:max_calls],
            "invalid_tool_calls": [*message.invalid_tool_calls, *excess],
        }
    )


def _refused_call(call: Any, problem: str) -> dict[str, Any]:
    return {
        "type": "invalid_tool_call",
        "id": call.get("id"),
        "name": call.get("name"),
        "args": "{}",  # valid JSON for the provider; what was sent is not kept
        "error": REFUSED + problem,
    }


def _too_large(size: int, limit: int) -> str:
    return (
        f"the arguments are {size:,} characters, over the limit of {limit:,} "
        "(TOOL_ARGUMENT_MAX_CHARS); they were not run or kept. Write large content in parts "
        "(several calls, or a file built step by step)."
    )


def _unbounded(args: Any, raw: str | None, max_chars: int, max_depth: int) -> str | None:
    """Why these arguments are refused (too deep, too large), or None. Walked without
    recursion, so no depth can exhaust the stack here."""
    size = len(raw) if raw is not None else 0
    stack: list[tuple[Any, int]] = [(args, 1)]
    counted = 0
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list | tuple):
            if depth > max_depth:
                return (
                    f"the arguments are nested more than {max_depth} levels deep "
                    "(TOOL_ARGUMENT_MAX_DEPTH); they were not run or kept. Send flatter arguments."
                )
            items = value.values() if isinstance(value, dict) else value
            if isinstance(value, dict):
                counted += sum(len(str(k)) + 4 for k in value)
            stack.extend((item, depth + 1) for item in items)
            counted += 2
        elif isinstance(value, str):
            counted += len(value) + 2
        else:
            counted += 8
    size = max(size, counted)
    return _too_large(size, max_chars) if size > max_chars else None


def _json_error(raw: str) -> str | None:
    if not raw.strip():
        return None  # no arguments at all: the tool's defaults apply
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return f"{exc.msg} at character {exc.pos}"
    return None if isinstance(value, dict) else "the arguments are not a JSON object"


def unique_call_ids(message: Any) -> Any:
    """`message` with every call (valid or not) under an id no other call of it has.

    The first call with a given non-empty id keeps it; a repeated or empty id becomes
    `<id or "call">-<position>` (primes added until it is free). A pure function of the
    message, so a resumed approval step computes the same ids again.
    """
    if not isinstance(message, AIMessage):
        return message
    calls = [*message.tool_calls, *message.invalid_tool_calls]
    ids = [str(call.get("id") or "") for call in calls]
    if all(ids) and len(set(ids)) == len(ids):
        return message
    taken = {i for i in ids if i}
    kept: set[str] = set()
    new_ids: list[str] = []
    for position, call_id in enumerate(ids, start=1):
        if call_id and call_id not in kept:
            kept.add(call_id)
            new_ids.append(call_id)
            continue
        candidate = f"{call_id or 'call'}-{position}"
        while candidate in taken:
            candidate += "'"
        taken.add(candidate)
        new_ids.append(candidate)
    count = len(message.tool_calls)
    tool_calls = [{**call, "id": new} for call, new in zip(message.tool_calls, new_ids[:count], strict=True)]
    invalid = [
        {**call, "id": new} for call, new in zip(message.invalid_tool_calls, new_ids[count:], strict=True)
    ]
    return message.model_copy(update={"tool_calls": tool_calls, "invalid_tool_calls": invalid})
