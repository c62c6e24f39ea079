"""The process environment a test may inherit: everything except what configures the agent.

The variables come from the settings model itself (`settings_table`), so a setting added
tomorrow is cleared too: a developer's `AUTO_APPROVE_TOOLS=run_bash_command` in the shell
must not make an approval test pass or fail.
"""

from __future__ import annotations

from collections.abc import Mapping

from generalAgent.config.reference import settings_table

# Read outside the settings model: where the user-level config lives, and the locale the
# UI speaks (tests choose their language explicitly).
_OTHER_VARIABLES = frozenset({"GENERALAGENT_CONFIG_DIR", "LC_ALL", "LC_MESSAGES", "LANGUAGE"})


def setting_variables() -> frozenset[str]:
    """The upper-case names of every setting, as the settings read them."""
    return frozenset(variable for variable, _default, _description in settings_table())


def agent_variables(environ: Mapping[str, str]) -> list[str]:
    """The names in `environ` that would configure the agent (case-insensitive, as settings read them)."""
    configuring = setting_variables() | _OTHER_VARIABLES
    return [name for name in environ if name.upper() in configuring]


def without_agent_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """A copy of `environ` that configures nothing of the agent."""
    dropped = set(agent_variables(environ))
    return {name: value for name, value in environ.items() if name not in dropped}
