"""Why a regular expression does not compile, in words the terminal's catalog translates.

The `regex` library says what is wrong in a small fixed set of English phrases followed by
where (`missing ) at position 4`), and that English stayed inside a Chinese sentence. Each
phrase it raises is an N_ message here, written exactly as the library writes it, so the
model reads the same text as before; the position (and line and column in a pattern of
several lines) is kept as fields. A phrase not in the table (a newer library) is said in
its own English, still with its position.
"""

from __future__ import annotations

import re

from generalAgent.display import N_, Message

# regex 2024-2026's compile errors (regex/_regex_core.py), the English as it says them.
_PHRASES = frozenset(
    (
        N_("ambiguous group reference"),
        N_("bad character in group name"),
        N_("bad character range"),
        N_("bad escape (end of pattern)"),
        N_("bad fuzzy cost limit"),
        N_("bad inline flags: cannot turn off global flag"),
        N_("bad inline flags: flag turned on and off"),
        N_("bad inline flags: no flags after '-'"),
        N_("cannot refer to an open group"),
        N_("expected character set"),
        N_("expected lookaround conditional"),
        N_("group reference not allowed"),
        N_("invalid group reference"),
        N_("invalid relative group number"),
        N_("min repeat greater than max repeat"),
        N_("missing )"),
        N_("missing ]"),
        N_("missing group name"),
        N_("missing relative group number"),
        N_("more than one cost equation"),
        N_("multiple repeat"),
        N_("nothing for fuzzy constraint"),
        N_("nothing to repeat"),
        N_("repeat count too big"),
        N_("repeated fuzzy cost"),
        N_("unbalanced parenthesis"),
        N_("undefined character name"),
        N_("undefined named list"),
        N_("unknown extension"),
        N_("unknown group"),
        N_("unknown property"),
        N_("unknown property value"),
        N_("unknown verb"),
        N_("unterminated character set"),
    )
)
# The phrases that quote what they found (`bad escape \q`) or name a brace (a catalog
# entry cannot hold a lone one): that part is a field.
_QUOTING = (
    (re.compile(r"bad hex escape (\\.*)", re.DOTALL), N_("bad hex escape {escape}")),
    (re.compile(r"incomplete escape (\\.*)", re.DOTALL), N_("incomplete escape {escape}")),
    (re.compile(r"bad escape (\\.*)", re.DOTALL), N_("bad escape {escape}")),
    (re.compile(r"expected (\})"), N_("expected {brace}")),
    (re.compile(r"missing (\{\})"), N_("missing {brace}")),
)


def regex_error_said(exc: Exception) -> str | Message:
    """`exc` (a `regex.error`, or `re.error`: both keep `msg`, `pattern` and `pos`) as a
    Message whose English is the library's own text (`missing ) at position 4`, `… (line
    2, column 3)` in a pattern of several lines) and whose phrase the catalog translates;
    the library's text as it is when it keeps no phrase."""
    phrase = getattr(exc, "msg", None)
    if not isinstance(phrase, str):
        return str(exc)
    reason: str | Message = Message(phrase) if phrase in _PHRASES else phrase
    for pattern, template in _QUOTING:
        if match := pattern.fullmatch(phrase):
            field = "brace" if "{brace}" in template else "escape"
            reason = Message(template, {field: match.group(1)})
            break
    position, text = getattr(exc, "pos", None), getattr(exc, "pattern", None)
    if not isinstance(position, int) or not isinstance(text, str):
        return reason if isinstance(reason, Message) else str(exc)
    if "\n" not in text:
        return Message(N_("{reason} at position {position}"), {"reason": reason, "position": position})
    line = text.count("\n", 0, position) + 1
    column = position - text.rfind("\n", 0, position)
    return Message(
        N_("{reason} at position {position} (line {line}, column {column})"),
        {"reason": reason, "position": position, "line": line, "column": column},
    )
