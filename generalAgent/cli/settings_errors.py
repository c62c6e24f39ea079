"""An invalid setting's line in the UI language: the variable, its value, why, what is allowed.

config/ sits below the catalog and keeps the parts (config/errors.py `SettingProblem`);
here pydantic's reasons a setting meets are said again from their error type and values,
since pydantic writes them in English only. A reason of another type (one of our own
validators) stays as written.
"""

from __future__ import annotations

from generalAgent.config.settings import SettingsError
from generalAgent.i18n import N_, _

# pydantic's error types for the values settings take (numbers in a range, booleans, one
# of a list), with the fields its error context gives.
REASONS = {
    "greater_than_equal": N_("Input should be greater than or equal to {ge}"),
    "greater_than": N_("Input should be greater than {gt}"),
    "less_than_equal": N_("Input should be less than or equal to {le}"),
    "less_than": N_("Input should be less than {lt}"),
    "int_parsing": N_("Input should be a whole number"),
    "int_from_float": N_("Input should be a whole number"),
    "float_parsing": N_("Input should be a number"),
    "bool_parsing": N_("Input should be true or false"),
    "literal_error": N_("Input should be one of the allowed values"),
    "enum": N_("Input should be one of the allowed values"),
}


def settings_error_line(exc: SettingsError) -> str:
    """The line for `exc` in the UI language (its English when it has no parts)."""
    problem = exc.problem
    if problem is None:
        return str(exc)
    template = REASONS.get(problem.kind)
    reason = problem.reason
    if template is not None:
        try:
            reason = _(template).format(**problem.context)
        except (KeyError, IndexError):
            reason = problem.reason
    allowed = problem.allowed
    if allowed == "true or false":
        allowed = _("true or false")
    if allowed:
        return _(
            "Invalid setting {variable}{value}: {reason} (allowed: {allowed}). Fix it in .env or the environment."
        ).format(variable=problem.variable, value=problem.value, reason=reason, allowed=allowed)
    return _("Invalid setting {variable}{value}: {reason}. Fix it in .env or the environment.").format(
        variable=problem.variable, value=problem.value, reason=reason
    )
