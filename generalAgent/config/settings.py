"""Typed settings, read once from the environment and `.env`, then passed down.

Every group is its own pydantic model so that each setting keeps the flat, documented
environment name (`MODEL_NAME`, `MAX_MESSAGE_HISTORY`, `CHUNK_MAX_SIZE`, ...) that
`.env.example` lists; `load_settings` builds them all and turns a validation error
into one line naming the variable and what it accepts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)

from generalAgent.config.errors import SettingProblem, validation_problem
from generalAgent.config.paths import PROJECT_ROOT, anchored_paths, builtin_path
from generalAgent.config.prices import Price, parse_prices
from generalAgent.config.sources import (
    DEFAULT_SOURCE,
    ConfigFiles,
    SettingSource,
    raw_values,
    setting_sources,
    user_data_dir,
)
from generalAgent.config.trust import FolderTrust, folder_trust


def _blank_is_unset(value: Any) -> Any:
    """`KEY=` (as .env.example leaves it) means unset, not an empty name or key."""
    return None if isinstance(value, str) and not value.strip() else value


OptionalText = Annotated[str | None, BeforeValidator(_blank_is_unset)]
OptionalSecret = Annotated[SecretStr | None, BeforeValidator(_blank_is_unset)]
OptionalPath = Annotated[Path | None, BeforeValidator(_blank_is_unset)]


def _blank_is_data_home(value: Any) -> Any:
    """`DATA_DIR=` means the default data home, as every other blank setting means unset."""
    return user_data_dir() if isinstance(value, str) and not value.strip() else value


DataFolder = Annotated[Path, BeforeValidator(_blank_is_data_home)]


class SettingsError(Exception):
    """A setting has a value the program cannot use; the message is one line for the user
    (`problem`: its parts, for the terminal to say in the UI language)."""

    def __init__(self, message: str, problem: SettingProblem | None = None) -> None:
        super().__init__(message)
        self.problem = problem


class SettingsGroup(BaseModel):
    """One group of settings. The values come from `load_settings` (config/sources.py:
    `raw_values`), not from the model: reading the environment and the files ourselves,
    once for all groups, costs a fraction of pydantic-settings' import and its eight reads."""

    # Unknown names in a .env are other programs' business; defaults are validated too.
    model_config = ConfigDict(extra="ignore", validate_default=True)


