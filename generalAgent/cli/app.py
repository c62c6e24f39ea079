"""The `generalagent` command: chat (default), `-p` for one answer, and sub-commands.

`generalagent "question"` starts the chat with that message (cli/invocation.py turns the
first word that is no sub-command into the hidden `--message`).

Start-up imports only typer, rich, prompt_toolkit, pydantic and python-dotenv; LangGraph and
the document libraries load later (in the background for the chat), so the prompt shows
within a second. The sub-commands' modules load only when the command line names one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.markup import escape

from generalAgent.agent.loading import limit_malloc_arenas, pause_collector
from generalAgent.agent.storage_errors import check_data_dir, describe_storage_error
from generalAgent.cli.data_home import move_older_store
from generalAgent.cli.folder_trust import settle_folder_trust
from generalAgent.cli.invocation import command_hint, first_message_argv, split_tool_names
from generalAgent.cli.terminal_text import terminal_console
from generalAgent.config.settings import Settings, SettingsError, load_settings
from generalAgent.config.sources import ENV_FILE_NAME, user_config_dir
from generalAgent.display import mask_urls
from generalAgent.i18n import _, choose_language, use_language
from generalAgent.private_storage import private_file
from generalAgent.process_secrets import withhold_secrets
from generalAgent.sessions import SessionStoreError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    help=_("A terminal AI agent for documents in Chinese and English, for any OpenAI-compatible model."),
)
EXIT_CONFIG = 2


def show_version(value: bool) -> None:
    if value:
        import generalAgent

        print(f"generalagent {generalAgent.__version__}")
        raise typer.Exit()


@app.callback(
    invoke_without_command=True, help=_("Chat with the agent (the default), or answer one prompt with -p.")
)
def main_command(
    ctx: typer.Context,
    prompt: Optional[str] = typer.Option(  # noqa: UP045 - typer reads the annotation
        None,
        "-p",
        "--prompt",
        help=_(
            "Answer PROMPT once and exit; text piped in is appended to it ('-' reads all of it from stdin)."
        ),
    ),
    version: bool = typer.Option(
        False, "--version", "-V", callback=show_version, is_eager=True, help=_("Show the version and exit.")
    ),
    resume: Optional[str] = typer.Option(  # noqa: UP045
        None,
        "--resume",
        help=_(
            "Continue a session: pick one of the recent ones, or give its ID (a unique prefix is enough)."
        ),
    ),
    stdin_references: bool = typer.Option(
        False,
        "--stdin-references",
        help=_("With -p: act on @names and #paths in piped text as in the chat (off: piped text is data)."),
    ),
    continue_here: bool = typer.Option(
        False, "-c", "--continue", help=_("Continue the latest session started in this folder.")
    ),
    model: Optional[str] = typer.Option(  # noqa: UP045
        None, "--model", help=_("The model for this run (instead of MODEL_NAME).")
    ),
    max_turns: Optional[int] = typer.Option(  # noqa: UP045
        None,
        "--max-turns",
        min=1,
        max=500,
        help=_("Model calls per turn before a forced answer (MAX_LOOPS)."),
    ),
    allowed_tools: Annotated[
        Optional[list[str]],  # noqa: UP045 - typer reads the annotation
        typer.Option(
            "--allowed-tools",
            help=_(
                "With -p: tools that run without asking, comma-separated (discovered ones are offered too)."
            ),
        ),
    ] = None,
    approve: bool = typer.Option(
        False, "--approve", help=_("With -p: run every tool call without asking. Never the default.")
    ),
    output_format: str = typer.Option(
        "text",
        "--output-format",
        help=_(
            "With -p: text (the answer), json (one object at the end) or stream-json (one event per line)."
        ),
    ),
    save: bool = typer.Option(False, "--save", help=_("With -p: list the session in /sessions.")),
    message: Optional[str] = typer.Option(None, "--message", hidden=True),  # noqa: UP045 - the first word
    allow_host: Annotated[
        Optional[list[str]],  # noqa: UP045 - typer reads the annotation
        typer.Option(
            "--allow-host",
            metavar="HOST",
            help=_("Let fetch_web reach HOST without asking, query strings included (repeatable)."),
        ),
    ] = None,
    add_dir: Annotated[
        Optional[list[Path]],  # noqa: UP045 - typer reads the annotation
        typer.Option(
            "--add-dir",
            metavar="DIR",
            help=_("Let the file tools read DIR in place, as the working folder (repeatable)."),
        ),
    ] = None,
    server: Optional[str] = typer.Option(  # noqa: UP045
        None,
        "--server",
        metavar="URL",
        help=_(
            "Chat (or -p) with a served deployment at URL instead of a local graph; "
            "REMOTE_SERVER_TOKEN proves who you are (docs/deployment.md)."
        ),
    ),
) -> None:
    """Chat with the agent (the default), or answer one prompt with -p."""
    if ctx.invoked_subcommand is not None:
        return
    script_only = {
        "--allowed-tools": bool(allowed_tools),
        "--approve": approve,
        "--output-format": output_format != "text",
        "--save": save,
    }
    settings = settings_or_exit()  # first: the UI speaks the user's language from here on
    usage_problem = _usage_problem(prompt, message, output_format, resume, continue_here, script_only)
    if usage_problem:
        terminal_console(stderr=True, highlight=False, soft_wrap=True).print(
            f"[red]{escape(usage_problem)}[/]"
        )
        raise typer.Exit(EXIT_CONFIG)
    if server is not None:  # the graph runs on the server: no local model, folder or data home
        from generalAgent.cli.remote_views import RemoteOptions, run_remote

        remote = RemoteOptions(
            prompt,
            message,
            resume,
            approve,
            split_tool_names(allowed_tools or []),
            output_format,  # type: ignore[arg-type]  # checked by _usage_problem
        )
        unsupported = {
            "-c": continue_here,
            "--model": model is not None,
            "--max-turns": max_turns is not None,
            "--save": save,
            "--allow-host": bool(allow_host),
            "--add-dir": bool(add_dir),
        }
        raise typer.Exit(run_remote(settings, server, remote, [k for k, v in unsupported.items() if v]))
    # Before anything of the folder is used: ask once (the chat) or say what is ignored (-p).
    interactive = prompt is None and sys.stdin.isatty()
    if interactive and settings.sources.trust.undecided:
        # No model even with the folder's own .env: say so first; trusting it changes nothing.
        stop_without_model(with_run_options(settings_if_trusted(settings), model, max_turns))
    settings = settle_folder_trust(
        settings, interactive, terminal_console(stderr=not interactive, highlight=False, soft_wrap=True)
    )
    move_older_store(settings, Path.cwd(), terminal_console(stderr=True, highlight=False, soft_wrap=True))
    if add_dir:
        settings = with_added_folders(settings, add_dir)
    settings = with_run_options(settings, model, max_turns)  # after trust: it may re-read the settings
    stop_without_model(settings)
    problem = check_data_dir(settings.paths)
    if problem:
        terminal_console(stderr=True, highlight=False).print(f"[red]{escape(problem)}[/]")
        raise typer.Exit(EXIT_CONFIG)
    from generalAgent.tools.named_hosts import HostError, allowed_hosts

    try:
        allowed = tuple(allowed_hosts(allow_host or []))
    except HostError as exc:
        problem = _("--allow-host {value}: not a host name (for example: --allow-host docs.python.org)")
        terminal_console(stderr=True, highlight=False).print(
            f"[red]{escape(problem.format(value=repr(exc.value)))}[/]"
        )
        raise typer.Exit(EXIT_CONFIG) from None
    configure_logging(settings)
    try:
        if prompt is not None:
            from generalAgent.cli.once import OnceOptions, run_once

            options = OnceOptions(
                resume=resume,
                continue_here=continue_here,
                stdin_references=stdin_references,
                allowed_tools=split_tool_names(allowed_tools or []),
                approve_all=approve,
                output_format=output_format,  # type: ignore[arg-type]  # checked by _usage_problem
                save=save,
                allowed_hosts=allowed,
            )
            code = run_once(settings, prompt, options)
        else:
            from generalAgent.cli.chat import Chat, ChatOptions

            code = Chat(
                settings,
                ChatOptions(
                    resume=resume, continue_here=continue_here, first_message=message, allowed_hosts=allowed
                ),
            ).run()
    except (OSError, sqlite3.Error) as exc:  # the data directory failed under us: one line, no traceback
        described = describe_storage_error(exc, settings.paths)
        if described is None:
            raise
        terminal_console(stderr=True, highlight=False).print(f"[red]{escape(described)}[/]")
        code = EXIT_CONFIG
    except SessionStoreError as exc:
        terminal_console(stderr=True, highlight=False).print(f"[red]{escape(str(exc))}[/]")
        code = EXIT_CONFIG
    raise typer.Exit(code)


def with_added_folders(settings: Settings, folders: list[Path]) -> Settings:
    """`settings` with the --add-dir folders (real paths); a folder that is not there exits 2."""
    real = []
    for folder in folders:
        if not folder.expanduser().is_dir():
            problem = _("--add-dir {path}: no such folder").format(path=folder)
            terminal_console(stderr=True, highlight=False).print(f"[red]{escape(problem)}[/]")
            raise typer.Exit(EXIT_CONFIG)
        real.append(folder.expanduser().resolve())
    return dataclasses.replace(settings, added_folders=tuple(dict.fromkeys(real)))


@app.command(help=_("Check the configuration, the model endpoint, SQLite/FTS5 and the data directory."))
def doctor(
    offline: bool = typer.Option(False, "--offline", help=_("Skip the one-token request to the endpoint.")),
) -> None:
    """Check the configuration, the model endpoint, SQLite/FTS5, the data directory and MCP servers."""
    from generalAgent.cli.doctor import run_doctor

    settings = settings_or_exit()
    configure_logging(settings)  # library warnings (e.g. connection retries) go to the log, not the report
    raise typer.Exit(run_doctor(settings, terminal_console(highlight=False), probe_endpoint=not offline))


@app.command(help=_("Serve the agent to an editor (Zed, JetBrains) over the Agent Client Protocol on stdio."))
def acp() -> None:
    """The agent as an ACP server on stdin/stdout (docs/editors.md)."""
    settings = settings_or_exit()
    missing = settings.model.missing()
    if missing:
        from generalAgent.providers.factory import setup_guidance

        terminal_console(stderr=True, highlight=False, soft_wrap=True).print(
            setup_guidance(missing, _), markup=False
        )
        raise typer.Exit(EXIT_CONFIG)
    configure_logging(settings)
    from generalAgent.cli.acp.server import run_acp_server

    raise typer.Exit(run_acp_server(settings))


# The sub-commands other modules define, by the word that names each. Their modules are
# imported only when the command line may name one or asks for help: the chat and `-p`
# never run them, and the document and knowledge modules behind `index`, `search` and `kb`
# cost every start a fifth of a second (python -X importtime). tests/unit/cli/test_command_line.py
# keeps these words and the registered commands in step.
SUBCOMMANDS = frozenset({"index", "search", "kb", "config", "mcp", "models", "sessions", "trust", "tables"})


def register_subcommands() -> None:
    """Add the sub-commands of the other modules to `app` (once)."""
    if any(group.name == "kb" for group in app.registered_groups):
        return
    from generalAgent.cli import (
        documents_commands,
        folder_trust,
        knowledge_commands,
        mcp_commands,
        models_commands,
        sessions_commands,
        tables_command,
    )
    from generalAgent.cli.config_commands import config_app

    documents_commands.register(app)
    knowledge_commands.register(app)
    app.add_typer(config_app, name="config")
    mcp_commands.register(app)
    models_commands.register(app)
    sessions_commands.register(app)
    folder_trust.register(app)
    tables_command.register(app)


def may_name_a_subcommand(argv: list[str]) -> bool:
    """Whether `argv` may run (or list) a sub-command of SUBCOMMANDS."""
    return any(arg in SUBCOMMANDS or arg in ("-h", "--help") for arg in argv)


def _usage_problem(
    prompt: str | None,
    message: str | None,
    output_format: str,
    resume: str | None,
    continue_here: bool,
    script_only: dict[str, bool],
) -> str | None:
    """What is wrong with this combination of options, in one line; None when nothing is."""
    from generalAgent.cli.script_output import OUTPUT_FORMATS

    if output_format not in OUTPUT_FORMATS:
        return _("--output-format must be one of {formats}, not {value}.").format(
            formats=", ".join(OUTPUT_FORMATS), value=repr(output_format)
        )
    if prompt is not None and message is not None:
        return _("Give the question after -p, or as the first word, not both ({message}).").format(
            message=repr(message)
        )
    if resume is not None and continue_here:
        return _("Use --resume or -c/--continue, not both.")
    if prompt is None:
        used = [name for name, given in script_only.items() if given]
        if used:
            return _("{options} only work with -p (one answer for a script).").format(options=", ".join(used))
    return None


def stop_without_model(settings: Settings) -> None:
    """Exit with what to set when `settings` name no model (MODEL_NAME, OPENAI_API_KEY)."""
    missing = settings.model.missing()
    if not missing:
        return
    from generalAgent.cli.config_commands import describe_files
    from generalAgent.providers.factory import setup_guidance

    err = terminal_console(stderr=True, highlight=False, soft_wrap=True)
    err.print(setup_guidance(missing, _), markup=False)
    err.print(
        _(
            "To configure it once for every folder: {command} config init (writes {path}). "
            "Read now: {sources}."
        ).format(
            command=command_hint(),
            path=user_config_dir() / ENV_FILE_NAME,
            sources=describe_files(settings.sources),
        ),
        markup=False,
    )
    raise typer.Exit(EXIT_CONFIG)


def settings_if_trusted(settings: Settings) -> Settings:
    """The settings as they would be once the working folder is trusted (its .env read);
    `settings` themselves when that .env has a value that cannot be used (the question
    comes first, then that line)."""
    try:
        return load_settings(trust=settings.sources.trust.decided(True))
    except SettingsError:
        return settings


def with_run_options(settings: Settings, model: str | None, max_turns: int | None) -> Settings:
    """The settings with this run's --model and --max-turns."""
    from dataclasses import replace

    if model:
        settings = replace(settings, model=settings.model.model_copy(update={"model_name": model}))
    if max_turns is not None:
        settings = replace(
            settings, governance=settings.governance.model_copy(update={"max_loops": max_turns})
        )
    return settings


