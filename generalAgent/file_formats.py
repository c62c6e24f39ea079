"""Configuration files read as pydantic models: what a bad value says, where, and the docs table.

tools.yaml (tools/tools_file.py), mcp.json (tools/mcp/config_file.py) and the hooks of
settings.json (hooks.py) are each one pydantic model. The model validates; this module
turns pydantic's errors into the one line a user reads — the file, the line where the
text tells it, the key, and what the key accepts — in the UI language, and writes each
model's keys as the Markdown table docs/ shows (tests/unit/test_file_formats.py holds the
docs and the shipped JSON schemas to the models).

What a key accepts is written once, beside the key (`accepts(...)`): the error message,
the docs table and the JSON schema's description all read it from there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from json.decoder import scanstring  # type: ignore[attr-defined]  # public in the module, not in its stub
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticCustomError

from generalAgent.display import Message, one_line
from generalAgent.i18n import N_, _, ngettext

Location = Sequence[str | int]
ACCEPTS = "accepts"  # the key of a field's json_schema_extra that says what it accepts
TEMPLATE = "template"

# How a problem is said: `where` is "FILE, line N" or "FILE"; `at` the entry the key belongs to.
MISSING = N_("{where}: {at}needs {key}: {accepts}")
WRONG = N_("{where}: {at}{key!r} must be {accepts}, not {value}")
NOT_A_MAPPING = N_("{where}: {at}expected a mapping with the keys {known}")
UNKNOWN = N_("{where}: {at}unknown key {key!r} (known: {known})")
OTHER = N_("{where}: {at}{problem}")
AT_LINE = N_("{file}, line {line}")


def accepts(text: str, **extra: Any) -> dict[str, Any]:
    """A field's json_schema_extra saying what it accepts (an `N_` message, English in
    the schema and the docs, translated in an error)."""
    return {ACCEPTS: text, **extra}


def problem(template: str, **fields: Any) -> PydanticCustomError:
    """A validator's own error: an `N_` template and its fields, translated when said."""
    # The template rides in the context: pydantic's `msg` is filled in English already.
    return PydanticCustomError("file_format", template, {**fields, TEMPLATE: template})


def describe_errors(
    error: ValidationError,
    model: type[BaseModel],
    file: str,
    line_of: Any = None,
    prefix: Location = (),
) -> list[str]:
    """One line per problem pydantic found, in the UI language.

    `line_of(location) -> int | None` finds a key's line in the file's text (`yaml_line`,
    `json_line`); `prefix` is where `model` sits in the file (an entry validated alone)."""
    return [describe_error(details, model, file, line_of, prefix) for details in error.errors()]


def describe_error(
    details: ErrorDetails, model: type[BaseModel], file: str, line_of: Any = None, prefix: Location = ()
) -> str:
    location = tuple(details["loc"])
    kind = details["type"]
    # A field's own validator reports at the field; a union's branches add their tag names.
    location = tuple(part for part in location if not (isinstance(part, str) and "[" in part))
    full = (*prefix, *location)
    line = line_of(full) if line_of is not None else None
    if line is None and line_of is not None:
        line = line_of(full[:-1]) if full else None
    where = _(AT_LINE).format(file=file, line=line) if line else file
    field, key, owner_path = None, "", full
    # The innermost key that is a field of a model: `env`, not the name of one variable in it.
    for cut in range(len(location), 0, -1) if kind != "extra_forbidden" else ():
        field = _field_at(model, location[:cut])
        if field is not None:
            key, owner_path = str(location[cut - 1]), (*prefix, *location[: cut - 1])
            break
    else:
        if location and kind in ("missing", "extra_forbidden"):
            key, owner_path = str(location[-1]), full[:-1]
    entry = [str(part) for part in owner_path if not isinstance(part, int)]
    at = " / ".join(entry) + ": " if entry else ""
    if kind == "file_format":
        fields = dict(details.get("ctx") or {})
        template = str(fields.pop(TEMPLATE, details["msg"]))
        return _(OTHER).format(where=where, at=at, problem=Message(template, fields).shown(_, ngettext))
    if kind == "missing":
        return _(MISSING).format(where=where, at=at, key=key, accepts=_accepted(field))
    if kind == "extra_forbidden":
        owner = _model_at(model, location[:-1])
        known = ", ".join(_fields_by_alias(owner)) if owner else ""
        return _(UNKNOWN).format(where=where, at=at, key=key, known=known)
    if field is not None:
        value = one_line(repr(details.get("input")), 60)
        return _(WRONG).format(where=where, at=at, key=key, accepts=_accepted(field), value=value)
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        owner = _model_at(model, location)
        known = ", ".join(_fields_by_alias(owner)) if owner else ""
        return _(NOT_A_MAPPING).format(where=where, at=at + (f"{key}: " if key else ""), known=known)
    return _(OTHER).format(where=where, at=at, problem=details["msg"])