class ModelSettings(SettingsGroup):
    """The OpenAI-compatible endpoint. Standard names, so every provider works by base URL."""

    model_name: OptionalText = Field(default=None, description="Model id, e.g. gpt-4.1-mini")
    openai_api_key: OptionalSecret = Field(default=None, description="API key")
    openai_base_url: OptionalText = Field(
        default=None, description="Endpoint, e.g. https://api.deepseek.com/v1"
    )
    model_timeout: float = Field(default=120.0, gt=0, le=3600, description="Seconds per request")
    model_max_retries: int = Field(default=2, ge=0, le=10, description="Retries on 429/5xx/connection errors")
    # One model call's answer, bounded while it streams (graph/cancellation.py): a 150 MB
    # answer took 1.7 GB of memory and was stored; 90 s of streaming was accepted too.
    model_answer_max_chars: int = Field(
        default=2_000_000,
        ge=10_000,
        le=100_000_000,
        description="Largest answer (text, reasoning and tool-call arguments, characters) of one model call; stopped there",
    )
    model_call_max_seconds: float = Field(
        default=900.0,
        gt=0,
        le=86_400,
        description="Longest one model call may stream its answer (seconds); stopped there",
    )
    model_temperature: float | None = Field(
        default=None, ge=0, le=2, description="Sampling temperature; unset = provider default"
    )
    # The dialect of the wire format (docs/providers.md): where reasoning arrives, when it
    # must go back, how thinking is switched, where cache hits are reported.
    model_provider: (
        Literal["openai", "deepseek", "qwen", "kimi", "glm", "vllm", "ollama", "openrouter", "generic"] | None
    ) = Field(default=None, description="Provider dialect; unset = recognised from OPENAI_BASE_URL")
    model_thinking: Literal["on", "off", "default"] = Field(
        default="default", description="Thinking of reasoning models: on, off, or the provider's default"
    )
    model_reasoning_effort: OptionalText = Field(
        default=None,
        description="How hard a reasoning model thinks, e.g. low, medium, high, max (mapped per provider)",
    )
    model_context_window: int | None = Field(
        default=None,
        ge=1_000,
        le=20_000_000,
        description="The model's context window in tokens; unset = known table",
    )
    # Whether the model is sent images (docs/documents.md): auto = the provider table's
    # list of vision models; on/off for a model the table does not know or gets wrong.
    model_vision: Literal["auto", "on", "off"] = Field(
        default="auto", description="Send images to the model: auto (known vision models), on, off"
    )
    show_reasoning: Literal["collapsed", "full", "off"] = Field(
        default="collapsed", description="Reasoning in the terminal: one line, in full, or not at all"
    )
    model_choices: OptionalText = Field(
        default=None,
        description="Other models /model can switch to, comma-separated (same endpoint, key and provider)",
    )
    model_prices: OptionalText = Field(
        default=None,
        description="Prices per million tokens for the cost line: model=input/cached input/output, "
        "comma-separated, e.g. deepseek-chat=2/0.5/8",
    )
    model_price_currency: str = Field(
        default="$", max_length=8, description="Currency sign of MODEL_PRICES in the cost line, e.g. ¥"
    )

    @field_validator("model_prices", mode="after")
    @classmethod
    def _readable_prices(cls, value: str | None) -> str | None:
        parse_prices(value)  # refuses a malformed table at start-up, with the reason
        return value

    @property
    def choices(self) -> tuple[str, ...]:
        """The models /model offers: the configured one first, then MODEL_CHOICES."""
        names = [self.model_name or "", *(n.strip() for n in (self.model_choices or "").split(","))]
        return tuple(dict.fromkeys(n for n in names if n))

    @property
    def prices(self) -> dict[str, Price]:
        return parse_prices(self.model_prices)

    @field_validator("model_provider", "model_thinking", "show_reasoning", mode="before")
    @classmethod
    def _lower_choice(cls, value: Any) -> Any:
        value = _blank_is_unset(value)
        return value.strip().lower() if isinstance(value, str) else value

    def missing(self) -> list[str]:
        """Names of the variables that must still be set before the model can be called."""
        missing = []
        if not self.model_name:
            missing.append("MODEL_NAME")
        if self.openai_api_key is None:
            missing.append("OPENAI_API_KEY")
        return missing


class GovernanceSettings(SettingsGroup):
    """Limits that keep a session bounded: history length, context size, tool loops."""

    max_message_history: int = Field(
        default=40, ge=10, le=100, description="Messages kept in the prompt before a cut"
    )
    history_low_water: float = Field(
        default=0.5,
        ge=0.2,
        le=0.9,
        description="After a cut, keep this fraction of MAX_MESSAGE_HISTORY",
    )
    max_context_tokens: int | None = Field(
        default=None,
        ge=2_000,
        le=20_000_000,
        description="Prompt token budget of the history; unset = 3/4 of the model's context window",
    )
    compact_history: bool = Field(
        default=True,
        description="At a cut, summarise the turns that leave the context (one model call) instead of only dropping them",
    )
    summary_max_tokens: int = Field(
        default=2_000, ge=200, le=20_000, description="Size the summary of earlier turns is kept within"
    )
    agents_md_max_chars: int = Field(
        default=20_000,
        ge=0,
        le=200_000,
        description="Characters of AGENTS.md (yours and the project's together) added to the system prompt; 0 = none",
    )
    max_loops: int = Field(
        default=30, ge=1, le=500, description="Model calls per turn before a forced answer"
    )
    subagent_max_loops: int = Field(
        default=15, ge=1, le=500, description="Default loop budget of a delegated sub-agent"
    )


