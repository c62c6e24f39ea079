"""A stand-in summariser for the local model server: recognises summary requests and answers
them the way a faithful model would for a scripted session, by carrying forward every line
of the previous summary and every sentence the user asked to be remembered.

It makes the compaction's plumbing measurable without a real model: what the tests and the
recall benchmark check is that whatever the summary keeps reaches later requests, after any
number of cuts, and that the previous summary goes into the next one.
"""

from __future__ import annotations

import re
from typing import Any

SUMMARY_PROMPT_START = "You write the running summary of a conversation"
_REMEMBER = re.compile(r"remember\b[:,]?\s*(.+)", re.IGNORECASE)


def is_summary_request(messages: list[dict[str, Any]]) -> bool:
    """A request as it went over the wire is a summary request (the compaction prompt, no tools)."""
    return (
        bool(messages)
        and messages[0]["role"] == "system"
        and _text(messages[0]).startswith(SUMMARY_PROMPT_START)
    )


def extractive_summary(messages: list[dict[str, Any]]) -> str:
    """The previous summary's points, then each `remember ...` of the leaving turns, once each."""
    body = _text(messages[-1])
    previous = body.split("</previous_summary>")[0]
    points = [line[2:] for line in previous.splitlines() if line.startswith("- ")]
    turns = body.split("<turns_leaving_the_context>")[-1]
    for line in turns.splitlines():
        if line.startswith("User:") and (match := _REMEMBER.search(line)):
            points.append(match.group(1).strip())
    unique = list(dict.fromkeys(points))
    return "\n".join(f"- {point}" for point in unique) or "- small talk only"


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)
