"""A document's main language, told by its script: what search tells the model so it can
ask in the document's language when the user's differs.

FTS5 matches words, not meanings: a Chinese question finds nothing in an English manual
unless it carries the manual's own words. Knowing that a document is English lets the tool
say so, and lets the model send an English rendering of the question beside the user's.

The language is read from the characters of a sample of the text (the first
SAMPLE_CHARS): Han characters make Chinese (unless kana make it Japanese), Hangul Korean,
Cyrillic Russian-or-other ("ru"), Latin English when English's commonest words are there,
else "latin". A Chinese manual full of English commands is still Chinese: one Han
character counts as much as a Latin word (about three letters), so CJK_SHARE of the
text's words being Han characters is enough. No model, no dictionary: a few regex counts
over at most SAMPLE_CHARS characters.
"""

from __future__ import annotations

import re

from generalAgent.search.segmentation import CJK_CHARACTER

SAMPLE_CHARS = 200_000
# Han characters over (Han characters + Latin words) above this make a text Chinese.
CJK_SHARE = 0.3
# Kana over Han characters above this make a CJK text Japanese.
KANA_SHARE = 0.1
# English function words over Latin words above this make a Latin-script text English.
ENGLISH_SHARE = 0.05

_HAN = re.compile(CJK_CHARACTER)
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_CYRILLIC_WORD = re.compile(r"[\u0400-\u04ff]+")
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")
_ENGLISH = frozenset(
    [
        "the",
        "of",
        "and",
        "to",
        "in",
        "is",
        "that",
        "for",
        "it",
        "with",
        "as",
        "on",
        "are",
        "be",
        "by",
        "this",
        "you",
        "or",
        "can",
        "from",
    ]
)

NAMES = {
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "ru": "Cyrillic-script",
    "en": "English",
    "latin": "Latin-script (not English)",
}


def main_language(text: str) -> str:
    """The main language of `text` as a short code (see NAMES), or "" when it has no words."""
    sample = text[:SAMPLE_CHARS]
    han = len(_HAN.findall(sample))
    hangul = len(_HANGUL.findall(sample))
    cyrillic = len(_CYRILLIC_WORD.findall(sample))
    latin = _LATIN_WORD.findall(sample)
    words = han + hangul + cyrillic + len(latin)
    if words == 0:
        return ""
    if han / words >= CJK_SHARE:
        return "ja" if len(_KANA.findall(sample)) > KANA_SHARE * han else "zh"
    if hangul / words >= CJK_SHARE:
        return "ko"
    if cyrillic > len(latin):
        return "ru"
    if not latin:
        return ""
    english = sum(1 for word in latin if word.lower() in _ENGLISH)
    return "en" if english / len(latin) >= ENGLISH_SHARE else "latin"


def query_language(text: str) -> str:
    """The language of a query: any Han character makes it Chinese (a Chinese question often
    carries English terms), else as `main_language` says."""
    if _HAN.search(text):
        return "ja" if _KANA.search(text) else "zh"
    return main_language(text)


def is_cjk(language: str) -> bool:
    return language in {"zh", "ja", "ko"}


def language_name(code: str) -> str:
    return NAMES.get(code, code or "unknown")