class PathSettings(SettingsGroup):
    """Where runtime data lives, and the folders of skills, agent profiles and knowledge."""

    # One data home whatever .env was found (config/data_home.py): a folder's own store only
    # when its .env asks for one (DATA_DIR=data, relative to that file).
    data_dir: DataFolder = Field(
        default_factory=user_data_dir,
        description="Sessions, indexes, the knowledge base and workspaces; unset = the user data folder "
        "(~/.local/share/generalagent on Linux); DATA_DIR=data in a folder's .env keeps a project-local store",
    )
    # Several replicas of a served deployment serve one thread in turn: its uploads and
    # outputs must be where each of them reads (a shared mount), not in one DATA_DIR.
    shared_workspaces_dir: OptionalPath = Field(
        default=None,
        description="The sessions' workspaces (uploads, outputs) in a folder every replica mounts, "
        "e.g. /mnt/agent/workspaces; unset = DATA_DIR/workspaces",
    )
    skills_dir: Path = Field(default=builtin_path("skills"), description="Skill folders (<id>/SKILL.md)")
    agents_dir: Path = Field(default=builtin_path("agents"), description="Sub-agent profiles (<name>.md)")
    knowledge_dir: Path = Field(
        default=builtin_path("knowledge"), description="Built-in knowledge (<domain>/*.md)"
    )
    user_agents_file: OptionalPath = Field(
        default=None,
        description="Your own AGENTS.md, read into every session; unset = AGENTS.md in the user-level "
        "config folder, beside its .env (see `generalagent config`)",
    )
    tools_config: Path = Field(
        default=PROJECT_ROOT / "generalAgent" / "config" / "tools.yaml",
        description="The tool tiers file (copy it to enable or hide tools)",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="WARNING", description="Level of DATA_DIR/logs/generalagent.log"
    )
    # A secret: it usually holds the database password, so it is never shown or logged.
    database_url: OptionalSecret = Field(
        default=None,
        description="PostgreSQL for conversation checkpoints, e.g. postgresql://user:pass@host:5432/db "
        "(needs the postgres extra); unset = SQLite in DATA_DIR/sessions.db",
    )
    # A secret, as DATABASE_URL: it usually holds the database password.
    search_database_url: OptionalSecret = Field(
        default=None,
        description="PostgreSQL for the documents and knowledge base a team shares (index, search, search_file, "
        "search_folder, kb, the knowledge tools), e.g. "
        "postgresql://user:pass@host:5432/db (needs the postgres extra); unset = DATA_DIR/indexes.db",
    )
    search_user: str = Field(
        default="",
        description="Whose private space notes and documents go to in a shared search store; "
        "unset = the terminal's one user (a served deployment takes the user from its authentication)",
    )
    search_teams: str = Field(
        default="",
        description="Team spaces this user searches and may add to (comma-separated, e.g. team,ops); "
        "unset = none",
    )

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @property
    def log_file(self) -> Path:
        return self.data_dir / "logs" / "generalagent.log"

    @property
    def sessions_db(self) -> Path:
        return self.data_dir / "sessions.db"

    @property
    def indexes_db(self) -> Path:
        return self.data_dir / "indexes.db"

    @property
    def workspaces_dir(self) -> Path:
        return self.shared_workspaces_dir or self.data_dir / "workspaces"

    @property
    def input_history_file(self) -> Path:
        return self.data_dir / "input_history"


