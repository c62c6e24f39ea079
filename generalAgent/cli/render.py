"""Terminal rendering: streamed Markdown answers, one live status line, usage lines.

Whenever a turn waits, one transient line under the output says for what (the model's
first token, its thinking, a tool, a summary, a retry after a 429), for how long, and
how to interrupt; it hides while an answer streams and leaves no trace.

Every string from the model or a tool passes through `terminal_safe` before it is shown
(cli/terminal_text.py): answers, tool arguments and results, sub-agent progress.
"""

from __future__ import annotations

import io
import json
import re
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal, cast

from rich.console import Console
from rich.errors import LiveError
from rich.live import Live
from rich.markup import escape
from rich.text import Text

from generalAgent.agent.events import (
    ApprovalRequest,
    Compaction,
    HookNotice,
    MessageEnd,
    ReadingProgress,
    ReasoningChunk,
    RetryNotice,
    StreamEvent,
    SubagentProgress,
    TextChunk,
    ToolEnd,
    ToolStart,
    TurnEvent,
)
from generalAgent.cli.approvals import refuse_without_asking
from generalAgent.cli.terminal_text import terminal_safe
from generalAgent.config.settings import ModelSettings
from generalAgent.display import human_size, mask_urls
from generalAgent.i18n import N_, _, ngettext
from generalAgent.sessions import Usage

if TYPE_CHECKING:  # the spinner and the Esc key are the chat's: -p draws neither
    from rich.status import Status

    from generalAgent.cli.escape_key import EscapeKey

ARG_CHARS = 60
ERROR_CHARS = 160  # a failed call's error: its cause, not a screenful
# Messages are marked here and translated where they are shown (generalAgent/i18n.py).
COMPACTING = N_("compacting {count} older messages into a summary… Ctrl-C skips the summary")
WAITING_FOR_MODEL = N_("waiting for the model")
RUNNING = N_("running")
INTERRUPT_KEYS = N_("Ctrl-C or Esc to interrupt")
INTERRUPT_CTRL_C = N_("Ctrl-C to interrupt")
RETRYING = N_("{problem}: retrying in {delay} s (retry {number} of {limit})")
RATE_LIMITED = N_("rate limited ({status})")
ENDPOINT_FAILED = N_("the endpoint failed ({status})")
NO_CONNECTION = N_("no connection")
ColorSystem = Literal["auto", "standard", "256", "truecolor", "windows"]


@contextmanager
def ctrl_c_deferred() -> Iterator[None]:
    """Hold Ctrl-C until the block is done: a KeyboardInterrupt between printing lines and
    recording them printed would make the turn's last render print them a second time.
    The signal is blocked, not lost: it is delivered (and the turn cancelled) at the end."""
    blockable = hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
    if not blockable:
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class MarkdownStream:
    """Streams Markdown: re-renders the tail as tokens arrive, prints finished lines for good.

    Only the last `live_lines` rendered lines stay redrawable; everything above them is
    printed once and scrolls normally, so long answers never redraw (or duplicate) a
    screenful, and the terminal's scrollback holds the answer as it was shown.
    """

    def __init__(self, console: Console, live_lines: int = 8, min_interval: float = 0.08) -> None:
        self.console = console
        self.live_lines = live_lines
        self.min_interval = min_interval
        self.text = ""
        self._printed = 0
        self._live: Live | None = None
        self._last_render = 0.0

    @property
    def active(self) -> bool:
        return bool(self.text)

    def add(self, piece: str) -> None:
        self.text += piece
        if time.monotonic() - self._last_render >= self.min_interval:
            self._render(final=False)

    def finish(self) -> None:
        if self.text:
            self._render(final=True)
        if self._live is not None:
            self._live.stop()
        self._live = None
        self.text = ""
        self._printed = 0

    def _render(self, final: bool) -> None:
        with ctrl_c_deferred():
            self._render_now(final)

    def _render_now(self, final: bool) -> None:
        self._last_render = time.monotonic()
        lines = self._lines(self.text)
        stable = len(lines) if final else max(0, len(lines) - self.live_lines)
        if self._live is None and self.console.is_terminal and not final:
            self._live = Live(Text(""), console=self.console, auto_refresh=False, transient=True)
            self._live.start()
        if stable > self._printed:
            block = Text.from_ansi("\n".join(lines[self._printed : stable]))
            if self._live is not None:
                self._live.console.print(block)
            else:
                self.console.print(block)
            self._printed = stable
        if self._live is not None:
            self._live.update(Text.from_ansi("\n".join(lines[self._printed :])), refresh=True)

    def _lines(self, text: str) -> list[str]:
        # Rendered on a console of its own: capturing on the live console would write the
        # live region into the capture and break its redraws.
        buffer = io.StringIO()
        renderer = Console(
            file=buffer,
            width=self.console.width,
            color_system=cast(ColorSystem | None, self.console.color_system),
            force_terminal=self.console.is_terminal,
            no_color=self.console.no_color,
        )
        from rich.markdown import Markdown  # markdown-it and pygments: only when an answer is drawn

        renderer.print(Markdown(keep_line_breaks(terminal_safe(text)), hyperlinks=False))
        return buffer.getvalue().rstrip("\n").split("\n")


