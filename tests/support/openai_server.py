"""A local OpenAI-compatible HTTP server with scripted replies, for tests and benchmarks.

It speaks the real wire format (`/v1/chat/completions` with and without SSE streaming,
`/v1/embeddings`, `/v1/models`) so the real `ChatOpenAI` client is exercised end to end,
and it records every request so tests can assert on exactly what was sent.

Replies are taken in order from a script; a `responder` callable can decide instead.
Each `Reply` can be text, tool calls (streamed with their arguments split across chunks),
usage with cached tokens, an HTTP error (429 with Retry-After, 401, 404, 500), a response
that never finishes, a stream that stalls after its first chunks, or a stream that is cut
off in the middle.

Every chat request's history is checked as providers check it (each tool call answered
right after it, no orphan answers); `invalid_history_requests` lists the ones that broke
the rule, and with `strict_history=True` they are refused with a 400, as OpenAI does.

`dialect="deepseek"` (or qwen, kimi, glm, vllm, ollama, openrouter) makes the server speak
that provider's dialect from its fixture in tests/fixtures/providers/: reasoning streamed
in the provider's field, its usage object, and its documented refusals (DeepSeek's 400
when reasoning is not passed back, Kimi's when a tool-call message lacks it). With
`context_window`, a prompt larger than the window (counted the provider's way) is
refused; with `prefix_cache`, cached tokens are the prompt's exact prefix shared with an
earlier request, in 64-token blocks, as a provider's prefix cache would serve them.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.support.history import wire_history_problems
from tests.support.summaries import is_summary_request

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "providers"
CACHE_BLOCK = 64  # tokens: prefix caches serve whole blocks
_CJK_RUN = re.compile(
    "[\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]+"
)


def load_dialect(name: str) -> dict[str, Any] | None:
    """A provider's wire fixture (tests/fixtures/providers/NAME.json); None for plain OpenAI."""
    if name in {"generic", "openai"}:
        return None
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str = field(default_factory=lambda: "call_" + uuid.uuid4().hex[:12])

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments  # already raw (possibly invalid) JSON, sent as is
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass
class Reply:
    """One scripted response to one chat-completions request."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int | None = None  # None: estimated from the request
    cached_tokens: int | None = None  # None: the prefix-cache figure (prefix_cache=True), else 0
    completion_tokens: int | None = None
    reasoning: str = ""  # streamed before the answer, in the dialect's reasoning field
    reasoning_tokens: int | None = None  # None: estimated from `reasoning`
    raw_stream: list[dict[str, Any]] | None = None  # recorded chunks, sent verbatim
    status: int = 200  # anything else: an OpenAI-style error body
    error_message: str = "scripted error"
    retry_after: float | None = None  # seconds, sent as Retry-After on errors
    hang: bool = False  # accept the request and never answer
    cut_after_chunks: int | None = None  # stream this many chunks, then drop the connection
    chunk_delay: float = 0.0  # seconds between streamed chunks
    stall_after_chunks: int | None = None  # stream this many chunks, then send nothing more
    chunk_chars: int = 4  # text and tool-call arguments are streamed in pieces this long
    # Stream `text` over and over and never finish (until the client leaves or the server
    # stops): a relay that streams forever, which only a limit on the call can end.
    endless: bool = False
    # Pages the provider's own search used, sent where the dialect documents them (GLM: a
    # top-level `web_search` list) when the request asked for them.
    web_sources: list[dict[str, Any]] = field(default_factory=list)


def _endless(head: list[dict[str, Any]], repeated: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """`head`, then `repeated` over and over, without end."""
    yield from head
    while True:
        yield from repeated


@dataclass
class RecordedRequest:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    received_at: float = field(default_factory=time.monotonic)  # seconds, monotonic clock

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.body.get("tools", []) or [] if "function" in t]

    @property
    def history_problems(self) -> list[str]:
        return wire_history_problems(self.messages)

    @property
    def image_parts(self) -> list[SentImage]:
        """Every `image_url` part of the request, decoded as a provider decodes it."""
        found = []
        for index, message in enumerate(self.messages):
            content = message.get("content")
            for part in content if isinstance(content, list) else []:
                if isinstance(part, dict) and part.get("type") == "image_url":
                    found.append(SentImage.decode(index, message.get("role", ""), part))
        return found


@dataclass(frozen=True)
class SentImage:
    """One image part as the server received it: where, its declared and real format, size."""

    message: int  # index in the request's messages
    role: str
    declared: str  # the data URL's MIME type
    format: str  # what Pillow finds in the bytes ("PNG", "JPEG"), "" when not an image
    width: int
    height: int
    url_bytes: int  # length of the data URL, as it travels
    image_bytes: int = 0  # of the image itself, decoded from base64

    @classmethod
    def decode(cls, index: int, role: str, part: dict[str, Any]) -> SentImage:
        import base64
        import io

        from PIL import Image

        url = str((part.get("image_url") or {}).get("url", ""))
        declared, _, payload = url.partition(";base64,")
        data = b""
        try:
            data = base64.b64decode(payload, validate=True)
            with Image.open(io.BytesIO(data)) as image:
                kind, (width, height) = image.format or "", image.size
        except Exception:  # not base64, not an image: the provider refuses it
            kind, width, height = "", 0, 0
        return cls(index, role, declared.removeprefix("data:"), kind, width, height, len(url), len(data))


@dataclass(frozen=True)
class ImageRules:
    """What a vision endpoint accepts of one image and of one request's images. The
    defaults are a strict generic endpoint; `DOCUMENTED_IMAGE_RULES` holds each provider's
    own limits as its documentation states them (None: the documentation states none)."""

    max_side: int | None = 2_048
    max_pixels: int | None = 2_048 * 2_048
    max_url_bytes: int | None = 5 * 1024 * 1024  # one data URL as it travels
    formats: tuple[str, ...] = ("image/png", "image/jpeg")
    max_image_bytes: int | None = None  # one image, decoded
    max_images: int | None = None  # image parts in one request
    max_request_bytes: int | None = None  # all the request's images: data URLs as they travel
    max_request_image_bytes: int | None = None  # all the request's images, decoded

    def problems(self, image: SentImage) -> list[str]:
        found = []
        if not image.format:
            found.append("the image data cannot be decoded")
        elif f"image/{image.format.lower()}" != image.declared:
            found.append(f"declared {image.declared} but the data is {image.format}")
        if image.declared not in self.formats:
            found.append(f"{image.declared} is not a supported format")
        if (self.max_side is not None and max(image.width, image.height) > self.max_side) or (
            self.max_pixels is not None and image.width * image.height > self.max_pixels
        ):
            found.append(f"{image.width}x{image.height} is over the size limit")
        if self.max_url_bytes is not None and image.url_bytes > self.max_url_bytes:
            found.append(f"{image.url_bytes} bytes is over the {self.max_url_bytes}-byte limit")
        if self.max_image_bytes is not None and image.image_bytes > self.max_image_bytes:
            found.append(
                f"the image's {image.image_bytes} bytes are over the {self.max_image_bytes}-byte limit"
            )
        return found

    def request_problems(self, images: list[SentImage]) -> list[str]:
        found = []
        if self.max_images is not None and len(images) > self.max_images:
            found.append(f"{len(images)} images, more than the {self.max_images} a request may carry")
        if self.max_request_bytes is not None and sum(i.url_bytes for i in images) > self.max_request_bytes:
            found.append(f"the images' data URLs are over the {self.max_request_bytes}-byte request limit")
        total = sum(i.image_bytes for i in images)
        if self.max_request_image_bytes is not None and total > self.max_request_image_bytes:
            found.append(
                f"the images' {total} bytes are over the {self.max_request_image_bytes}-byte request limit"
            )
        return found


# Each provider's image limits as its own documentation states them, for a test server that
# refuses what the provider would refuse. Written from the pages, not from our dialects, so
# a dialect's limits are checked against them (tests/unit/providers/test_image_limits.py).
DOCUMENTED_IMAGE_RULES: dict[str, ImageRules] = {
    # https://developers.openai.com/api/docs/guides/images ("Image input requirements"):
    # PNG, JPEG, WEBP, non-animated GIF; 20 MB an image; 500 images and 50 MB of image
    # bytes a request. No pixel limit (larger images are scaled down by the service).
    "openai": ImageRules(
        max_side=None,
        max_pixels=None,
        max_url_bytes=None,
        formats=("image/png", "image/jpeg", "image/webp", "image/gif"),
        max_image_bytes=20_000_000,
        max_images=500,
        max_request_image_bytes=50_000_000,
    ),
    # https://api-docs.deepseek.com/guides/vision: JPEG, PNG, GIF, WebP, told from the bytes;
    # base64 data URLs count toward the 48 MiB request body.
    "deepseek": ImageRules(
        max_side=None,
        max_pixels=None,
        max_url_bytes=None,
        formats=("image/png", "image/jpeg", "image/webp", "image/gif"),
        max_request_bytes=48 * 1024 * 1024,
    ),
    # GLM-4V / GLM-4V-Plus as Zhipu's API reference is reproduced by third parties (not found
    # on docs.bigmodel.cn): JPG/PNG, 5 MB and 6000 x 6000 pixels an image, 5 images a request.
    "glm": ImageRules(
        max_side=6_000,
        max_pixels=6_000 * 6_000,
        max_url_bytes=None,
        max_image_bytes=5 * 1024 * 1024,
        max_images=5,
    ),
    # https://platform.moonshot.ai/docs/guide/use-kimi-vision-model: PNG, JPEG, WEBP, GIF as
    # base64 data URLs; no size or count limit stated.
    "kimi": ImageRules(
        max_side=None,
        max_pixels=None,
        max_url_bytes=None,
        formats=("image/png", "image/jpeg", "image/webp", "image/gif"),
    ),
}


Responder = Callable[[RecordedRequest], Reply]


class _QuietHTTPServer(ThreadingHTTPServer):
    """Clients that hang up (timeouts, Ctrl-C, keep-alive closes) are normal here, not errors."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