class DocumentSettings(SettingsGroup):
    """Document extraction, chunking and search."""

    # Text files: read whole under this size, else preview.
    text_file_max_size: int = Field(default=100_000, ge=1_000, description="Bytes read in full")
    text_preview_chars: int = Field(default=50_000, ge=1_000, description="Preview of big texts")
    pdf_preview_pages: int = Field(default=10, ge=1, description="Pages in a PDF preview")
    pdf_preview_chars: int = Field(default=30_000, ge=1_000, description="Chars in a PDF preview")
    # Off reads a PDF as its text layer only (tables as loose lines), as before tables were read.
    pdf_tables: bool = Field(default=True, description="Read PDF tables as grids")
    # A chat started in a trusted folder indexes its documents at once, in the background
    # (documents/background_indexing.py), so the first question does not wait for it.
    background_indexing: bool = Field(default=True, description="Index a trusted folder when the chat starts")
    docx_preview_chars: int = Field(default=30_000, ge=1_000, description="Chars, DOCX preview")
    xlsx_preview_sheets: int = Field(default=3, ge=1, description="Sheets in an XLSX preview")
    xlsx_preview_chars: int = Field(default=20_000, ge=1_000, description="Chars, XLSX preview")
    pptx_preview_slides: int = Field(default=15, ge=1, description="Slides in a PPTX preview")
    pptx_preview_chars: int = Field(default=25_000, ge=1_000, description="Chars, PPTX preview")

    # 400 chars is ~100-130 Chinese tokens, inside the 100-300 token range that retrieves well;
    # 20% overlap keeps a fact that straddles a boundary whole in one of the two chunks.
    chunk_max_size: int = Field(default=400, ge=100, le=4_000, description="Max chunk chars")
    chunk_overlap: int = Field(default=80, ge=0, le=1_000, description="Overlap between chunks")
    chunk_min_size: int = Field(default=50, ge=1, le=1_000, description="Smaller pieces merge")
    xlsx_rows_per_chunk: int = Field(default=20, ge=1, le=1_000, description="Rows per chunk")

    use_jieba: bool = Field(default=True, description="Segment Chinese with jieba")
    search_max_results_default: int = Field(default=5, ge=1, le=50, description="Hits per search")
    index_stale_threshold_hours: int = Field(
        default=24, ge=1, description="Re-index a document after this many hours"
    )
    index_max_file_mb: int = Field(
        default=200, ge=1, le=4_096, description="Larger files are refused by the indexer (MB)"
    )
    # Scanned PDF pages are read by offline OCR when the `ocr` extra is installed.
    ocr_enabled: bool = Field(default=True, description="Read PDF pages without text by OCR")
    # OCR takes seconds a page: bounds so that a PDF of thousands of image pages cannot
    # keep the machine busy for hours. A tool call of the agent (search_file, read_file)
    # has the smaller budget: the user is waiting and did not ask for a long OCR.
    ocr_max_pages_per_call: int = Field(
        default=20, ge=0, le=10_000, description="Pages one tool call of the agent may read by OCR"
    )
    ocr_max_pages_per_document: int = Field(
        default=300, ge=0, le=100_000, description="Pages of one document read by OCR at most"
    )

    # Content budgets (search/budgets.py): what one search may put into the model's context.
    # A 500-page book answers with its best passages, never with itself.
    max_chunk_content_size: int = Field(
        default=1_500, ge=100, le=20_000, description="Chars of one chunk in a search result"
    )
    max_matched_chunks: int = Field(
        default=5, ge=1, le=50, description="Matched chunks per result (or hits per file)"
    )
    max_context_chunks: int = Field(
        default=3, ge=0, le=20, description="Neighbouring chunks shown per result as context"
    )
    max_result_content_size: int = Field(
        default=30_000,
        ge=1_000,
        le=1_000_000,
        description="Chars per result (search_file: per call)",
    )
    max_total_content_size: int = Field(
        default=100_000, ge=1_000, le=5_000_000, description="Chars per search_knowledge call"
    )
    content_preview_chars: int = Field(
        default=2_000, ge=100, le=100_000, description="Chars of an item's content previewed"
    )
    whole_item_max_chars: int = Field(
        default=5_000, ge=0, le=100_000, description="Items shorter than this come back whole"
    )

    # Semantic retrieval, fused with the lexical ranking by reciprocal rank fusion so a weak
    # model cannot hide exact matches. On whenever embeddings are available: the provider's
    # /embeddings (EMBEDDING_MODEL=auto picks its model from search/embeddings.py's table)
    # or a model pulled with `generalagent models pull`.
    embedding_model: OptionalText = Field(
        default="auto",
        description="Model id for the OpenAI-compatible /embeddings endpoint; auto = the provider's; empty = off",
    )
    embedding_local_model: OptionalText = Field(
        default=None,
        description="Local model: a pulled model's name, a model folder, or an installed package name",
    )
    embedding_base_url: OptionalText = Field(
        default=None, description="Endpoint for embeddings; unset = OPENAI_BASE_URL"
    )
    embedding_api_key: OptionalSecret = Field(
        default=None, description="Key for embeddings; unset = OPENAI_API_KEY"
    )
    embedding_batch_size: int = Field(default=32, ge=1, le=2_048, description="Texts per embedding request")
    embedding_timeout: float = Field(
        default=60.0, gt=0, le=3_600, description="Seconds per embedding request"
    )
    embedding_models_dir: OptionalText = Field(
        default=None,
        description="Where `generalagent models pull` keeps local models; unset = the user's cache folder",
    )
    # pgvector's HNSW search breadth in a PostgreSQL search store (hnsw.ef_search): candidates
    # kept while walking the graph. Wider finds more of the true nearest and costs time
    # (docs/benchmarks.md, bench/vector_postgres.py); never below the number asked for.
    pgvector_ef_search: int = Field(
        default=100,
        ge=10,
        le=1_000,
        description="pgvector HNSW search breadth in a PostgreSQL search store: higher = better recall, slower",
    )
    # The variable huggingface_hub reads too, so a mirror set for other tools is used here.
    hf_endpoint: str = Field(
        default="https://huggingface.co",
        description="Hub that `models pull` downloads from, e.g. https://hf-mirror.com",
    )

    @field_validator("chunk_overlap")
    @classmethod
    def _overlap_below_max(cls, value: int, info: Any) -> int:
        max_size = info.data.get("chunk_max_size", 400)
        if value >= max_size // 2:
            raise ValueError(f"must be less than half of CHUNK_MAX_SIZE ({max_size // 2})")
        return value


