"""`--or`: the user's words and other phrasings of them, for `generalagent search` and `kb search`.

Both commands take the same option and refuse the same way: a search keeps at most
MAX_PHRASINGS phrasings (search/query.py) and would drop the rest unsaid; a phrasing left
out changes what is searched, so nothing runs (as `kb search -n 30` or a wrong `--sort`
is refused) and the user chooses which to drop.
"""

from __future__ import annotations

from typing import Annotated

import typer

from generalAgent.cli.subcommands import EXIT_USAGE, fail
from generalAgent.i18n import _
from generalAgent.search.query import MAX_PHRASINGS

OtherPhrasings = Annotated[
    list[str] | None,
    typer.Option("--or", help=_("Another phrasing of the query, searched with it (repeatable)")),
]


def query_with_phrasings(words: str, also: list[str] | None) -> str | list[str]:
    """The query a search takes: `words` alone, or `words` and the `--or` phrasings as a list;
    more different phrasings than a search takes end the command with a usage error."""
    given = list(dict.fromkeys(q for q in [words, *(also or [])] if q.strip()))
    if len(given) > MAX_PHRASINGS:
        fail(
            _(
                "A search takes at most {most} phrasings (the words and {more} --or); {count} were given: "
                "leave some out."
            ).format(most=MAX_PHRASINGS, more=MAX_PHRASINGS - 1, count=len(given)),
            EXIT_USAGE,
        )
    return [words, *also] if also else words
