"""Who named a host: what a typed line names, --allow-host, search results, and the rule's table."""

from __future__ import annotations

import pytest

from generalAgent.tools.named_hosts import (
    BY_ALLOW_HOST,
    BY_SEARCH,
    BY_USER,
    CREDENTIALS,
    DATA_TO_NAMED,
    MAX_RECORDS,
    UNNAMED,
    HostError,
    NamedHosts,
    allowed_hosts,
    canonical_url,
    hosts_typed,
    merge_named_hosts,
    searched_urls,
)


def hosts(text: str) -> list[str]:
    return [r["host"] for r in hosts_typed(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what does docs.python.org say about re?", ["docs.python.org"]),
        ("read https://WWW.Example.com/a?b=1#top, then reply", ["example.com"]),
        ("请看docs.python.org的文档", ["docs.python.org"]),  # Chinese may touch a domain
        ("compare example.com and example.org.", ["example.com", "example.org"]),
        ("http://127.0.0.1:8000/health is up", ["127.0.0.1"]),
    ],
)
def test_a_typed_line_names_its_urls_and_domains(text: str, expected: list[str]) -> None:
    assert hosts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "summarise #invoice-2024.md",
        "fix main.py and data.zip, then export logo.ai",
        'read #"quarterly report.pdf" and #docs/site.com',
        "edit src/app.com/config and ~/notes.dev",  # a path, not a site
        "mail bob@example.com",  # an address names a mailbox, not a site to fetch
        "总结#报告.pdf的内容",
        "version 1.2.3 of numpy",
    ],
)
def test_file_names_paths_and_addresses_name_no_host(text: str) -> None:
    assert hosts(text) == []


def test_a_typed_url_is_recorded_exactly_without_its_fragment() -> None:
    (record,) = hosts_typed("see https://Docs.Example.org/search?q=x#results.")
    assert record == {"host": "docs.example.org", "by": BY_USER, "url": "https://docs.example.org/search?q=x"}
    (chinese,) = hosts_typed("看看https://docs.example.org/search?q=x，然后总结")
    assert chinese["url"] == "https://docs.example.org/search?q=x"


def test_allow_host_takes_hosts_ports_and_urls_and_refuses_the_rest() -> None:
    records = allowed_hosts(["docs.python.org", "127.0.0.1:8000", "https://www.intranet.example/wiki"])
    assert [(r["host"], r["by"]) for r in records] == [
        ("docs.python.org", BY_ALLOW_HOST),
        ("127.0.0.1", BY_ALLOW_HOST),
        ("intranet.example", BY_ALLOW_HOST),
    ]
    for bad in ["", "   ", "http://"]:
        with pytest.raises(HostError, match="--allow-host"):
            allowed_hosts([bad])


def test_who_named_it_decides_what_runs_without_a_question() -> None:
    names = NamedHosts.of(
        [
            *hosts_typed("look at docs.example.org and https://shop.example/item?id=7"),
            *allowed_hosts(["api.example"]),
            *searched_urls(["https://news.example/a?id=1"]),
        ]
    )
    runs = [
        "https://docs.example.org/guide",  # a typed host, no data of the model's
        "https://shop.example/item?id=7",  # exactly the typed URL
        "https://api.example/v1/q?k=anything",  # --allow-host: everything on it
        "https://news.example/a?id=1",  # exactly what the search returned
        "https://www.docs.example.org/guide#part",  # www. and a fragment change nothing
    ]
    for url in runs:
        assert names.question(url) is None, url
    assert names.question("https://docs.example.org/search?q=secret") == DATA_TO_NAMED
    assert names.question("https://shop.example/item?id=8") == DATA_TO_NAMED
    assert names.question("https://news.example/b") == UNNAMED  # the search named one URL only
    assert names.question("https://collect.example/") == UNNAMED
    assert names.question("https://docs.example.org/guide", body=True) == DATA_TO_NAMED


def test_a_user_name_or_password_in_the_url_always_asks() -> None:
    typed = "https://shop.example/item?id=7"
    names = NamedHosts.of(
        [
            *hosts_typed(f"see {typed}"),
            *allowed_hosts(["api.example"]),
            *searched_urls(["https://news.example/a"]),
        ]
    )
    for url in [
        "https://u:p@news.example/a",  # the search result with a password put in
        "https://u@shop.example/item?id=7",  # the typed URL with a user name put in
        "https://key@api.example/v1",  # even an allowed host: credentials are data
        "https://:@news.example/a",
    ]:
        assert names.question(url) == CREDENTIALS, url
        assert not names.may_follow(url), url
    assert names.question("https://news.example/a") is None


def test_a_redirect_may_go_only_to_a_host_the_user_named_or_the_exact_url_named() -> None:
    names = NamedHosts.of([*hosts_typed("docs.example.org"), *searched_urls(["https://news.example/a"])])
    assert names.may_follow("https://docs.example.org/login?next=/x")  # the server chose the query
    assert names.may_follow("https://news.example/a")
    assert not names.may_follow("https://news.example/b")
    assert not names.may_follow("http://127.0.0.1:9/collect")


def test_records_from_clients_are_read_only_when_well_formed() -> None:
    names = NamedHosts.of(
        [
            {"host": "a.example", "by": "tool"},
            {"by": BY_USER},
            "b.example",
            {"host": "c.example", "by": BY_SEARCH},
        ]
    )
    assert names.records == ({"host": "c.example", "by": BY_SEARCH, "url": ""},)


def test_the_session_keeps_each_record_once_and_at_most_max_records() -> None:
    first = hosts_typed("a.example")
    merged = merge_named_hosts(first, [*hosts_typed("b.example"), *first])
    assert [r["host"] for r in merged] == ["b.example", "a.example"]  # named again: newest
    many = [{"host": f"h{i}.example", "by": BY_USER, "url": ""} for i in range(MAX_RECORDS + 5)]
    kept = merge_named_hosts([], many)  # type: ignore[arg-type]
    assert len(kept) == MAX_RECORDS and kept[-1]["host"] == f"h{MAX_RECORDS + 4}.example"


def test_canonical_urls_compare_what_goes_on_the_wire() -> None:
    assert canonical_url("HTTPS://www.Example.com") == "https://example.com/"
    assert canonical_url("https://example.com:8443/a?b=1#c") == "https://example.com:8443/a?b=1"
    assert canonical_url("not a url") is None