# In `embedding_failures`: the request's connection is cut without an answer.
DROP_CONNECTION = 0


class ScriptedOpenAIServer:
    """Start with `start()` (or as a context manager); `base_url` is what the client needs."""

    def __init__(
        self,
        replies: list[Reply] | None = None,
        responder: Responder | None = None,
        default_text: str = "OK",
        model: str = "test-model",
        strict_history: bool = False,
        keep_requests: bool = True,
        dialect: str = "generic",
        context_window: int | None = None,
        prefix_cache: bool = False,
        summaries: Responder | None = None,
        images: ImageRules | None = None,
    ) -> None:
        self._script: list[Reply] = list(replies or [])
        # A vision endpoint checks each image part against these rules; without them the
        # endpoint is text-only and refuses any image part, as a text model's API does.
        self.images = images
        # Answers compaction's summary requests apart from the script, so a scripted
        # conversation keeps its order however often the history is cut.
        self.summaries = summaries
        self.strict_history = strict_history
        self.dialect = dialect
        self.wire = load_dialect(dialect)
        self.context_window = context_window
        self.prefix_cache = prefix_cache
        self._prompts: list[str] = []  # recent prompts as text, for the prefix cache
        self.refusals: list[tuple[int, str]] = []  # (status, message) of every dialect refusal
        # A soak of thousands of requests keeps only the counts below, not every body.
        self.keep_requests = keep_requests
        self.chat_request_count = 0
        self.invalid_history_count = 0
        self.responder = responder
        self.default_text = default_text
        self.model = model
        self.requests: list[RecordedRequest] = []
        # /embeddings requests with a text containing `hold_embeddings_of` wait until
        # `embeddings_released` is set (an endpoint that hangs on them).
        self.hold_embeddings_of = ""
        self.embeddings_released = threading.Event()
        # /embeddings requests of more than `slow_embeddings_over` texts are answered after
        # `slow_embedding_seconds` (an endpoint on a loaded machine: big batches are slow).
        self.slow_embeddings_over = 0
        self.slow_embedding_seconds = 0.0
        # HTTP statuses the next /embeddings requests are answered with, one each, first first;
        # DROP_CONNECTION: the request's connection is cut (RST) without an answer.
        self.embedding_failures: list[int] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> ScriptedOpenAIServer:
        handler = _make_handler(self)
        self._httpd = _QuietHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.embeddings_released.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    # -- script ----------------------------------------------------------------------
    def add(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    @property
    def pending_replies(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._script)

    def clear_script(self) -> None:
        with self._lock:
            self._script.clear()

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def invalid_history_requests(self) -> list[RecordedRequest]:
        """Chat requests a provider would refuse: a tool call without its answer, or an orphan answer."""
        return [r for r in self.chat_requests if r.history_problems]

    def _next_reply(self, request: RecordedRequest) -> Reply:
        if self.summaries is not None and is_summary_request(request.messages):
            return self.summaries(request)
        with self._lock:
            if self._script:
                return self._script.pop(0)
        if self.responder is not None:
            return self.responder(request)
        return Reply(text=self.default_text)

    def _record(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> RecordedRequest:
        request = RecordedRequest(path=path, body=body, headers=headers)
        is_chat = path.endswith("/chat/completions")
        invalid = is_chat and bool(request.history_problems)
        with self._lock:
            self.chat_request_count += is_chat
            self.invalid_history_count += invalid
            if self.keep_requests:
                self.requests.append(request)
        return request

    def wait_stopped(self, seconds: float) -> bool:
        return self._stop.wait(seconds)

    # -- the provider's view of a request ---------------------------------------------
    def count_tokens(self, text: str) -> int:
        """Tokens as the provider counts them: its per-script rule, else 4 characters a token."""
        if self.wire is None:
            return max(1, math.ceil(len(text) / 4))
        rule = self.wire["tokens_per_char"]
        cjk = sum(len(run) for run in _CJK_RUN.findall(text))
        return math.ceil(cjk * rule["cjk"] + (len(text) - cjk) * rule["other"])

    def prompt_text(self, body: dict[str, Any]) -> str:
        """The prompt as the provider tokenizes it: tool definitions, then every message as sent."""
        parts = [json.dumps(body.get("tools") or [], ensure_ascii=False)]
        parts += [json.dumps(m, ensure_ascii=False) for m in body.get("messages", [])]
        return "".join(parts)

    def cached_prefix_tokens(self, text: str) -> int:
        """Tokens of `text` a prefix cache serves: its longest prefix shared with a recent prompt."""
        with self._lock:
            earlier = list(self._prompts)
            self._prompts = [*self._prompts[-7:], text]
        shared = 0
        for previous in earlier:
            limit = min(len(previous), len(text))
            common = 0
            while common < limit and previous[common] == text[common]:
                common += 1
            shared = max(shared, common)
        return (self.count_tokens(text[:shared]) // CACHE_BLOCK) * CACHE_BLOCK

    def image_refusal(self, request: RecordedRequest) -> str | None:
        """Why the endpoint refuses the request's image parts, if it does."""
        sent = request.image_parts
        if not sent:
            return None
        if self.images is None:
            return f"The model {self.model} does not support image input."
        if self.images is not None and sent:
            too_many = self.images.request_problems(sent)
            if too_many:
                return "Invalid request: " + "; ".join(too_many)
        for image in sent:
            if image.role != "user":
                return (
                    f"image_url parts are only allowed in user messages (found one in a {image.role} message)"
                )
            problems = self.images.problems(image)
            if problems:
                return "Invalid image: " + "; ".join(problems)
        return None

    def refusal(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """The documented error this dialect answers `body` with, if any."""
        wire = self.wire
        if wire is None:
            return None
        thinking = (body.get("thinking") or {}).get("type", "enabled" if wire["thinking_default"] else "")
        messages = body.get("messages", [])
        if wire["strict"] == "kimi_tool_calls" and "thinking" in body and "reasoning_effort" in body:
            return self._error("thinking_and_effort")
        if wire["strict"] == "deepseek_tool_turns" and thinking == "enabled":
            positions = _tool_turn_positions(messages)
            if any(not isinstance(messages[i].get("reasoning_content"), str) for i in positions):
                return self._error("reasoning_missing")
        if wire["strict"] == "kimi_tool_calls" and thinking == "enabled":
            for index, message in enumerate(messages):
                calls = message.get("role") == "assistant" and message.get("tool_calls")
                if calls and not isinstance(message.get("reasoning_content"), str):
                    return self._error("reasoning_missing", index=index)
        search = wire.get("web_search")
        if (
            search == "enable_search"
            and "enable_search" in body
            and not isinstance(body["enable_search"], bool)
        ):
            return self._error("web_search_invalid")
        if search == "builtin_function":
            builtins = [t for t in body.get("tools") or [] if t.get("type") == "builtin_function"]
            if any((t.get("function") or {}).get("name") != "$web_search" for t in builtins):
                return self._error("web_search_invalid")
            if builtins and thinking == "enabled":
                return self._error("web_search_thinking")
            calls = {
                call.get("id"): call.get("function") or {}
                for message in messages
                if message.get("role") == "assistant"
                for call in message.get("tool_calls") or []
            }
            for message in messages:
                call = calls.get(message.get("tool_call_id")) if message.get("role") == "tool" else None
                if (
                    call
                    and call.get("name") == "$web_search"
                    and not _same_json(message.get("content"), call.get("arguments"))
                ):
                    return self._error("web_search_echo")
        if search == "tool":
            for tool in body.get("tools") or []:
                options = tool.get("web_search") if tool.get("type") == "web_search" else {}
                if not isinstance(options, dict) or not isinstance(options.get("enable", True), bool):
                    return self._error("web_search_invalid")
        if self.context_window is not None:
            requested = self.count_tokens(self.prompt_text(body))
            if requested > self.context_window:
                return self._error("context_length", window=self.context_window, requested=requested)
        return None

    def _error(self, name: str, **values: Any) -> tuple[int, dict[str, Any]]:
        error = (self.wire or {}).get("errors", {}).get(name) or {
            "status": 400,
            "body": {"error": {"message": f"refused: {name}", "type": "invalid_request_error"}},
        }
        text = json.dumps(error["body"], ensure_ascii=False)
        for key, value in values.items():
            text = text.replace(f"${key}", str(value))
        body = json.loads(text)
        self.refusals.append((error["status"], str(body.get("error", {}).get("message", ""))))
        return error["status"], body


def _tool_turn_positions(messages: list[dict[str, Any]]) -> list[int]:
    """Assistant messages of the user turns (between user messages) in which tools were called."""
    positions: list[int] = []
    turn: list[int] = []
    called = False
    for index, message in enumerate([*messages, {"role": "user"}]):
        if message.get("role") == "user":
            if called:
                positions += turn
            turn, called = [], False
        elif message.get("role") == "assistant":
            turn.append(index)
            called = called or bool(message.get("tool_calls"))
    return positions


def estimate_tokens(payload: Any) -> int:
    """Rough token count of a JSON payload (4 characters a token), for scripted usage."""
    return max(1, math.ceil(len(json.dumps(payload, ensure_ascii=False)) / 4))


def hash_embedding(text: str, dimensions: int = 64) -> list[float]:
    """A deterministic unit vector per text: equal texts embed equally, others differ."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    values = [(digest[i % len(digest)] - 127.5) / 127.5 for i in range(dimensions)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def _make_handler(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            return  # keep test output clean

        # -- routing -----------------------------------------------------------------
        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send_json(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send_json(400, {"error": {"message": "invalid JSON body"}})
                return
            request = server._record(self.path, body, dict(self.headers.items()))
            if self.path.endswith("/chat/completions"):
                self._chat(request)
            elif self.path.endswith("/embeddings"):
                self._embeddings(body)
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})

        # -- chat --------------------------------------------------------------------
        def _chat(self, request: RecordedRequest) -> None:
            problems = request.history_problems
            if server.strict_history and problems:
                self._send_json(
                    400,
                    {
                        "error": {
                            "message": "Invalid 'messages': an assistant message with 'tool_calls' must be "
                            "followed by tool messages responding to each 'tool_call_id' "
                            f"({'; '.join(problems)})",
                            "type": "invalid_request_error",
                            "code": None,
                        }
                    },
                )
                return
            refused = server.refusal(request.body)
            if refused is not None:
                self._send_json(*refused)
                return
            image_problem = server.image_refusal(request)
            if image_problem is not None:
                server.refusals.append((400, image_problem))
                self._send_json(400, {"error": {"message": image_problem, "type": "invalid_request_error"}})
                return
            reply = server._next_reply(request)
            if reply.hang:
                server.wait_stopped(600)
                return
            if reply.status != 200:
                headers = {}
                if reply.retry_after is not None:
                    headers["Retry-After"] = f"{reply.retry_after:g}"
                kind = {401: "invalid_request_error", 404: "model_not_found", 429: "rate_limit"}
                self._send_json(
                    reply.status,
                    {
                        "error": {
                            "message": reply.error_message,
                            "type": kind.get(reply.status, "server_error"),
                            "code": kind.get(reply.status),
                        }
                    },
                    headers,
                )
                return
            usage = self._usage(request, reply)
            if request.body.get("stream"):
                self._stream(request, reply, usage)
            else:
                self._send_json(200, self._completion(reply, usage, request))

        def _usage(self, request: RecordedRequest, reply: Reply) -> dict[str, Any]:
            text = server.prompt_text(request.body)
            shared = server.cached_prefix_tokens(text) if server.prefix_cache else 0
            prompt = reply.prompt_tokens
            if prompt is None:
                prompt = (
                    server.count_tokens(text)
                    if server.wire
                    else estimate_tokens(request.body.get("messages", []))
                )
            cached = reply.cached_tokens if reply.cached_tokens is not None else min(shared, prompt)
            reasoning = reply.reasoning_tokens
            if reasoning is None:
                reasoning = server.count_tokens(reply.reasoning) if reply.reasoning else 0
            completion = reply.completion_tokens
            if completion is None:
                completion = (
                    estimate_tokens(reply.text)
                    + sum(estimate_tokens(c.arguments_json()) for c in reply.tool_calls)
                    + reasoning
                )
            if server.wire is not None:
                figures = {
                    "$prompt": prompt,
                    "$completion": completion,
                    "$total": prompt + completion,
                    "$cached": cached,
                    "$uncached": prompt - cached,
                    "$reasoning": reasoning,
                }
                template = json.dumps(server.wire["usage"])
                for name, value in figures.items():
                    template = template.replace(f'"{name}"', str(value))
                return json.loads(template)
            usage: dict[str, Any] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached},
            }
            if reply.reasoning:
                usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
            return usage

        def _web_sources(self, reply: Reply, request: RecordedRequest | None = None) -> dict[str, Any]:
            """The top-level field listing the pages the search used, where the dialect has one
            and the request asked for the search (GLM: a web_search tool with search_result)."""
            if not reply.web_sources or not server.wire or server.wire.get("web_search") != "tool":
                return {}
            body = request.body if request is not None else {}
            asked = any(
                tool.get("type") == "web_search" and (tool.get("web_search") or {}).get("search_result")
                for tool in body.get("tools") or []
            )
            return {"web_search": reply.web_sources} if asked else {}

        def _reasoning_field(self) -> str:
            return server.wire["reasoning_field"] if server.wire else "reasoning_content"

        def _reasoning_delta(self, piece: str) -> dict[str, Any]:
            delta: dict[str, Any] = {self._reasoning_field(): piece}
            if server.wire and server.wire.get("details_field"):
                block = {"type": "reasoning.text", "text": piece, "format": "unknown", "index": 0}
                delta[server.wire["details_field"]] = [block]
            return delta

        def _completion(
            self, reply: Reply, usage: dict[str, Any], request: RecordedRequest | None = None
        ) -> dict[str, Any]:
            message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
            if reply.reasoning:
                message.update(self._reasoning_delta(reply.reasoning))
            if reply.tool_calls:
                message["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments_json()},
                    }
                    for c in reply.tool_calls
                ]
            return {
                "id": "chatcmpl-" + uuid.uuid4().hex[:12],
                "object": "chat.completion",
                "created": int(time.time()),
                "model": server.model,
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                    }
                ],
                "usage": usage,
                **self._web_sources(reply, request),
            }

        def _stream(self, request: RecordedRequest, reply: Reply, usage: dict[str, Any]) -> None:
            completion_id = "chatcmpl-" + uuid.uuid4().hex[:12]
            created = int(time.time())

            def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
                return {
                    "id": completion_id,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": server.model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }

            size = max(1, reply.chunk_chars)
            events: list[dict[str, Any]] = [
                {**chunk({"role": "assistant", "content": ""}), **self._web_sources(reply, request)}
            ]
            thought = max(size, 16)  # reasoning runs long: bigger pieces keep the stream short
            events += [
                chunk(self._reasoning_delta(reply.reasoning[i : i + thought]))
                for i in range(0, len(reply.reasoning), thought)
            ]
            text_events = [
                chunk({"content": reply.text[i : i + size]}) for i in range(0, len(reply.text), size)
            ]
            head = list(events)  # what comes before the text (the role, reasoning)
            events += text_events
            for index, call in enumerate(reply.tool_calls):
                args = call.arguments_json()
                events.append(
                    chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": index,
                                    "id": call.id,
                                    "type": "function",
                                    "function": {"name": call.name, "arguments": ""},
                                }
                            ]
                        }
                    )
                )
                events += [
                    chunk({"tool_calls": [{"index": index, "function": {"arguments": args[i : i + size]}}]})
                    for i in range(0, len(args), size)
                ]
            events.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
            if reply.raw_stream is not None:
                events = list(reply.raw_stream)
            elif (request.body.get("stream_options") or {}).get("include_usage"):
                events.append(
                    {
                        "id": completion_id,
                        "object": "chat.completion.chunk",
                        "created": created,
                        "model": server.model,
                        "choices": [],
                        "usage": usage,
                    }
                )

            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            sent: Iterable[dict[str, Any]] = (
                _endless(head, text_events or [chunk({"content": "."})]) if reply.endless else events
            )
            try:
                for number, event in enumerate(sent):
                    if reply.endless and server.wait_stopped(0):
                        return
                    if reply.cut_after_chunks is not None and number >= reply.cut_after_chunks:
                        self._drop_connection()
                        return
                    if reply.stall_after_chunks is not None and number >= reply.stall_after_chunks:
                        server.wait_stopped(600)
                        return
                    self.wfile.write(f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode())
                    self.wfile.flush()
                    if reply.chunk_delay:
                        time.sleep(reply.chunk_delay)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return  # the client went away (e.g. the user pressed Ctrl-C)
            self.close_connection = True

        def _drop_connection(self) -> None:
            # RST instead of FIN, the way a failing proxy cuts a stream.
            self.connection.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
            self.connection.close()
            self.close_connection = True

        # -- embeddings -------------------------------------------------------------
        def _embeddings(self, body: dict[str, Any]) -> None:
            inputs = body.get("input", [])
            if isinstance(inputs, str):
                inputs = [inputs]
            if server.hold_embeddings_of and any(server.hold_embeddings_of in str(t) for t in inputs):
                server.embeddings_released.wait()
            if server.slow_embeddings_over and len(inputs) > server.slow_embeddings_over:
                time.sleep(server.slow_embedding_seconds)
            with server._lock:
                failure = server.embedding_failures.pop(0) if server.embedding_failures else None
            if failure == DROP_CONNECTION:
                self._drop_connection()
                return
            if failure is not None:
                self._send_json(
                    failure, {"error": {"message": f"failed with {failure}", "type": "server_error"}}
                )
                return
            data = [
                {"object": "embedding", "index": i, "embedding": hash_embedding(str(text))}
                for i, text in enumerate(inputs)
            ]
            tokens = sum(estimate_tokens(t) for t in inputs)
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": body.get("model", ""),
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                },
            )

        # -- plumbing ----------------------------------------------------------------
        def _send_json(
            self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                return

    return Handler


def _same_json(a: Any, b: Any) -> bool:
    """Two JSON texts with the same value (Kimi wants $web_search's arguments echoed unchanged)."""
    try:
        return json.loads(a) == json.loads(b)
    except (TypeError, ValueError):
        return False
