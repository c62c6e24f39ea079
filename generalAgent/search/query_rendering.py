"""When a search adds a rendering of the query in the documents' language, and into which.

FTS5 matches words: a lone Chinese question over an English manual finds only the odd
command name the two share (held-out recall@5 0.417 on the unseen FHS set, 0.917 with the
English phrasing beside it). The model is told to send that phrasing itself, and often
does not; so when a search's one phrasing is in another script than the documents it
searches, the search asks for a rendering (`RenderQuery`, the chat model behind it: set
by the graph, graph/query_rendering.py) and searches both, fused like any list query.

Pure decisions here, no model: which language to render into (the commonest of the
searched documents' languages whose script differs from the query's) and whether to at
all (not when the query already is a list: the model sent a second phrasing; not into a
language we cannot name plainly to a model, e.g. "latin").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from generalAgent.search.language import is_cjk, query_language
from generalAgent.search.query import phrasings

# (query, language code) -> the query rendered in that language, or None when none could be
# had (no model, a failed call, a cancel): the search then goes on with the query alone.
RenderQuery = Callable[[str, str], str | None]

# Languages a rendering may be asked in: those `language.main_language` names exactly.
RENDERABLE = frozenset({"en", "zh", "ja", "ko"})


def rendering_language(asked: Sequence[str], languages: Iterable[str]) -> str:
    """The language to render the query into, or "" for none: `asked` must be one phrasing
    (a list means the model already sent its own), and the documents' `languages` must
    hold a renderable one in another script class (CJK or not) than the query's; the
    commonest such language wins (ties: by code, so the choice is stable)."""
    if len(asked) != 1:
        return ""
    language = query_language(asked[0])
    if not language:
        return ""
    counts = Counter(code for code in languages if code in RENDERABLE and is_cjk(code) != is_cjk(language))
    if not counts:
        return ""
    return min(counts, key=lambda code: (-counts[code], code))


def with_rendering(
    asked: Sequence[str], languages: Iterable[str], render: RenderQuery | None
) -> tuple[list[str], str, str]:
    """The phrasings to search (the query, then its rendering when one was due and given),
    the rendering and its language (both "" when none was added)."""
    target = rendering_language(asked, languages) if render is not None else ""
    if not target or render is None:
        return list(asked), "", ""
    rendered = render(asked[0], target) or ""
    together = phrasings([asked[0], rendered])
    if len(together) < 2:  # nothing came back, or the query itself
        return list(asked), "", ""
    return together, rendered, target