def settings_or_exit() -> Settings:
    """The settings, with the UI in their language from now on; one line and exit 2 if invalid."""
    from generalAgent.cli.subcommands import settings_or_fail

    settings = settings_or_fail()
    use_language(choose_language(settings.interface.ui_language))
    return settings


def configure_logging(settings: Settings) -> None:
    """Everything goes to DATA_DIR/logs/generalagent.log; the terminal is for the user."""
    handler: logging.Handler = FolderMakingFileHandler(settings.paths.log_file)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(MaskedURLs())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    # LOG_LEVEL is for this program's own messages; libraries only report warnings.
    root.setLevel(logging.WARNING)
    logging.getLogger("generalAgent").setLevel(settings.paths.log_level)
    # A log line that cannot be written (a full disk) must not print a traceback to the user.
    logging.raiseExceptions = False


class MaskedURLs(logging.Filter):
    """Credentials in URLs (?auth=, ?token=, user:password@) are masked in every log line,
    a library's included (an HTTP client logs the URLs it requests)."""

    def filter(self, record: logging.LogRecord) -> bool:
        with contextlib.suppress(Exception):  # a record that cannot be formatted is logged as is
            message = record.getMessage()
            masked = mask_urls(message)
            if masked != message:
                record.msg, record.args = masked, None
            if record.exc_info and not record.exc_text:  # the formatter keeps this text
                record.exc_text = mask_urls(logging.Formatter().formatException(record.exc_info))
        return True


