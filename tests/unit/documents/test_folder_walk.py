"""Folder walks and globs: every file inside, never through a link that leads out."""

from __future__ import annotations

from pathlib import Path

from generalAgent.documents.folder_walk import glob_anchor, glob_files, leads_out_of, walk_folder


def tree(root: Path) -> Path:
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("key", encoding="utf-8")
    docs = root / "docs"
    (docs / "a" / "b").mkdir(parents=True)
    (docs / "top.md").write_text("top", encoding="utf-8")
    (docs / "a" / "b" / "deep.md").write_text("deep", encoding="utf-8")
    (docs / ".hidden.md").write_text("hidden", encoding="utf-8")
    (docs / "a" / "alias.md").symlink_to(docs / "top.md")  # inside: fine
    (docs / "a" / "again").symlink_to(docs / "a", target_is_directory=True)  # inside, loops back
    (docs / "leak.txt").symlink_to(outside / "secret.txt")
    (docs / "a" / "out").symlink_to(outside, target_is_directory=True)
    (docs / "up.md").symlink_to(Path("..") / "outside" / "secret.txt")  # relative, still out
    (docs / "dangling.md").symlink_to(docs / "nothing.md")
    return docs


def test_a_walk_takes_what_is_inside_and_names_each_link_out(tmp_path: Path) -> None:
    docs = tree(tmp_path)
    found = walk_folder(docs)
    assert [p.relative_to(docs).as_posix() for p in found.files] == ["a/alias.md", "a/b/deep.md", "top.md"]
    assert [p.relative_to(docs).as_posix() for p in found.links_out] == ["a/out", "leak.txt", "up.md"]


def test_a_walk_filters_and_may_include_hidden_files(tmp_path: Path) -> None:
    docs = tree(tmp_path)
    found = walk_folder(docs, include=lambda p: p.suffix == ".md", hidden=True)
    assert [p.name for p in found.files] == [".hidden.md", "alias.md", "deep.md", "top.md"]


def test_a_folder_reached_through_a_link_is_walked_from_inside_it(tmp_path: Path) -> None:
    """`#link-to-docs`: the folder walked is where the link points; its files are inside it."""
    docs = tree(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(docs, target_is_directory=True)
    found = walk_folder(link)
    assert [p.relative_to(link).as_posix() for p in found.files] == ["a/alias.md", "a/b/deep.md", "top.md"]


def test_a_glob_stays_inside_the_folder_it_starts_from(tmp_path: Path) -> None:
    docs = tree(tmp_path)
    found = glob_files(docs / "a" / "*" / "*")
    assert "a/b/deep.md" in [p.relative_to(docs).as_posix() for p in found.files]
    # docs/a is where this glob starts: a link to docs/top.md leads out of it too.
    assert [p.relative_to(docs).as_posix() for p in found.links_out] == [
        "a/again/alias.md",
        "a/out/secret.txt",
    ]
    deep = glob_files(docs / "**" / "*.md", hidden=False)
    assert [p.relative_to(docs).as_posix() for p in deep.files] == ["a/alias.md", "a/b/deep.md", "top.md"]
    assert [p.name for p in deep.links_out] == ["up.md"]
    assert len(glob_files(docs / "**" / "*", limit=2).files) == 2


def test_the_anchor_of_a_glob_is_its_folder_before_the_first_wildcard() -> None:
    assert glob_anchor(Path("docs/q3/*.pdf")) == (Path("docs/q3"), "*.pdf")
    assert glob_anchor(Path("**/*.md")) == (Path("."), "**/*.md")


def test_a_path_written_inside_the_working_folder_may_not_lead_out_through_a_link(tmp_path: Path) -> None:
    docs = tree(tmp_path)
    (docs / "bundle").symlink_to(tmp_path / "outside", target_is_directory=True)
    assert leads_out_of(Path("leak.txt"), docs) and leads_out_of(Path("bundle"), docs)
    assert leads_out_of(Path("bundle/secret.txt"), docs) and leads_out_of(docs / "bundle", docs)
    assert not leads_out_of(Path("a/alias.md"), docs) and not leads_out_of(Path("top.md"), docs)
    assert not leads_out_of(Path("missing.md"), docs)
    # Written as leaving the folder: the user chose where it goes.
    assert not leads_out_of(Path("../outside/secret.txt"), docs)
    assert not leads_out_of(tmp_path / "outside" / "secret.txt", docs)


def test_a_data_folder_of_generalagent_inside_is_not_walked_unless_it_is_the_start(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("revenue", encoding="utf-8")
    data = tmp_path / "data"
    (data / "workspaces" / "s1" / "uploads").mkdir(parents=True)
    (data / "indexes.db").write_bytes(b"")
    (data / "workspaces" / "s1" / "uploads" / "report.md").write_text("revenue", encoding="utf-8")
    lookalike = tmp_path / "archive"  # a database alone is a user's file, not a data folder
    lookalike.mkdir()
    (lookalike / "sessions.db").write_bytes(b"")
    (lookalike / "notes.md").write_text("notes", encoding="utf-8")

    found = walk_folder(tmp_path)
    assert found.files == [
        tmp_path / "archive" / "notes.md",
        tmp_path / "archive" / "sessions.db",
        tmp_path / "report.md",
    ]
    assert found.data_homes == [data]
    named = walk_folder(data)  # asked for by name: walked
    assert data / "workspaces" / "s1" / "uploads" / "report.md" in named.files and named.data_homes == []
