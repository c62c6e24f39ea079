"""Properties of who names a host: file references and file names never do; records stay bounded."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from generalAgent.tools.named_hosts import (
    FILE_SUFFIXES,
    MAX_RECORDS,
    NamedHosts,
    hosts_typed,
    merge_named_hosts,
)

LABEL = st.from_regex(r"[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
WORDS = st.text(st.sampled_from("abc 中文 ,.;:!?()"), max_size=20)


@given(WORDS, st.lists(LABEL, min_size=1, max_size=3), st.sampled_from(sorted(FILE_SUFFIXES)), WORDS)
def test_a_file_name_or_reference_never_names_a_host(
    before: str, labels: list[str], suffix: str, after: str
) -> None:
    name = ".".join([*labels, suffix])
    for text in (f"{before} {name} {after}", f"{before} #{name} {after}", f"{before}#docs/{name}{after}"):
        assert all(not r["host"].endswith("." + suffix) for r in hosts_typed(text)), text


@given(st.text(max_size=300))
def test_any_text_gives_well_formed_records_the_rule_can_read(text: str) -> None:
    records = hosts_typed(text)
    assert NamedHosts.of(records).records == tuple(records)
    assert all(r["host"] == r["host"].lower() and not r["host"].startswith("www.") for r in records)


@given(
    st.lists(
        st.lists(st.sampled_from(["a.example", "b.example", "http://c.example/x?y=1"]), max_size=5),
        max_size=400,
    )
)
def test_a_session_keeps_each_record_once_within_the_bound(turns: list[list[str]]) -> None:
    kept: list = []
    for turn in turns:
        kept = merge_named_hosts(kept, hosts_typed(" ".join(turn)))
    keys = [(r["host"], r["by"], r["url"]) for r in kept]
    assert len(keys) == len(set(keys)) <= MAX_RECORDS