# A fenced code block opens and closes with three or more backticks or tildes.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def keep_line_breaks(text: str) -> str:
    """Markdown where a single newline stays a line break, as the model meant it (an address,
    a poem, lines of a list without markers): Markdown would join such lines with a space.
    Each line followed by another non-blank line ends with a hard break (two spaces); code
    fences are left as they are."""
    lines = text.split("\n")
    fence = ""
    for index, line in enumerate(lines[:-1]):
        opened = _FENCE.match(line)
        if opened and (not fence or opened.group(1)[0] == fence[0]):
            fence = "" if fence else opened.group(1)
            continue
        if fence or not line.strip() or not lines[index + 1].strip():
            continue
        if not line.endswith(("  ", "\\")):
            lines[index] = line + "  "
    return "\n".join(lines)


def error_line(text: str, limit: int = ERROR_CHARS) -> str:
    """A failed call's error on one line, its cause kept: LangChain's message for arguments
    that do not fit a tool repeats the whole call before the cause ("Error invoking tool
    … with kwargs {…} with error: path: Field required"), and the call is on screen already."""
    flat = " ".join(text.split())
    _call, said, cause = flat.rpartition(" with error: ")
    if said:
        flat = "Error: " + cause
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def short_args(args: dict[str, Any], limit: int = ARG_CHARS) -> str:
    """`name="value", n=3`, each value cut to keep the status line on one line."""
    parts = []
    for key, value in args.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        # A URL's credentials (?auth=, ?token=, user:password@) never reach the screen.
        shown = " ".join(terminal_safe(mask_urls(str(shown))).split())
        if len(shown) > limit:
            shown = shown[: limit - 1] + "…"
        shown = json.dumps(shown, ensure_ascii=False) if isinstance(value, str) else shown
        parts.append(f"{terminal_safe(str(key))}={shown}")
    return ", ".join(parts)


def format_cost(usage: Usage, settings: ModelSettings) -> str | None:
    """`≈ $0.0123` at MODEL_PRICES for the model in use; None when it has no price."""
    price = settings.prices.get(settings.model_name or "")
    if price is None:
        return None
    cost = price.cost(usage.input_tokens, usage.cached_tokens, usage.output_tokens)
    digits = 4 if cost < 1 else 2
    return f"≈ {settings.model_price_currency}{cost:,.{digits}f}"  # a figure: the same in every language


def format_usage(
    usage: Usage,
    seconds: float | None = None,
    context: tuple[int, int] | None = None,
    cost: str | None = None,
) -> str:
    """The per-turn line: input, cached (and the hit ratio), output (reasoning apart), calls,
    time, the context gauge (tokens of the last request and answer, of the window), and the
    cost when the model has a price."""
    cached = _("cached {tokens} ({ratio})").format(
        tokens=f"{usage.cached_tokens:,}", ratio=f"{usage.cache_hit_ratio:.0%}"
    )
    output = _("out {tokens}").format(tokens=f"{usage.output_tokens:,}")
    if usage.reasoning_tokens:
        output += " " + _("({tokens} reasoning)").format(tokens=f"{usage.reasoning_tokens:,}")
    parts = [_("in {tokens}").format(tokens=f"{usage.input_tokens:,}"), cached, output]
    if usage.model_calls != 1:
        parts.append(
            ngettext("{count} call", "{count} calls", usage.model_calls).format(count=usage.model_calls)
        )
    if seconds is not None:
        parts.append(f"{seconds:.1f} s")
    if context is not None and context[0]:
        parts.append(format_context(*context))
    if cost:
        parts.append(cost)
    return _("tokens:") + " " + " · ".join(parts)


