"""The FTS5 expressions query.py writes, read back as a tree for the PostgreSQL index.

query.py is the one place a user's words become a search: it writes FTS5 MATCH
expressions (every word quoted, behind a column filter). The PostgreSQL store reads those
same expressions here instead of building its own, so both backends search for the very
same terms and a change to the query builder reaches both. Only that grammar is read:

    expression := conjunction ("OR" conjunction)*       (AND binds tighter, as in FTS5)
    conjunction := primary ("AND" primary)*
    primary := "(" expression ")" | "{" column+ "}" ":" string

A string is a phrase: FTS5's tokens of it (fts_tokens.py) must stand next to each other in
one of the columns. Anything else raises ValueError: that is a bug of the query builder,
never user input (user words are always inside a string).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# The FTS5 columns of chunks_fts, in order: their number prefixes each lexeme of the
# PostgreSQL tsvector, so a phrase is matched in the columns its filter names only.
COLUMNS = ("text", "text_jieba", "title")
# A lexeme no tsvector holds (every one starts with its column's digit): matches nothing.
NO_LEXEME = "'-'"

_TOKEN = re.compile(
    r'\s*(?:(?P<open>\()|(?P<close>\))|(?P<op>AND|OR)\b|\{(?P<columns>[^}]*)\}\s*:\s*"(?P<string>(?:[^"]|"")*)")'
)


@dataclass(frozen=True)
class Phrase:
    columns: tuple[int, ...]  # numbers of the COLUMNS it is looked for in
    tokens: tuple[str, ...]  # FTS5's tokens, adjacent in that order


@dataclass(frozen=True)
class Node:
    operator: str  # "AND" or "OR"
    children: tuple[Node | Phrase, ...]


Expression = Node | Phrase


def parse(expression: str, tokenize: Callable[[str], list[str]]) -> Expression:
    """The tree of an expression query.py wrote; `tokenize` gives FTS5's tokens of a string."""
    parts = _lex(expression)
    tree, position = _disjunction(parts, 0, tokenize)
    if position != len(parts):
        raise ValueError(f"unexpected {parts[position]!r} in {expression!r}")
    return tree


def phrases(tree: Expression) -> list[Phrase]:
    """Every phrase of the expression, in order (as FTS5 numbers them for bm25)."""
    if isinstance(tree, Phrase):
        return [tree]
    return [phrase for child in tree.children for phrase in phrases(child)]


def conditions(tree: Expression) -> list[tuple[Node, ...]]:
    """Per phrase of `phrases(tree)`, the AND nodes above it below the root: FTS5's bm25
    counts a phrase's occurrences in a row only where each of them holds, as a whole.
    In "a OR (b AND c)" a row holding b without c matches through a, and b is not counted:
    FTS5 clears the positions of an AND that fails (a word jieba cuts in two is searched as
    "(whole) OR (part AND part)"; a chunk holding one part scored it on PostgreSQL only).
    The root is left out: it holds in every row the expression matches (and the store's one
    pass for "(rare) AND (common)" scores rows matching the rare part alone by it)."""

    def walk(node: Expression, above: tuple[Node, ...]) -> list[tuple[Node, ...]]:
        if isinstance(node, Phrase):
            return [above]
        inner = (*above, node) if node.operator == "AND" else above
        return [found for child in node.children for found in walk(child, inner)]

    if isinstance(tree, Phrase):
        return [()]
    return [found for child in tree.children for found in walk(child, ())]


def lexeme(column: int, token: str) -> str:
    return f"{column}{token}"


# The column pairs query.py's terms name, and the letter of their union lexemes: a chunk's
# tsvector also holds each of its words once per pair it occurs in, without positions, so
# the chunks holding a one-word phrase of either pair are counted from one lexeme.
UNIONS: dict[tuple[int, ...], str] = {(0, 2): "a", (1, 2): "b"}


def union_lexemes(columns: Sequence[Sequence[str]]) -> set[str]:
    """The union lexemes of a chunk's columns' tokens."""
    found: set[str] = set()
    for pair, letter in UNIONS.items():
        for column in pair:
            found.update(letter + token for token in columns[column])
    return found


def union_lexeme(phrase: Phrase) -> str | None:
    """The union lexeme counting the chunks that hold `phrase`, when there is one (a one-word
    phrase of one of the UNIONS pairs)."""
    letter = UNIONS.get(phrase.columns)
    return letter + phrase.tokens[0] if letter and len(phrase.tokens) == 1 else None


def tsquery(tree: Expression) -> str:
    """The expression as PostgreSQL tsquery text: each phrase, in each of its columns, as
    lexemes joined by <-> (adjacent)."""
    if isinstance(tree, Phrase):
        if not tree.tokens:
            return NO_LEXEME  # FTS5 matches nothing for a phrase without tokens
        per_column = [" <-> ".join(_quoted(lexeme(c, t)) for t in tree.tokens) for c in tree.columns]
        return "(" + " | ".join(f"({p})" for p in per_column) + ")"
    joiner = " & " if tree.operator == "AND" else " | "
    return "(" + joiner.join(tsquery(child) for child in tree.children) + ")"


def _quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def _lex(expression: str) -> list[tuple[str, object]]:
    parts: list[tuple[str, object]] = []
    position = 0
    rest = expression.rstrip()
    while position < len(rest):
        match = _TOKEN.match(rest, position)
        if match is None:
            raise ValueError(f"cannot read {rest[position:]!r} of {expression!r}")
        if match.group("open"):
            parts.append(("(", None))
        elif match.group("close"):
            parts.append((")", None))
        elif match.group("op"):
            parts.append((match.group("op"), None))
        else:
            names = match.group("columns").split()
            unknown = [name for name in names if name not in COLUMNS]
            if unknown or not names:
                raise ValueError(f"unknown column {unknown} in {expression!r}")
            columns = tuple(COLUMNS.index(name) for name in names)
            parts.append(("phrase", (columns, match.group("string").replace('""', '"'))))
        position = match.end()
    return parts


def _disjunction(
    parts: list[tuple[str, object]], position: int, tokenize: Callable[[str], list[str]]
) -> tuple[Expression, int]:
    children = []
    child, position = _conjunction(parts, position, tokenize)
    children.append(child)
    while position < len(parts) and parts[position][0] == "OR":
        child, position = _conjunction(parts, position + 1, tokenize)
        children.append(child)
    return (children[0] if len(children) == 1 else Node("OR", tuple(children))), position


def _conjunction(
    parts: list[tuple[str, object]], position: int, tokenize: Callable[[str], list[str]]
) -> tuple[Expression, int]:
    children = []
    child, position = _primary(parts, position, tokenize)
    children.append(child)
    while position < len(parts) and parts[position][0] == "AND":
        child, position = _primary(parts, position + 1, tokenize)
        children.append(child)
    return (children[0] if len(children) == 1 else Node("AND", tuple(children))), position


def _primary(
    parts: list[tuple[str, object]], position: int, tokenize: Callable[[str], list[str]]
) -> tuple[Expression, int]:
    if position >= len(parts):
        raise ValueError("the expression ends too early")
    kind, value = parts[position]
    if kind == "(":
        tree, position = _disjunction(parts, position + 1, tokenize)
        if position >= len(parts) or parts[position][0] != ")":
            raise ValueError("a parenthesis is not closed")
        return tree, position + 1
    if kind == "phrase":
        assert isinstance(value, tuple)
        columns: tuple[int, ...] = value[0]
        text: str = value[1]
        return Phrase(columns, tuple(tokenize(text))), position + 1
    raise ValueError(f"unexpected {kind!r}")
