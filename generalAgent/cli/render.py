"""Terminal rendering: streamed Markdown answers, one status line per tool, usage lines."""

from __future__ import annotations

import io
import json
import time
from typing import Any, Literal, cast

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.markup import escape
from rich.status import Status
from rich.text import Text

from generalAgent.display import human_size
from generalAgent.sessions import Usage

ARG_CHARS = 60
COMPACTING = "compacting {count} older messages into a summary… Ctrl-C skips the summary"
ColorSystem = Literal["auto", "standard", "256", "truecolor", "windows"]


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
        renderer.print(Markdown(text))
        return buffer.getvalue().rstrip("\n").split("\n")


def short_args(args: dict[str, Any], limit: int = ARG_CHARS) -> str:
    """`name="value", n=3`, each value cut to keep the status line on one line."""
    parts = []
    for key, value in args.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        shown = " ".join(str(shown).split())
        if len(shown) > limit:
            shown = shown[: limit - 1] + "…"
        parts.append(f"{key}={json.dumps(shown, ensure_ascii=False) if isinstance(value, str) else shown}")
    return ", ".join(parts)


def format_usage(usage: Usage, seconds: float | None = None, context: tuple[int, int] | None = None) -> str:
    """The per-turn line: input, cached (and the hit ratio), output, calls, time, and the
    context gauge (tokens of the last request and answer, of the model's window)."""
    cached = f"cached {usage.cached_tokens:,} ({usage.cache_hit_ratio:.0%})"
    parts = [f"in {usage.input_tokens:,}", cached, f"out {usage.output_tokens:,}"]
    if usage.model_calls != 1:
        parts.append(f"{usage.model_calls} calls")
    if seconds is not None:
        parts.append(f"{seconds:.1f} s")
    if context is not None and context[0]:
        parts.append(format_context(*context))
    return "tokens: " + " · ".join(parts)


def format_context(used: int, window: int) -> str:
    """`context 5.4k/100k (5%)`: how full the model's window was at the last request."""
    return f"context {_short_tokens(used)}/{_short_tokens(window)} ({used / max(window, 1):.0%})"


def _short_tokens(tokens: int) -> str:
    if tokens >= 1000:
        return f"{tokens / 1000:.1f}k".replace(".0k", "k")
    return str(tokens)


class TerminalView:
    """Shows a turn in the terminal; `answer_console` streams the answer (stdout in chat)."""

    def __init__(
        self,
        console: Console,
        answer_console: Console | None = None,
        stream_answer: bool = True,
        approver: Any = None,
    ) -> None:
        self.console = console
        self.stream_answer = stream_answer
        self.markdown = MarkdownStream(answer_console or console)
        self._approver = approver
        self._started = time.monotonic()
        self._running: dict[str, str] = {}  # call id -> shown call, until its result arrives
        self._compacting = ""  # what the status line says while a summary is written
        self._status: Status | None = None

    # TurnView -----------------------------------------------------------------------
    def on_text(self, text: str) -> None:
        if self.stream_answer:
            self.markdown.add(text)

    def on_message_end(self) -> None:
        self.markdown.finish()

    def close(self) -> None:
        """After the turn: nothing may stay on screen as "running"."""
        self.markdown.finish()
        self._running.clear()
        self._compacting = ""
        self._show_running()

    def on_tool_call(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        self.markdown.finish()
        self._running[call_id] = f"{escape(name)}([dim]{escape(short_args(args))}[/])"
        self._show_running()

    def on_tool_result(self, call_id: str, name: str, content: str, is_error: bool) -> None:
        """One line per call: what ran, and its result size or its error."""
        call = self._running.pop(call_id, escape(name))
        self._show_running()
        if is_error:
            first = " ".join(content.split())[:120]
            self.console.print(f"[red]✗[/] [cyan]{call}[/] [red]{escape(first)}[/]", highlight=False)
        else:
            size = human_size(len(content.encode("utf-8")))
            self.console.print(f"[cyan]⚙ {call}[/] [dim]→ {size}[/]", highlight=False)

    def _show_running(self) -> None:
        """A transient status line while tools run (terminals only; it leaves no trace)."""
        if not self.console.is_terminal:
            return
        busy = bool(self._running or self._compacting)
        if busy and self._status is None:
            self._status = self.console.status("")
            self._status.start()
        if self._status is not None:
            if self._compacting:
                self._status.update(f"[dim]{escape(self._compacting)}[/]")
            elif self._running:
                self._status.update(f"[cyan]⚙ {' · '.join(self._running.values())}[/] [dim]running…[/]")
            else:
                self._status.stop()
                self._status = None

    def on_custom(self, event: Any) -> None:
        if isinstance(event, dict) and event.get("subagent"):
            self.markdown.finish()
            text = " ".join(str(event.get("text", "")).split())[:160]
            self.console.print(f"  [dim]\\[{escape(event['subagent'])}] {escape(text)}[/]", highlight=False)
        elif isinstance(event, dict) and isinstance(event.get("compaction"), dict):
            self.on_compaction(event["compaction"])

    def on_compaction(self, event: dict[str, Any]) -> None:
        """One line per compaction; a status line while the summary is being written."""
        from generalAgent.graph.compaction import compaction_line

        self.markdown.finish()
        if event.get("state") == "started":
            self._compacting = COMPACTING.format(count=event.get("messages", 0))
            self._show_running()
            return
        self._compacting = ""
        self._show_running()
        style = "yellow" if event.get("state") == "plain" else "dim"
        self.console.print(f"[{style}]{escape(compaction_line(event))}[/]", highlight=False)

    def approve(self, request: dict[str, Any]) -> str:
        self.markdown.finish()
        if self._status is not None:
            self._status.stop()
            self._status = None
        if self._approver is None:
            self.console.print("[yellow]Approval needed but this run cannot ask; refused.[/]")
            return "no"
        return self._approver(request)

    # after the turn -----------------------------------------------------------------
    def elapsed(self) -> float:
        return time.monotonic() - self._started