class ToolSettings(SettingsGroup):
    """Limits and permissions of the tools: what they may reach, and what asks the user first."""

    fetch_timeout: float = Field(
        default=20.0,
        gt=0,
        le=300,
        description="Seconds fetch_web may take for a page, redirects and download included",
    )
    fetch_max_bytes: int = Field(
        default=5_000_000, ge=10_000, le=100_000_000, description="Largest page fetch_web downloads"
    )
    fetch_allow_private: bool = Field(
        default=False, description="Let fetch_web reach loopback and private-network addresses"
    )
    # ~15k tokens of English, ~36k of Chinese: room for a long search result or file page,
    # far below any context window. Search tools fit their answers to it (nothing is cut).
    tool_result_max_chars: int = Field(
        default=60_000,
        ge=5_000,
        le=1_000_000,
        description="Largest tool answer the model receives; longer ones are cut with a note",
    )
    # A call's arguments are stored with the session and re-sent every turn: one huge or
    # deeply nested argument must not grow every later request (graph/tool_arguments.py).
    # 1M characters is beyond what any model writes in one answer.
    tool_argument_max_chars: int = Field(
        default=1_000_000,
        ge=10_000,
        le=100_000_000,
        description="Largest tool-call arguments (characters) the agent accepts; larger calls are refused, not stored",
    )
    tool_argument_max_depth: int = Field(
        default=64,
        ge=8,
        le=200,
        description="Deepest nesting of lists and objects in tool-call arguments; deeper calls are refused",
    )
    # 10,000 calls in one message cost minutes of CPU in approval and the tools node; no
    # task needs more than a few dozen calls at once (the model calls again for more).
    tool_calls_max_per_message: int = Field(
        default=64,
        ge=1,
        le=1_000,
        description="Tool calls run from one model message; the rest are refused with an error naming this setting",
    )
    # Approval is the tools' own policy (docs/security.md); this only relaxes it, per tool.
    auto_approve_tools: OptionalText = Field(
        default=None,
        description="Tools whose calls run without asking, comma-separated (e.g. fetch_web,write_file)",
    )

    # An allow-list, not a deny-list: a secret under a name nobody thought of (a cloud
    # token, a proxy URL with a password) stays out of commands the model writes.
    command_env: str = Field(
        default="PATH,HOME,USER,LOGNAME,SHELL,LANG,LANGUAGE,LC_*,TZ,TMPDIR,TERM",
        description="Environment variables run_bash_command passes on (comma-separated, * wildcards); "
        "all others, API keys included, are left out",
    )

    # web_search (tools/search_backends/): which service answers, chosen by the user; the
    # query goes only there. Bocha and Tavily answer from mainland China, Brave and SearXNG
    # from wherever they are reachable.
    web_search_provider: Literal["none", "searxng", "bocha", "tavily", "brave", "native"] = Field(
        default="none",
        description="Service web_search asks: searxng (SEARXNG_URL), bocha, tavily or brave "
        "(WEB_SEARCH_API_KEY); native = the model provider's own search (Qwen, GLM, Kimi); none = no web search",
    )
    searxng_url: OptionalText = Field(
        default=None,
        description="Your SearXNG instance (its JSON format enabled), e.g. http://localhost:8888",
    )
    web_search_api_key: OptionalSecret = Field(
        default=None, description="API key of the bocha, tavily or brave search API"
    )
    web_search_base_url: OptionalText = Field(
        default=None, description="Another endpoint for the search API (a gateway or proxy); unset = its own"
    )
    web_search_timeout: float = Field(
        default=15.0, gt=0, le=120, description="Seconds one web search may take"
    )
    web_search_max_results: int = Field(
        default=8, ge=1, le=20, description="Results web_search returns at most"
    )

    @property
    def native_search(self) -> bool:
        """The model provider searches by itself (providers/native_search.py)."""
        return self.web_search_provider == "native"

    # Commands, skill scripts and a trusted folder's MCP servers and hooks run in a sandbox
    # where one works (generalAgent/sandbox.py, docs/security.md).
    sandbox: Literal["auto", "required", "off"] = Field(
        default="auto",
        description="Run commands in a sandbox (bubblewrap, macOS sandbox-exec): auto = when one works here, "
        "required = refuse commands without one, off = never",
    )

    @property
    def command_env_names(self) -> tuple[str, ...]:
        return tuple(name.strip() for name in self.command_env.split(",") if name.strip())

    @property
    def auto_approved(self) -> frozenset[str]:
        return frozenset(name.strip() for name in (self.auto_approve_tools or "").split(",") if name.strip())


