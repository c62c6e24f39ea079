"""The terminal front end.

The UI language is chosen here, before any command module loads: typer builds the help
texts as they load (UI_LANGUAGE from the environment, else the locale; a .env's
UI_LANGUAGE is applied once settings are read, for everything shown after that). Click's
and Typer's own words follow it too (cli/help_language.py).
"""

import os

from generalAgent.cli.help_language import speak_help_in_ui_language
from generalAgent.i18n import choose_language, use_language

use_language(choose_language(os.environ.get("UI_LANGUAGE")))
speak_help_in_ui_language(choose_language(os.environ.get("UI_LANGUAGE")))  # Usage, Options ...