class FolderMakingFileHandler(logging.FileHandler):
    """A log file opened, with its folder, at the first record: a start that fails before
    logging anything (no model configured) leaves no data/logs behind. A log that cannot
    be opened (a read-only or full disk) drops its records instead of failing the command."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, encoding="utf-8", delay=True)

    def _open(self) -> Any:
        private_file(Path(self.baseFilename))  # 0600 in a 0700 folder
        return super()._open()

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(OSError):  # opening failed; writing failures go to handleError
            super().emit(record)


def normalise_argv(argv: list[str]) -> list[str]:
    """`--resume` takes an optional id: without one (end, or an option next) it means "last"."""
    normalised = []
    for index, arg in enumerate(argv):
        normalised.append(arg)
        if arg == "--resume":
            following = argv[index + 1] if index + 1 < len(argv) else None
            if following is None or following.startswith("-"):
                normalised.append("last")
    return normalised


def main() -> None:
    limit_malloc_arenas()
    # Before anything starts a child: no key in what they inherit or in /proc/<agent>/environ.
    withhold_secrets()
    argv = normalise_argv(sys.argv[1:])
    if may_name_a_subcommand(argv):
        register_subcommands()
    else:  # the chat or -p: the collector waits until the agent is loaded (load_agent resumes it)
        pause_collector()
    sys.exit(run_command_line(argv))


def command_line() -> Any:
    """The Click command tree of `app`, drawing its help in the UI language (cli/help_page.py)."""
    from generalAgent.cli.help_page import speak_in_ui_language

    return speak_in_ui_language(typer.main.get_command(app))


def run_command_line(argv: list[str]) -> int:
    """Run the (normalised) arguments; the exit status. Usage errors in the UI language."""
    from generalAgent.cli.help_page import run

    command = command_line()
    return run(command, first_message_argv(argv, command), "generalagent")