class MCPSettings(SettingsGroup):
    """Where MCP servers are configured and how long they may take (docs/mcp.md)."""

    mcp_config: OptionalText = Field(
        default=None,
        description="An mcp.json to read instead of the user-level one and the working folder's",
    )
    mcp_startup_timeout: float = Field(
        default=10.0, gt=0, le=300, description="Seconds a server may take to start before it is skipped"
    )
    mcp_call_timeout: float = Field(
        default=60.0,
        gt=0,
        le=3_600,
        description="Seconds one MCP tool call may take (a server's timeout overrides it)",
    )
    # Read as it streams in: a longer answer is cut there, never held whole (tools/mcp/capped_lines.py,
    # capped_http.py).
    mcp_message_max_bytes: int = Field(
        default=16_000_000,
        ge=100_000,
        le=1_000_000_000,
        description="Largest message an MCP server (stdio or HTTP) may send; a longer answer is cut as it arrives",
    )


class InterfaceSettings(SettingsGroup):
    """How the terminal talks to the user."""

    ui_language: Literal["auto", "en", "zh"] = Field(
        default="auto",
        description="Language of the terminal UI; auto = from LC_ALL / LC_MESSAGES / LANG; "
        "a locale tag names one too (zh_CN, zh-CN, zh_Hans, en_US)",
    )

    @field_validator("ui_language", mode="before")
    @classmethod
    def _lower_language(cls, value: Any) -> Any:
        """`zh_CN`, `zh-CN`, `zh_Hans`, `zh_CN.UTF-8` are `zh` (as LANG would say it); `en_US` is `en`."""
        if not isinstance(value, str):
            return value
        tag = value.strip().lower().replace("_", "-").split(".")[0]
        language = tag.split("-")[0]
        if language in {"zh", "en"} or tag == "auto":
            return language
        return value  # refused as typed, naming what is allowed


