"""When a search asks for a rendering of its query, into which language, and what it searches."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from generalAgent.search.query_rendering import RENDERABLE, rendering_language, with_rendering


def test_a_lone_chinese_query_over_english_documents_is_rendered_into_english() -> None:
    assert rendering_language(["海象 迁徙"], ["en"]) == "en"
    assert rendering_language(["walrus migration"], ["zh", "zh"]) == "zh"


def test_no_rendering_when_the_scripts_agree_or_the_model_sent_a_second_phrasing() -> None:
    assert rendering_language(["日志 启动"], ["zh"]) == ""
    assert rendering_language(["日志 启动"], ["ja"]) == ""  # both CJK: Han characters may match
    assert rendering_language(["日志 启动", "log boot"], ["en"]) == ""
    assert rendering_language(["日志"], ["latin", "ru", ""]) == ""  # no language to name plainly
    assert rendering_language(["123 456"], ["en"]) == ""  # no words: nothing to render


def test_a_mixed_folder_renders_into_its_commonest_other_language() -> None:
    assert rendering_language(["海象"], ["zh", "en", "en", "ko"]) == "en"
    assert rendering_language(["walrus"], ["en", "zh", "ja", "ja", "zh"]) == "ja"  # a tie: by code


def test_the_rendering_is_searched_beside_the_query() -> None:
    asked: list[tuple[str, str]] = []

    def render(query: str, language: str) -> str | None:
        asked.append((query, language))
        return "walrus migration routes"

    assert with_rendering(["海象 迁徙"], ["en"], render) == (
        ["海象 迁徙", "walrus migration routes"],
        "walrus migration routes",
        "en",
    )
    assert asked == [("海象 迁徙", "en")]
    assert with_rendering(["海象", "walrus"], ["en"], render) == (["海象", "walrus"], "", "")
    assert asked == [("海象 迁徙", "en")]  # not asked: the model sent its own phrasing


def test_nothing_is_added_when_no_rendering_comes_back() -> None:
    assert with_rendering(["海象"], ["en"], lambda query, language: None) == (["海象"], "", "")
    assert with_rendering(["海象"], ["en"], lambda query, language: "  ") == (["海象"], "", "")
    assert with_rendering(["海象"], ["en"], lambda query, language: "海象") == (["海象"], "", "")
    assert with_rendering(["海象"], ["en"], None) == (["海象"], "", "")


@given(
    st.lists(st.text(max_size=20), max_size=3),
    st.lists(st.sampled_from(["en", "zh", "ja", "ko", "ru", "latin", ""]), max_size=6),
)
def test_a_rendering_language_is_always_a_searched_documents_renderable_one(
    asked: list[str], languages: list[str]
) -> None:
    target = rendering_language(asked, languages)
    assert target == "" or (target in RENDERABLE and target in languages and len(asked) == 1)
