"""Where a local embedding model is found: a folder, or an installed package that ships one."""

from __future__ import annotations

from pathlib import Path

from generalAgent.search.embeddings import model_folder


def test_a_package_that_is_the_model_folder_is_used_as_it_is(tmp_path: Path):
    (tmp_path / "modules.json").write_text("[]")
    assert model_folder(tmp_path) == tmp_path


def test_a_package_that_ships_its_model_in_a_subfolder_is_looked_into(tmp_path: Path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "modules.json").write_text("[]")
    (tmp_path / "cli").mkdir()
    assert model_folder(tmp_path) == tmp_path / "model"


def test_without_one_clear_model_folder_the_package_itself_is_tried(tmp_path: Path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "modules.json").write_text("[]")
    assert model_folder(tmp_path) == tmp_path
