"""Knowledge search with vectors fuses through the document search's lookup (lookup.find_chunks
with `semantic`): the keyword top five of a covered query keep their seats, and a question
mostly absent from the items keeps its keyword first place, on both backends."""

from __future__ import annotations

from collections.abc import Sequence

from generalAgent.knowledge import KnowledgeStore, search_knowledge
from generalAgent.search.embeddings import Embedder

DECOYS = 20


class DecoyEmbeddings(Embedder):
    """Vectors that disagree with the keywords: every text without "answer" (the decoys and
    the query) points one way, decoy n a little further off as n grows, so the decoys are
    the query's nearest in their order; the answers are orthogonal to the query."""

    model = "decoy"
    batch_size = 16

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = []
        for text in texts:
            if "answer" in text.lower():
                vectors.append([0.0, 1.0, 0.0])
            else:
                rank = next((n for n in range(DECOYS, -1, -1) if f"decoy{n} " in text.lower()), -1)
                vectors.append([1.0, 0.0, (rank + 1) / 100])
        return vectors


def add_decoys(store: KnowledgeStore, word: str, count: int = DECOYS) -> None:
    """Decoy n mentions `word` once, with more filler as n grows, so BM25 ranks them in the
    vectors' order, below every answer."""
    for n in range(count):
        store.add_knowledge(f"Decoy {n}", f"decoy{n} {word} " + "filler " * (n + 3))


def titles(store: KnowledgeStore, query: str, limit: int) -> list[str]:
    return [r.item.title for r in search_knowledge(store, query, max_results=limit).results]


def test_a_covered_querys_keyword_top_five_stay_in_the_top_five(store: KnowledgeStore):
    store.embedder = DecoyEmbeddings()
    answers = [
        store.add_knowledge(f"Answer {n}", "answer alpha beta gamma " + "detail " * n).title for n in range(5)
    ]
    add_decoys(store, "alpha", 12)
    store.add_knowledge("Near by meaning only", "nothing in common " * 3)  # the query's own vector
    store.embedder = None
    assert sorted(titles(store, "alpha beta gamma", 5)) == sorted(answers)  # the keywords' top five
    store.embedder = DecoyEmbeddings()
    with_vectors = titles(store, "alpha beta gamma", 20)
    assert sorted(with_vectors[:5]) == sorted(answers)
    assert "Near by meaning only" in with_vectors  # the vectors did take part


def test_a_question_mostly_absent_keeps_its_keyword_first_place(store: KnowledgeStore):
    store.embedder = DecoyEmbeddings()
    # Titled to sort after the decoys: the seated place ties the score of the place after it,
    # and a tie sorted by title would put it back out of the five.
    store.add_knowledge("Zulu", "answer: alpha, alpha and alpha again.")
    add_decoys(store, "alpha")
    question = "alpha omicron sigma upsilon"  # one word in four is in the items
    store.embedder = None
    assert titles(store, question, 1) == ["Zulu"]
    store.embedder = DecoyEmbeddings()
    with_vectors = titles(store, question, 5)
    assert "Zulu" in with_vectors
    assert with_vectors[0] == "Decoy 0"  # the vectors lead the rest


def test_the_filters_hold_on_the_vector_side(store: KnowledgeStore):
    store.embedder = DecoyEmbeddings()
    store.add_knowledge("Answer", "answer alpha beta gamma", domain="kept")
    add_decoys(store, "unrelated")  # nearest by meaning, in another domain
    found = search_knowledge(store, "alpha beta gamma", domain="kept", max_results=10).results
    assert [r.item.title for r in found] == ["Answer"]
    assert titles(store, "alpha beta gamma", 3)[1:] == ["Decoy 0", "Decoy 1"]
