"""The language of the terminal UI: English or Simplified Chinese, from gettext catalogs.

Every string the CLI shows a person goes through `_()` (or `ngettext` for counts); what the
model reads (tool answers, reminders, prompts) stays English. The language is UI_LANGUAGE
when set (`en`, `zh`, or a locale tag such as `zh_CN`), else the locale the user runs in,
by POSIX precedence: LC_ALL, then LC_MESSAGES, then LANG (`zh_CN.UTF-8`, `zh_TW`, `zh` all
choose Chinese). Command and option names stay English in every language.

Catalogs live in locale/<lang>/LC_MESSAGES/generalagent.po, compiled to .mo beside them
(`make i18n`); tests/unit/test_i18n.py keeps the catalog complete and the .mo current.
This module sits below every layer that shows text (the session catalog's errors
included), so nothing has to import the terminal front end to speak the user's language.
Messages are format strings with named fields (`_("Resumed {id}").format(id=...)`), so a
translation may reorder them; rich markup stays outside the message.
"""

from __future__ import annotations

import gettext
import os
from collections.abc import Mapping
from pathlib import Path

# N_ marks a message where it is defined (a table, a constant) for `_()` where it is shown;
# one marker for every layer, so lower layers mark theirs the same way.
from generalAgent.display import N_

__all__ = ["N_", "_", "choose_language", "current_language", "ngettext", "use_language"]

DOMAIN = "generalagent"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
LANGUAGES = ("en", "zh")  # what UI_LANGUAGE accepts besides "auto"
_CATALOGS = {"zh": "zh_CN"}

_translation: gettext.NullTranslations = gettext.NullTranslations()
_language = "en"


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


def use_language(language: str) -> None:
    """Show the UI in `language` from now on (English when no catalog is found)."""
    global _translation, _language
    _language = language if language in _CATALOGS else "en"
    catalog = _CATALOGS.get(language)
    if catalog is None:
        _translation = gettext.NullTranslations()
        return
    _translation = gettext.translation(DOMAIN, LOCALE_DIR, languages=[catalog], fallback=True)


def current_language() -> str:
    """`en` or `zh`: the language the UI speaks now (for text that is not in the catalog,
    such as a skill's own `description_zh`)."""
    return _language


def _(message: str) -> str:
    """`message` in the UI language."""
    return _translation.gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The form of a message for `count` (Chinese has one form for all counts)."""
    return _translation.ngettext(singular, plural, count)
