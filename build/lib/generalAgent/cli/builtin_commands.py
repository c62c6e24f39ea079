"""The built-in slash commands: one frozen record each (cli/command_registry.py), in the
order /help lists them, and what /help shows.

The handlers live by theme: cli/session_commands.py (the session), cli/settings_commands.py
(how the chat runs from now on), cli/views.py (read-only views). The user's own commands
(cli/custom_commands.py) join these in the chat's registry.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.markup import escape

from generalAgent.cli import session_commands as session
from generalAgent.cli import settings_commands as settings
from generalAgent.cli import views
from generalAgent.cli.clipboard import paste
from generalAgent.cli.command_registry import CommandRegistry, MenuEntry, SlashCommand
from generalAgent.cli.custom_commands import CustomCommand
from generalAgent.cli.rewind import rewind_command
from generalAgent.cli.terminal_text import terminal_safe
from generalAgent.i18n import N_, _

COMMANDS = (
    SlashCommand("/help", N_("this help"), views.show_help),
    SlashCommand("/new", N_("start a new session"), session.new_session),
    SlashCommand("/sessions", N_("recent sessions (id, title, age, turns)"), views.show_sessions),
    SlashCommand(
        "/resume",
        N_("continue a session (a unique prefix of its id is enough; alone, pick one)"),
        session.resume_session,
        argument_hint=N_("[ID]"),
    ),
    SlashCommand(
        "/rename",
        N_("name this session (as /sessions and --resume show it)"),
        session.rename_session,
        argument_hint=N_("TITLE"),
    ),
    SlashCommand("/retry", N_("send the last message again after an error"), session.retry_turn),
    SlashCommand(
        "/rewind",
        N_("go back to before an earlier message of yours (pick it); the files too, if you choose"),
        rewind_command,
        argument_hint=N_("[N]"),
    ),
    SlashCommand(
        "/compact",
        N_("summarise the conversation so far into its context (keep FOCUS above all)"),
        session.compact_context,
        argument_hint=N_("[FOCUS]"),
    ),
    SlashCommand(
        "/clear",
        N_("start a fresh context in this session (workspace, todos and uploads stay)"),
        session.clear_context,
    ),
    SlashCommand(
        "/memory", N_("the AGENTS.md instructions loaded into the system prompt"), views.show_memory
    ),
    SlashCommand("/upload", N_("attach a file, folder or glob"), session.attach, argument_hint=N_("PATH")),
    SlashCommand("/paste", N_("attach the image on the clipboard (also Ctrl-V)"), paste),
    SlashCommand("/tools", N_("tool tiers and what the agent can use now"), views.show_tools),
    SlashCommand(
        "/mcp", N_("MCP servers: state, trust and tools (@server starts a disabled one)"), views.show_mcp
    ),
    SlashCommand("/skills", N_("skills that can be @mentioned"), views.show_skills),
    SlashCommand("/agents", N_("sub-agents that can be @mentioned"), views.show_agents),
    SlashCommand(
        "/hooks", N_("the hooks of settings.json that run on this session's events"), views.show_hooks
    ),
    SlashCommand("/todos", N_("the agent's todo list for this session"), views.show_todos),
    SlashCommand(
        "/usage",
        N_("tokens of this session, the cache-hit ratio and how full the context is"),
        views.show_usage,
    ),
    SlashCommand(
        "/model",
        N_("the suggested models (MODEL_CHOICES); NAME, any model id, switches from the next turn on"),
        settings.switch_model,
        argument_hint=N_("[NAME]"),
    ),
    SlashCommand(
        "/thinking",
        N_("how reasoning is shown; alone, the last turn's in full"),
        settings.set_thinking,
        argument_hint="[full|collapsed|off]",  # the values typed: the same in every language
    ),
    SlashCommand(
        "/quit",
        N_("leave (the session is saved; --resume continues it)"),
        session.quit_chat,
        aliases=("/exit",),
    ),
)


def help_text(custom: tuple[CustomCommand, ...] = ()) -> str:
    """What /help shows, in the UI language; `custom`: the user's own commands, listed after."""
    return "\n".join(
        [
            "[bold]"
            + _("Chat")
            + "[/]  "
            + _(
                "Enter sends · Alt+Enter or a trailing \\ adds a line · Tab completes"
                " · Ctrl-C or Esc cancels a turn · Ctrl-D quits"
            ),
            "[bold]"
            + _("Mentions")
            + "[/]  "
            + _(
                "@tool makes a tool available · @skill points the agent to a skill · @agent enables delegation"
            ),
            "[bold]"
            + _("Files")
            + "[/]  "
            + _('#path/to/file.pdf, #folder or #"name with spaces.docx" attaches files to this session'),
            "",
            *(_help_line(entry) for entry in translated_commands()),
            *(["", "[bold]" + _("Your commands") + "[/]"] if custom else []),
            *(_help_line(_custom_entry(command)) for command in custom),
        ]
    )


# The column the descriptions of /help start at, in terminal cells; a longer usage
# (/thinking [full|collapsed|off]) pushes its own description along instead.
USAGE_CELLS = 18


def _help_line(entry: MenuEntry) -> str:
    """`/resume [ID]      continue a session ...`: the usage, then the description, as rich markup."""
    usage = entry.usage
    padding = " " * max(USAGE_CELLS - cell_len(usage), 1)
    return f"{escape(usage)}{padding}{escape(entry.description)}"


def _custom_entry(command: CustomCommand) -> MenuEntry:
    entry = custom_command_record(command).entry()
    where = _("this folder") if command.scope == "folder" else _("yours")
    return entry._replace(description=f"{entry.description or command.path.name} ({where})")


def custom_command_record(command: CustomCommand) -> SlashCommand:
    """The registry's record of one of the user's commands: its turn is the expanded body."""
    return SlashCommand(
        command.name,
        terminal_safe(command.description),  # a file's text: shown without control sequences
        lambda chat, arg: session.run_custom_command(chat, command, arg),
        argument_hint=terminal_safe(command.argument_hint),
        builtin=False,
    )


def translated_commands() -> list[MenuEntry]:
    return CommandRegistry(COMMANDS).menu()
