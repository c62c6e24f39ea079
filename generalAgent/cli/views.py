"""The chat's read-only slash commands: each shows something and changes nothing.

Plain functions `(chat, argument)`, the handlers of their records in
cli/builtin_commands.py. They read the session (agent/session.py), the loaded agent and the
settings; none of them starts a turn or moves the session.
"""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from generalAgent.cli.chat_handle import ChatHandle
from generalAgent.cli.render import format_context, format_cost
from generalAgent.cli.terminal_text import terminal_safe
from generalAgent.config.sources import user_config_dir
from generalAgent.hooks import FOLDER_CONFIG, SETTINGS_FILE, TOOL_EVENTS
from generalAgent.i18n import N_, _, current_language
from generalAgent.sessions import Usage


def show_help(chat: ChatHandle, argument: str) -> None:
    from generalAgent.cli.builtin_commands import help_text

    chat.console.print(help_text(chat.custom_commands.commands))


def show_sessions(chat: ChatHandle, argument: str) -> None:
    sessions = chat.session.catalog.recent(limit=20)
    if not sessions:
        chat.console.print("[dim]" + _("No saved sessions yet.") + "[/]")
        return
    table = Table(box=None, header_style="bold")
    for column in (N_("id"), N_("title"), N_("age"), N_("turns")):
        table.add_column(_(column))
    for info in sessions:
        marker = " ←" if info.id == chat.session.id else ""
        table.add_row(info.id + marker, escape(info.title), info.age(), str(info.turns))
    chat.console.print(table)


def show_memory(chat: ChatHandle, argument: str) -> None:
    from generalAgent.graph.project_memory import user_memory_path

    console = chat.console
    memory = chat.agent().parts.memory
    for problem in memory.problems:
        console.print("[yellow]" + escape(_("Not read: {problem}").format(problem=problem.shown(_))) + "[/]")
    if not memory.files:
        message = _(
            "No AGENTS.md loaded. Instructions for every session go in {user} (yours) or {project} "
            "(this project); they are read when generalagent starts."
        ).format(user=user_memory_path(chat.settings), project=Path.cwd() / "AGENTS.md")
        console.print(f"[dim]{escape(message)}[/]")
        return
    for file in memory.files:
        size = _("{count} characters").format(count=f"{file.chars:,}") + (
            _(", cut to {count} (AGENTS_MD_MAX_CHARS)").format(count=f"{len(file.text):,}")
            if file.cut
            else ""
        )
        scope = {"user": _("yours"), "project": _("this project")}.get(file.scope, file.scope)
        console.print(f"[bold]{escape(scope)}[/] {escape(str(file.path))} [dim]({size})[/]")
        console.print(Text(terminal_safe(file.text), style="dim"))
    console.print(
        "[dim]" + _("Read once when generalagent starts: edits take effect in the next session.") + "[/]"
    )


def show_tools(chat: ChatHandle, argument: str) -> None:
    from generalAgent.agent.turn_input import describe_tools

    chat.console.print(describe_tools(chat.agent(), chat.session.config()))


def show_mcp(chat: ChatHandle, argument: str) -> None:
    from generalAgent.cli.mcp_commands import NO_SERVERS, servers_table

    agent = chat.agent()
    statuses = agent.parts.mcp.statuses()
    if not statuses:
        chat.console.print(f"[dim]{escape(_(NO_SERVERS))} (docs/mcp.md)[/]")
        return
    in_session = set(agent.graph.get_state(chat.session.config()).values.get("mcp_servers") or [])
    chat.console.print(servers_table(statuses, in_session))


def show_skills(chat: ChatHandle, argument: str) -> None:
    skills = chat.agent().parts.skills.skills
    if not skills:
        chat.console.print("[dim]" + _("No skills installed.") + "[/]")
    for skill in skills:
        chat.console.print(f"[cyan]@{skill.id}[/] {escape(skill.described(current_language()))}")