class ServerSettings(SettingsGroup):
    """Who may use a LangGraph Server deployment (docs/deployment.md); the CLI ignores them."""

    server_api_keys: OptionalSecret = Field(
        default=None,
        description="LangGraph Server: user:key pairs, comma-separated; a request's key names its user",
    )
    server_jwt_secret: OptionalSecret = Field(
        default=None,
        description="LangGraph Server: HS256 secret of the users' JWTs (their sub claim names the user)",
    )
    # Team spaces of the search store (search/store.py): whose documents and notes a user
    # searches besides their own. The user comes from the request's key or token, the teams
    # from here (or the token's `teams` claim), never from the client's request.
    server_teams: OptionalText = Field(
        default=None,
        description="LangGraph Server: team:user pairs, comma-separated (team:alice,team:bob); "
        "a user searches and adds to the spaces of their teams",
    )
    # What a client may switch on with a mention: the discovered tools (tools.yaml) the
    # deployment offers. A shell listed here needs a working sandbox (checked at start-up).
    server_tools: OptionalText = Field(
        default=None,
        description="LangGraph Server: discovered tools its users may @mention, comma-separated "
        "(e.g. run_bash_command); others are refused",
    )
    server_max_tool_calls: int = Field(
        default=50, ge=1, le=10_000, description="LangGraph Server: tool calls one run of a user may make"
    )
    server_max_tool_bytes: int = Field(
        default=5_000_000,
        ge=10_000,
        le=1_000_000_000,
        description="LangGraph Server: bytes of tool results one run of a user may receive",
    )

    def teams_of(self, user: str) -> tuple[str, ...]:
        """The team spaces SERVER_TEAMS makes `user` a member of."""
        pairs = (entry.strip().partition(":") for entry in (self.server_teams or "").split(","))
        return tuple(
            dict.fromkeys(team.strip() for team, _, who in pairs if who.strip() == user and team.strip())
        )

    @property
    def offered_tools(self) -> frozenset[str]:
        return frozenset(name.strip() for name in (self.server_tools or "").split(",") if name.strip())


class RemoteSettings(SettingsGroup):
    """The terminal as a client of a served deployment (`generalagent --server URL`,
    docs/deployment.md): what it proves itself with, and which graph it runs."""

    remote_server_token: OptionalSecret = Field(
        default=None,
        description="With --server: your key or JWT for the served deployment (sent as Authorization: Bearer)",
    )
    remote_server_graph: str = Field(
        default="generalAgent",
        min_length=1,
        description="With --server: the graph (assistant) to run, as the deployment's langgraph.json names it",
    )


GROUPS: dict[str, type[SettingsGroup]] = {
    "model": ModelSettings,
    "governance": GovernanceSettings,
    "paths": PathSettings,
    "documents": DocumentSettings,
    "tools": ToolSettings,
    "mcp": MCPSettings,
    "interface": InterfaceSettings,
    "server": ServerSettings,
    "remote": RemoteSettings,
}