def thinking_summary(chars: int) -> str:
    """`thinking… 1.2k chars`: the collapsed form of a model call's reasoning."""
    size = f"{chars / 1000:.1f}k" if chars >= 1000 else str(chars)
    return _("thinking… {size} chars").format(size=size)


def thought_summary(chars: int) -> str:
    """`thought · 1.2k chars`: the line a model call's reasoning leaves once it is over."""
    size = f"{chars / 1000:.1f}k" if chars >= 1000 else str(chars)
    return _("thought · {size} chars").format(size=size)


class ReasoningStream:
    """A model call's reasoning, dimmed and apart from the answer (SHOW_REASONING).

    `collapsed`: one line that counts while it streams (`thinking… 1.2k chars`) and stays
    as `thought · 1.2k chars`;
    `full`: the text itself, dimmed; `off`: nothing. Always on the console it is given,
    which in `-p` mode is stderr, never the answer's stdout.
    """

    def __init__(
        self,
        console: Console,
        mode: str = "collapsed",
        status: StatusLine | None = None,
        min_interval: float = 0.1,
    ) -> None:
        self.console = console
        self.mode = mode
        self.status = status or StatusLine(console)
        self.min_interval = min_interval
        self.chars = 0
        self._last_update = 0.0

    def add(self, piece: str) -> None:
        if self.mode == "off" or not piece:
            return
        self.chars += len(piece)
        if self.mode == "full":
            self.status.stop()  # a line being written cannot share the screen's bottom with it
            self.console.print(Text(piece, style="dim"), end="", highlight=False)
            return
        if not self.console.is_terminal or time.monotonic() - self._last_update < self.min_interval:
            return
        self._last_update = time.monotonic()
        # The seconds count from the first thought: the wait is one wait, however it streams.
        self.status.show(f"[dim]{thinking_summary(self.chars)}[/]", keep_time=self.chars > len(piece))
        self.status.start()

    def finish(self) -> None:
        """The reasoning is over (the answer or a tool call begins): leave its one line."""
        if self.chars == 0:
            return
        if self.mode == "full":
            self.console.print()
        elif self.mode == "collapsed":  # past: "thinking…" would say it still goes on
            self.console.print(f"[dim]{thought_summary(self.chars)}[/]", highlight=False)
        self.chars = 0


