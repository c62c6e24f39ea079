"""The terminal front end.

The UI language is chosen here, before any command module loads: typer builds the help
texts as they load (UI_LANGUAGE from the environment, else the locale; a .env's
UI_LANGUAGE is applied once settings are read, for everything shown after that). The help
pages' frame and the usage errors are ours, in the same language (cli/help_page.py).
"""

import os

from generalAgent.i18n import choose_language, use_language

use_language(choose_language(os.environ.get("UI_LANGUAGE")))
