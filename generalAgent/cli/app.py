"""The `generalagent` command: chat (default), `-p` for one answer, and sub-commands.

Start-up imports only typer, rich, prompt_toolkit and pydantic-settings; LangGraph and
the document libraries load later (in the background for the chat), so the prompt shows
within a second.
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

from generalAgent.cli import documents_commands, folder_trust, knowledge_commands, mcp_commands
from generalAgent.cli.config_commands import config_app
from generalAgent.cli.folder_trust import settle_folder_trust
from generalAgent.cli.i18n import _, choose_language, use_language
from generalAgent.cli.invocation import command_hint
from generalAgent.cli.runtime import limit_malloc_arenas
from generalAgent.cli.storage_errors import check_data_dir, describe_storage_error
from generalAgent.cli.terminal_text import terminal_console
from generalAgent.config.settings import Settings, SettingsError, load_settings
from generalAgent.config.sources import ENV_FILE_NAME, user_config_dir
from generalAgent.display import mask_urls
from generalAgent.private_storage import private_file
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
        from importlib.metadata import version

        print(f"generalagent {version('generalAgent')}")
        raise typer.Exit()


@app.callback(
    invoke_without_command=True, help=_("Chat with the agent (the default), or answer one prompt with -p.")
)
def main_command(
    ctx: typer.Context,
    prompt: Optional[str] = typer.Option(  # noqa: UP045 - typer reads the annotation
        None, "-p", "--prompt", help=_("Answer PROMPT once and exit ('-' reads it from stdin).")
    ),
    version: bool = typer.Option(
        False, "--version", "-V", callback=show_version, is_eager=True, help=_("Show the version and exit.")
    ),
    resume: Optional[str] = typer.Option(  # noqa: UP045
        None, "--resume", help=_("Continue the last session, or the session ID (a unique prefix is enough).")
    ),
    stdin_references: bool = typer.Option(
        False,
        "--stdin-references",
        help="With -p -: treat @names and #paths in the piped text as in the chat (off: piped text is data).",
    ),
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
) -> None:
    """Chat with the agent (the default), or answer one prompt with -p."""
    if ctx.invoked_subcommand is not None:
        return
    settings = settings_or_exit()
    # Before anything of the folder is used: ask once (the chat) or say what is ignored (-p).
    interactive = prompt is None and sys.stdin.isatty()
    settings = settle_folder_trust(
        settings, interactive, terminal_console(stderr=not interactive, highlight=False, soft_wrap=True)
    )
    if add_dir:
        settings = with_added_folders(settings, add_dir)
    missing = settings.model.missing()
    if missing:
        from generalAgent.providers.factory import setup_guidance

        err = terminal_console(stderr=True, highlight=False, soft_wrap=True)
        err.print(setup_guidance(missing), markup=False)
        err.print(
            _(
                "To configure it once for every folder: {command} config init (writes {path}). "
                "Read now: {sources}."
            ).format(
                command=command_hint(),
                path=user_config_dir() / ENV_FILE_NAME,
                sources=settings.sources.describe(),
            ),
            markup=False,
        )
        raise typer.Exit(EXIT_CONFIG)
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
            from generalAgent.cli.once import run_once

            code = run_once(
                settings, prompt, resume, stdin_references=stdin_references, allowed_hosts=allowed
            )
        else:
            from generalAgent.cli.chat import Chat, ChatOptions

            code = Chat(settings, ChatOptions(resume=resume, allowed_hosts=allowed)).run()
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


documents_commands.register(app)
knowledge_commands.register(app)
app.add_typer(config_app, name="config")
mcp_commands.register(app)
folder_trust.register(app)


def settings_or_exit() -> Settings:
    """The settings, with the UI in their language from now on; one line and exit 2 if invalid."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        terminal_console(stderr=True, highlight=False, soft_wrap=True).print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(EXIT_CONFIG) from None
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
    app(args=normalise_argv(sys.argv[1:]), prog_name="generalagent")
