"""A `#` reference never guesses: what it attaches is exactly a path that exists."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from generalAgent.agent.chat_input import find_references

# Names as people write them: letters, Chinese, digits, dots, dashes, underscores.
NAME = st.text(alphabet=st.sampled_from("abcXYZ012._-季度报告数据"), min_size=1, max_size=12).filter(
    lambda name: name.strip(".") and name not in {".", ".."}
)
AFTER = st.sampled_from(["", " please", "的内容", "，看看", "。", " and more"])


@settings(max_examples=150, deadline=None)
@given(name=NAME, after=AFTER)
def test_a_missing_file_under_an_existing_folder_never_attaches_the_folder(
    tmp_path_factory, name: str, after: str
) -> None:
    root: Path = tmp_path_factory.mktemp("refs")
    (root / "docs").mkdir()
    (root / "docs" / "present.md").write_text("x", encoding="utf-8")
    for reference in find_references(f"总结 #docs/{name}{after}", root):
        if reference.path is not None:
            attached = (root / reference.path).resolve()
            assert attached != (root / "docs").resolve()  # never the parent folder
            assert attached.exists()


@settings(max_examples=150, deadline=None)
@given(name=NAME, after=AFTER)
def test_an_existing_file_is_found_whatever_text_follows(tmp_path_factory, name: str, after: str) -> None:
    root: Path = tmp_path_factory.mktemp("refs")
    (root / name).write_text("x", encoding="utf-8")
    found = [r.path for r in find_references(f"看 #{name}{after}", root)]
    if name.rstrip(".").isdigit():  # `#123` is an issue number, not a file
        return
    if after[:1] in {"", " ", "的", "，", "。"}:
        assert found == [name]