def show_agents(chat: ChatHandle, argument: str) -> None:
    for profile in chat.agent().parts.agents.profiles:
        tools = (
            " [dim]" + escape(_("(tools: {tools})").format(tools=", ".join(profile.tools))) + "[/]"
            if profile.tools is not None
            else ""
        )
        chat.console.print(f"[cyan]@{profile.name}[/] {escape(profile.described(current_language()))}{tools}")


def show_hooks(chat: ChatHandle, argument: str) -> None:
    console = chat.console
    hooks = chat.session.hooks.hooks
    folder_file = Path.cwd() / FOLDER_CONFIG / SETTINGS_FILE
    if not hooks:
        console.print(
            "[dim]"
            + escape(
                _(
                    "No hooks. They are configured in {user} (yours) or {folder} (this folder, once trusted)."
                ).format(user=user_config_dir() / SETTINGS_FILE, folder=folder_file)
            )
            + "[/]"
        )
    else:
        table = Table(box=None, header_style="bold")
        for column in (N_("event"), N_("matcher"), N_("command"), N_("timeout"), N_("from")):
            table.add_column(_(column))
        for hook in hooks:
            matcher = (hook.matcher or "*") if hook.event in TOOL_EVENTS else ""
            source = _("yours") if hook.source.parent == user_config_dir() else _("this folder")
            if hook.approver:
                source += " · " + _("approver")
            table.add_row(
                hook.event,
                escape(matcher),
                escape(terminal_safe(hook.command)),
                f"{hook.timeout:g} s",
                source,
            )
        console.print(table)
    if folder_file.is_file() and not chat.settings.sources.trust.covers(Path.cwd()):
        console.print(
            "[dim]"
            + escape(
                _("{path} is not read: this folder is not trusted (generalagent trust).").format(
                    path=folder_file
                )
            )
            + "[/]"
        )


def show_todos(chat: ChatHandle, argument: str) -> None:
    todos = chat.agent().graph.get_state(chat.session.config()).values.get("todos") or []
    if not todos:
        chat.console.print("[dim]" + _("No todos in this session.") + "[/]")
        return
    marks = {"completed": "[green]✓[/]", "in_progress": "[yellow]▶[/]", "pending": "[dim]○[/]"}
    for item in todos:
        mark = marks.get(item.get("status", ""), "?")
        chat.console.print(
            f"{mark} {escape(item.get('content', ''))} [dim]({item.get('priority', 'medium')})[/]"
        )


def show_usage(chat: ChatHandle, argument: str) -> None:
    session = chat.session
    info = session.catalog.get(session.id)
    usage = info.usage if info else Usage()
    turns = info.turns if info else 0
    reasoning = (
        _(", of which reasoning {count}").format(count=f"{usage.reasoning_tokens:,}")
        if usage.reasoning_tokens
        else ""
    )
    gauge = (
        format_context(session.state.context_tokens, session.context_window())
        if session.state.context_tokens
        else _("context: known after the next answer")
    )
    lines = [
        _("Session {id}: {turns} turns, {calls} model calls").format(
            id=session.id, turns=turns, calls=usage.model_calls
        ),
        "  "
        + _("input  {tokens} tokens, of which cached {cached} ({ratio} cache hits)").format(
            tokens=f"{usage.input_tokens:,}",
            cached=f"{usage.cached_tokens:,}",
            ratio=f"{usage.cache_hit_ratio:.1%}",
        ),
        "  " + _("output {tokens} tokens").format(tokens=f"{usage.output_tokens:,}") + reasoning,
        "  "
        + _("{gauge} (the last request and its answer, of the model's context window)").format(gauge=gauge),
    ]
    cost = format_cost(usage, chat.settings.model)
    if cost:
        lines.append(
            "  "
            + _("cost {cost} (all of the session's tokens at {model}'s prices)").format(
                cost=cost, model=chat.model_name
            )
        )
    chat.console.print(escape("\n".join(lines)))
