"""The language of what a person reads: English or Simplified Chinese, from gettext catalogs.

Every string the terminal shows a person goes through `_()` (or `ngettext` for counts), in
whatever layer writes it: the CLI, and below it the texts the CLI only passes on (a failed
model call described, a compaction line, a pruned database's summary, an MCP server's
state). This module imports nothing of the project, so every layer may mark its strings.
What the model reads (tool answers, reminders, prompts, sub-agent results) stays English:
a function whose text goes to both takes `for_model=True` and then uses `english`, which
returns the message as written (providers/errors.py `describe_model_error`).

The language is UI_LANGUAGE when set (`en`, `zh`), else the locale the user runs in, by
POSIX precedence: LC_ALL, then LC_MESSAGES, then LANG (`zh_CN.UTF-8`, `zh_TW`, `zh` all
choose Chinese). It is taken from the environment when this module loads, because typer
builds the help texts when the CLI's modules load, before any .env is read; the CLI then
applies the UI_LANGUAGE of .env (`use_language`). Command and option names stay English in
every language. Click's and typer's own texts ("Usage:", "Options", "Show this message and
exit.", their usage errors) stay English: they look them up with the standard library's
gettext in its default domain, whose language only the environment chooses, and typer
keeps some as constants made when it loads.

The catalog is locale/zh_CN/LC_MESSAGES/generalagent.po, compiled to .mo beside it (`make
i18n`); tests/unit/test_i18n.py keeps it complete and the .mo current. Messages are format
strings with named fields (`_("Resumed {id}").format(id=...)`), so a translation may
reorder them; rich markup stays outside the message.
"""

from __future__ import annotations

import gettext
import os
from collections.abc import Mapping
from pathlib import Path

DOMAIN = "generalagent"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
LANGUAGES = ("en", "zh")  # what UI_LANGUAGE accepts besides "auto"
_CATALOGS = {"zh": "zh_CN"}


def choose_language(setting: str | None, environ: Mapping[str, str] | None = None) -> str:
    """`en` or `zh`: the UI_LANGUAGE setting unless it is unset or "auto", else the locale."""
    if setting and setting.lower() != "auto":
        return "zh" if setting.lower().startswith("zh") else "en"
    environ = os.environ if environ is None else environ
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(variable, "")
        if value:  # the first one set decides, even when it says C or en
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def _load(language: str) -> gettext.NullTranslations:
    catalog = _CATALOGS.get(language)
    if catalog is None:
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[catalog], fallback=True)


_language = choose_language(os.environ.get("UI_LANGUAGE"))
_translation = _load(_language)


def use_language(language: str) -> None:
    """Show the UI in `language` from now on (English when no catalog is found)."""
    global _language, _translation
    _language, _translation = language, _load(language)


def current_language() -> str:
    """The language the UI is shown in now: `en` or `zh`."""
    return _language


def _(message: str) -> str:
    """`message` in the UI language."""
    return _translation.gettext(message)


def N_(message: str) -> str:
    """Marks `message` for the catalog where it is defined (a table, a constant); it is
    translated with `_()` where it is shown, once the language is known."""
    return message


def ngettext(singular: str, plural: str, count: int) -> str:
    """The form of a message for `count` (Chinese has one form for all counts)."""
    return _translation.ngettext(singular, plural, count)


def english(message: str) -> str:
    """`message` as written: the `_` of text the model reads, which stays English."""
    return message