def _accepted(field: FieldInfo | None) -> str:
    extra = field.json_schema_extra if field is not None else None
    text = extra.get(ACCEPTS) if isinstance(extra, dict) else None
    return _(str(text)) if text else "?"


def _field_at(model: type[BaseModel], location: Location) -> FieldInfo | None:
    """The field a location names, walking through nested models, lists and mappings."""
    owner = _model_at(model, location[:-1])
    if owner is None or not location or not isinstance(location[-1], str):
        return None
    return _fields_by_alias(owner).get(location[-1])


def _model_at(model: type[BaseModel], location: Location) -> type[BaseModel] | None:
    current: Any = model
    for part in location:
        if isinstance(part, int) or not (isinstance(current, type) and issubclass(current, BaseModel)):
            current = _inner_model(current)
            if isinstance(part, int) or current is None:
                continue
        field = _fields_by_alias(current).get(str(part))
        if field is None:
            current = _inner_model(current)  # a mapping's key: its values' model
            continue
        current = _inner_model(field.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return current
    return _inner_model(current)


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    """The model inside `list[M]`, `dict[str, M]`, `M | None` and the like."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(argument)
        if found is not None:
            return found
    return None


def _fields_by_alias(model: type[BaseModel]) -> dict[str, FieldInfo]:
    return {field.alias or name: field for name, field in model.model_fields.items()}


def yaml_line(text: str, location: Location) -> int | None:
    """The 1-based line of the key `location` names in a YAML text, if it is there."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    line = None
    for part in location:
        if isinstance(node, yaml.MappingNode):
            pair = next((p for p in node.value if str(p[0].value) == str(part)), None)
            if pair is None:
                return line
            line, node = pair[0].start_mark.line + 1, pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def json_line(text: str, location: Location) -> int | None:
    """The 1-based line of the key (or list item) `location` names in a JSON text; the
    deepest one found when the text stops matching it. Only the values on the way are
    walked, each decoded once by the standard library."""
    decoder = json.JSONDecoder()
    line: int | None = None
    at = _after_space(text, 0)
    try:
        for part in location:
            if text[at] == "{" and isinstance(part, str):
                at = _after_space(text, at + 1)
                while text[at] == '"':
                    key, end = scanstring(text, at + 1)
                    value = _after_space(text, _after_space(text, end) + 1)  # past the colon
                    if key == part:
                        line, at = text.count("\n", 0, at) + 1, value
                        break
                    at = _next_item(text, decoder.raw_decode(text, value)[1])
                else:
                    return line
            elif text[at] == "[" and isinstance(part, int):
                at = _after_space(text, at + 1)
                for _index in range(part):
                    if text[at] == "]":
                        return line
                    at = _next_item(text, decoder.raw_decode(text, at)[1])
                if text[at] == "]":
                    return line
                line = text.count("\n", 0, at) + 1
            else:
                return line
    except (ValueError, IndexError):  # the text is not JSON there: the line found so far
        return line
    return line


_SPACE = re.compile(r"[ \t\n\r]*")


def _after_space(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _next_item(text: str, at: int) -> int:
    """After one member or item: past its comma, at the next one (or at the closing bracket)."""
    at = _after_space(text, at)
    return _after_space(text, at + 1) if text[at] == "," else at


def keys_table(model: type[BaseModel]) -> str:
    """The model's keys as a Markdown table: key, what it accepts, default, meaning."""
    rows = ["| Key | Accepts | Default | Meaning |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        default = (
            "required"
            if field.is_required()
            else _shown_default(field.get_default(call_default_factory=True))
        )
        meaning = (field.description or "").replace("|", "\\|")
        rows.append(f"| `{field.alias or name}` | {extra.get(ACCEPTS, '')} | {default} | {meaning} |")
    return "\n".join(rows) + "\n"


def _shown_default(value: Any) -> str:
    if value is None or value == {} or value == []:
        return "—"
    return f"`{json.dumps(value)}`"


__all__ = [
    "ValidationError",
    "accepts",
    "describe_errors",
    "json_line",
    "keys_table",
    "problem",
    "yaml_line",
]
