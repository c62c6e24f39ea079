"""Error wording: a validation error of a setting as one line naming the variable and what it accepts."""

from __future__ import annotations

from typing import Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError


def describe_validation_error(cls: type[BaseModel], exc: ValidationError) -> str:
    """One line: which variable, what it was, and what is allowed."""
    error = exc.errors()[0]
    field = str(error["loc"][0]) if error["loc"] else ""
    variable = field.upper() or cls.__name__
    value = error.get("input")
    allowed = allowed_values(cls, field) if field else ""
    reason = error["msg"].removeprefix("Value error, ")
    shown = f"={value!r}" if isinstance(value, str | int | float) else ""
    suffix = f" (allowed: {allowed})" if allowed else ""
    return f"Invalid setting {variable}{shown}: {reason}{suffix}. Fix it in .env or the environment."


def allowed_values(cls: type[BaseModel], field: str) -> str:
    info = cls.model_fields.get(field)
    if info is None:
        return ""
    low = high = None
    for constraint in info.metadata:
        for attr in ("ge", "gt"):
            if getattr(constraint, attr, None) is not None:
                low = getattr(constraint, attr)
        for attr in ("le", "lt"):
            if getattr(constraint, attr, None) is not None:
                high = getattr(constraint, attr)
    if low is not None and high is not None:
        return f"{low}..{high}"
    if low is not None:
        return f">= {low}"
    if high is not None:
        return f"<= {high}"
    if info.annotation is bool:
        return "true or false"
    if get_origin(info.annotation) is Literal:
        return ", ".join(str(v) for v in get_args(info.annotation))
    return ""