def reading_text(event: ReadingProgress) -> str:
    """'indexing log.txt: 35%' for a tool's progress event (tools/reading_progress.py)."""
    percent = min(99, event.done * 100 // event.total) if event.total else 0
    name = " ".join(terminal_safe(event.name).split())[:60]
    return _("indexing {name}: {percent}%").format(name=name, percent=percent)


def compaction_text(event: dict[str, Any]) -> str:
    """The one line the terminal shows for a compaction event (graph/compaction.py sends them)."""
    state = event.get("state")
    count = event.get("messages", 0)
    if state == "done":
        tokens = _short_tokens(int(event.get("tokens", 0)))
        return _("compacted {count} messages into a {tokens}-token summary").format(
            count=count, tokens=tokens
        )
    if state == "cleared":
        return _("context cleared: {count} messages left it (workspace, todos and uploads are kept)").format(
            count=count
        )
    if state == "nothing":
        return _("nothing to compact yet")
    return _("{count} older messages left the context without a summary ({reason})").format(
        count=count, reason=event.get("reason", "")
    )


def format_context(used: int, window: int) -> str:
    """`context 5.4k/128k (4%)`: how much of the model's context window the last request and
    its answer used (the history is cut at MAX_CONTEXT_TOKENS, ¾ of it by default)."""
    return _("context {used}/{window} ({share})").format(
        used=_short_tokens(used), window=_short_tokens(window), share=f"{used / max(window, 1):.0%}"
    )


def _short_tokens(tokens: int) -> str:
    if tokens >= 1000:
        return f"{tokens / 1000:.1f}k".replace(".0k", "k")
    return str(tokens)


class StatusLine:
    """The one live line under the output while the turn waits: what for, since when, how to stop.

    Terminals only, transient. It renders itself on every refresh (`__rich__`), so the
    seconds count up on their own; `show` may be called from any thread, `start`/`stop` only
    from the one that prints.
    """

    def __init__(self, console: Console, interrupt_hint: str = INTERRUPT_CTRL_C) -> None:
        self.console = console
        self.interrupt_hint = interrupt_hint
        self.what = ""  # markup
        self._since = time.monotonic()
        self._status: Status | None = None

    def show(self, what: str, *, keep_time: bool = False) -> None:
        if what != self.what and not keep_time:
            self._since = time.monotonic()
        self.what = what

    def start(self) -> None:
        if self._status is not None or not self.console.is_terminal or not self.what:
            return
        try:
            self._status = self.console.status(self)
            self._status.start()
        except LiveError:  # the answer's live region owns the terminal; it ends first
            self._status = None

    def stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    @property
    def visible(self) -> bool:
        return self._status is not None

    def __rich__(self) -> Text:
        seconds = int(time.monotonic() - self._since)
        return Text.from_markup(f"{self.what} [dim]· {seconds} s · {_(self.interrupt_hint)}[/]")


def retry_problem(status: int | None) -> str:
    """What a retry is about, from the status of the response that failed (None: no response)."""
    if status is None:
        return _(NO_CONNECTION)
    return _(RATE_LIMITED if status == 429 else ENDPOINT_FAILED).format(status=status)


class TerminalView:
    """Shows a turn in the terminal; `answer_console` streams the answer (stdout in chat)."""

    def __init__(
        self,
        console: Console,
        answer_console: Console | None = None,
        stream_answer: bool = True,
        approver: Any = None,
        reasoning: str = "collapsed",
        keyboard: EscapeKey | None = None,
    ) -> None:
        self.console = console
        self.stream_answer = stream_answer
        self.keyboard = keyboard  # Esc interrupts too while it watches; it steps aside for questions
        hint = INTERRUPT_KEYS if keyboard is not None and keyboard.available else INTERRUPT_CTRL_C
        self.status = StatusLine(console, hint)
        self.reasoning = ReasoningStream(console, reasoning, self.status)
        self.markdown = MarkdownStream(answer_console or console)
        self._approver = approver
        self._started = time.monotonic()
        self._asking = 0.0  # seconds spent at approval questions: the user's time, not the turn's
        self._running: dict[str, str] = {}  # call id -> shown call, until its result arrives
        self._compacting = ""  # what the status line says while a summary is written
        self._reading = ""  # how far a tool's indexing of a large file has got
        self._waiting = True  # for the model: from the start, and after tools or a summary
        self._update_status()

    # TurnView -----------------------------------------------------------------------
    def on_event(self, event: TurnEvent) -> None:
        """One event of the turn (agent/events.py), shown as the terminal shows its kind."""
        match event:
            case TextChunk(text):
                self.on_text(text)
            case ReasoningChunk(text):
                self.on_reasoning(text)
            case MessageEnd():
                self.on_message_end()
            case ToolStart(call_id, name, args):
                self.on_tool_call(call_id, name, dict(args))
            case ToolEnd(call_id, name, content, is_error, shown):
                self.on_tool_result(call_id, name, content, is_error, shown)
            case RetryNotice(status, delay, number, limit):
                self.on_retry(status, delay, number, limit)
            case _:
                self.on_custom(event)

    def on_reasoning(self, text: str) -> None:
        self.reasoning.add(text)

    def on_text(self, text: str) -> None:
        self.reasoning.finish()
        if self.stream_answer:
            self._waiting = False
            self.status.stop()  # the answer's own live region takes the bottom of the screen
            self.markdown.add(text)

    def on_message_end(self) -> None:
        self.reasoning.finish()
        self.markdown.finish()
        self._waiting = False  # tool calls, if any, come next; else the turn ends
        self._update_status()

    def on_retry(self, status: int | None, delay: float, number: int, limit: int) -> None:
        """The client waits `delay` seconds before retrying (any thread: only the text changes)."""
        problem = retry_problem(status)
        self.status.show(
            "[yellow]"
            + escape(_(RETRYING).format(problem=problem, delay=f"{delay:.0f}", number=number, limit=limit))
            + "[/]"
        )

    def close(self) -> None:
        """After the turn: nothing may stay on screen as "running"."""
        self.reasoning.finish()
        self.markdown.finish()
        self._running.clear()
        self._reading = ""
        self._compacting = ""
        self._waiting = False
        self.status.stop()

    def on_tool_call(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        self.reasoning.finish()
        self.markdown.finish()
        self._running[call_id] = f"{escape(terminal_safe(name))}([dim]{escape(short_args(args))}[/])"
        self._update_status()

    def on_tool_result(
        self, call_id: str, name: str, content: str, is_error: bool, shown: str | None = None
    ) -> None:
        """One line per call: what ran, and its result size or its error (`shown`: in the UI
        language)."""
        call = self._running.pop(call_id, escape(terminal_safe(name)))
        self._reading = ""
        self._waiting = not self._running  # the tools' answers go back to the model
        self._update_status()
        if is_error:
            first = error_line(terminal_safe(mask_urls(shown or content)))
            self.console.print(f"[red]✗[/] [cyan]{call}[/] [red]{escape(first)}[/]", highlight=False)
        else:
            size = human_size(len(content.encode("utf-8")))
            self.console.print(f"[cyan]⚙ {call}[/] [dim]→ {size}[/]", highlight=False)

    def _update_status(self) -> None:
        """The status line for what the turn waits for now; none when it waits for nothing."""
        if self._compacting:
            self.status.show(f"[dim]{escape(self._compacting)}[/]")
        elif self._running:
            reading = f" [dim]· {escape(self._reading)}[/]" if self._reading else ""
            self.status.show(
                f"[cyan]⚙ {' · '.join(self._running.values())}[/]{reading} [dim]{_(RUNNING)}…[/]"
            )
        elif self._waiting:
            self.status.show(f"[dim]{_(WAITING_FOR_MODEL)}…[/]")
        else:
            self.status.stop()
            self.status.what = ""
            return
        if not self.markdown.active:
            self.status.start()

    def on_custom(self, event: StreamEvent) -> None:
        if isinstance(event, SubagentProgress) or (isinstance(event, Compaction) and event.source):
            self.markdown.finish()
            if isinstance(event, Compaction):
                said = compaction_text(event.as_fields())
            else:
                said = event.said.shown(_, ngettext) if event.said is not None else event.text
            text = " ".join(terminal_safe(said).split())[:160]
            source = escape(terminal_safe(event.source or ""))
            self.console.print(f"  [dim]\\[{source}] {escape(text)}[/]", highlight=False)
        elif isinstance(event, Compaction):
            self.on_compaction(event.as_fields())
        elif isinstance(event, ReadingProgress):
            self._reading = reading_text(event)
            self._update_status()
        elif isinstance(event, HookNotice):
            self.markdown.finish()  # a hook that timed out or failed: one line, the turn goes on
            self.console.print(f"[yellow]{escape(terminal_safe(event.text(_)))}[/]", highlight=False)
        # FilesWritten: named all at once after the turn (files_written.py); UsageReport: summed.

    def on_compaction(self, event: dict[str, Any]) -> None:
        """One line per compaction; a status line while the summary is being written."""
        self.markdown.finish()
        if event.get("state") == "started":
            self._compacting = _(COMPACTING).format(count=event.get("messages", 0))
            self._update_status()
            return
        self._compacting = ""
        self._waiting = True  # the request the summary was made for comes next
        self._update_status()
        style = "yellow" if event.get("state") == "plain" else "dim"
        self.console.print(f"[{style}]{escape(compaction_text(event))}[/]", highlight=False)

    def approve(self, request: ApprovalRequest) -> str:
        self.reasoning.finish()
        self.markdown.finish()
        self.status.stop()
        question = request.as_dict()  # the terminal's question words it (cli/approvals.py)
        asked = time.monotonic()
        try:
            if self._approver is None:
                return refuse_without_asking(self.console, question)
            if self.keyboard is None:
                return self._approver(question)
            with self.keyboard.paused():
                return self._approver(question)
        except BaseException as exc:  # Ctrl-C (or Ctrl-D) at the question: nothing runs, the turn ends
            self._running.clear()
            self._waiting = False
            if isinstance(exc, EOFError):  # Ctrl-D means the same as Ctrl-C: cancelled, not an error
                raise KeyboardInterrupt from None
            raise
        finally:
            self._asking += time.monotonic() - asked
            self._update_status()  # the approved calls run now: the line comes back

    # after the turn -----------------------------------------------------------------
    def elapsed(self) -> float:
        """The turn's time, without the time its approval questions waited for the user."""
        return time.monotonic() - self._started - self._asking