@dataclass(frozen=True)
class Settings:
    """All settings of one process. Built by `load_settings`; never mutated."""

    model: ModelSettings
    governance: GovernanceSettings
    paths: PathSettings
    documents: DocumentSettings
    tools: ToolSettings
    mcp: MCPSettings
    interface: InterfaceSettings
    server: ServerSettings
    remote: RemoteSettings
    sources: ConfigFiles = ConfigFiles(None, None)  # the .env files read (see config/sources.py)
    # Where each setting came from, by VARIABLE name (config/sources.py: SettingSource).
    provenance: Mapping[str, SettingSource] = dataclasses.field(default_factory=dict)
    # Folders the user named with --add-dir (real paths): the file tools read them as they
    # read a trusted working folder (tools/workspace.py: WorkingFolders).
    added_folders: tuple[Path, ...] = ()

    def source_of(self, variable: str) -> SettingSource:
        """Where VARIABLE's value came from (environment, a file, given, or the default)."""
        return self.provenance.get(variable.upper(), DEFAULT_SOURCE)

    def from_folder(self, variable: str) -> bool:
        """Whether VARIABLE was set by the working folder's .env (a folder the user trusted)."""
        return self.source_of(variable).from_folder

    @property
    def working_folder(self) -> Path:
        """The folder these settings were read for (its mcp.json and AGENTS.md are read
        when it is trusted): the one `load_settings` was given, else the current one."""
        return self.sources.trust.folder or Path.cwd()


class _ConfigFilesInEffect:
    """`load_settings`' default: the user-level and the folder's .env (config/sources.py)."""


CONFIG_FILES = _ConfigFilesInEffect()


def load_settings(
    env_file: Path | _ConfigFilesInEffect | None = CONFIG_FILES,
    trust: FolderTrust | None = None,
    problems: dict[str, SettingProblem] | None = None,
    folder: Path | None = None,
    **overrides: Any,
) -> Settings:
    """Read every group from the environment and the .env files in effect.

    `env_file` narrows the files to one (a path) or none (None: the environment only, as
    tests do). `trust` is the decision about the working folder (config/trust.py); unset,
    the stored one. `folder`: the working folder whose .env is read (default: the
    current one; the editor server reads each session's). `overrides` are field values by group, e.g. `governance={"max_loops": 3}`
    (used by tests and benchmarks). Raises `SettingsError` with one line naming the first
    bad variable; given a `problems` dict, a bad variable is left at its default and its
    line kept there by its name (MAX_LOOPS) instead (`config show`, the command that diagnoses it, still runs).
    """
    if isinstance(env_file, _ConfigFilesInEffect):
        files = ConfigFiles.find(folder, trust=trust)
    else:
        named = Path(env_file) if env_file is not None else None
        files = ConfigFiles(None, named, trust or folder_trust())
    values = raw_values(files)
    groups: dict[str, Any] = {}
    for name, cls in GROUPS.items():
        read = {field: values[field] for field in cls.model_fields if values.get(field) is not None}
        while name not in groups:
            try:
                groups[name] = cls.model_validate({**read, **overrides.get(name, {})})
            except ValidationError as exc:
                problem = validation_problem(cls, exc)
                location = exc.errors()[0]["loc"]
                field = str(location[0]) if location else ""
                if problems is None or field not in read:
                    raise SettingsError(problem.line(), problem) from None
                problems[field.upper()] = problem
                del read[field]  # each pass drops one: it ends
    groups["paths"] = anchored_paths(groups["paths"], files, overrides.get("paths", {}))
    given = [name for group in overrides.values() for name in group]
    names = [name for cls in GROUPS.values() for name in cls.model_fields]
    provenance = {name.upper(): source for name, source in setting_sources(files, names, given).items()}
    return Settings(**groups, sources=files, provenance=provenance)
