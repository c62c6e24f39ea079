"""Error wording: a validation error of a setting as one line naming the variable and what it accepts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError


@dataclass(frozen=True)
class SettingProblem:
    """A setting's value that cannot be used, as parts: the terminal says them in the UI
    language (cli/settings_errors.py); `line()` is the English sentence."""

    variable: str
    value: str  # `='5'` as the user wrote it, or "" when there is nothing to show
    reason: str  # pydantic's message (or our validator's), English
    kind: str = ""  # pydantic's error type (`greater_than_equal`, `int_parsing`, ...)
    context: dict[str, str] = field(default_factory=dict)  # the type's values (`ge`: "10")
    allowed: str = ""

    def line(self) -> str:
        suffix = f" (allowed: {self.allowed})" if self.allowed else ""
        return f"Invalid setting {self.variable}{self.value}: {self.reason}{suffix}. Fix it in .env or the environment."


def validation_problem(cls: type[BaseModel], exc: ValidationError) -> SettingProblem:
    """Which variable, what it was, and what is allowed."""
    error = exc.errors()[0]
    name = str(error["loc"][0]) if error["loc"] else ""
    value = error.get("input")
    return SettingProblem(
        variable=name.upper() or cls.__name__,
        value=f"={value!r}" if isinstance(value, str | int | float) else "",
        reason=error["msg"].removeprefix("Value error, "),
        kind=str(error.get("type", "")),
        context={key: str(v) for key, v in (error.get("ctx") or {}).items()},
        allowed=allowed_values(cls, name) if name else "",
    )


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
