"""The chat's slash commands that change how it runs from now on: /model and /thinking.

Handlers `(chat, argument)` of their records in cli/builtin_commands.py. A change lasts
while the chat runs; the settings files are not written.
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from rich.markup import escape
from rich.text import Text

from generalAgent.cli.chat_handle import ChatHandle, ReasoningDisplay
from generalAgent.i18n import N_, _

THINKING_MODES = {
    "full": N_("Reasoning is shown in full from now on."),
    "collapsed": N_("Reasoning is shown as one line from now on."),
    "off": N_("Reasoning is not shown from now on."),
}


def switch_model(chat: ChatHandle, argument: str) -> None:
    """/model lists the models to switch to; /model NAME switches from the next turn on."""
    console = chat.console
    model = chat.settings.model
    choices = model.choices
    if not argument:
        for name in choices:
            price = model.prices.get(name)
            priced = (
                f" [dim]({model.model_price_currency}{price.input:g} in · {price.cached_input:g} cached"
                f" · {price.output:g} out per M tokens)[/]"
                if price
                else ""
            )
            mark = "[green]●[/]" if name == chat.model_name else " "
            console.print(f"{mark} {escape(name)}{priced}")
        if len(choices) < 2:
            console.print(
                "[dim]"
                + _("List more in MODEL_CHOICES (comma-separated) to switch with /model NAME.")
                + "[/]"
            )
        return
    if argument == chat.model_name:
        console.print("[dim]" + escape(_("Already using {name}.").format(name=argument)) + "[/]")
        return
    agent = chat.agent()
    switched = replace(chat.settings, model=model.model_copy(update={"model_name": argument}))
    agent.switch_model(switched)
    chat.settings = switched
    console.print(
        "[green]"
        + escape(_("Now using {name}").format(name=argument))
        + "[/] [dim]· "
        + _("the conversation goes on with it")
        + "[/]"
    )
    if argument not in choices:  # MODEL_CHOICES only suggests; the endpoint decides
        console.print(
            "[dim]" + _("Not in MODEL_CHOICES: its cost is not shown unless MODEL_PRICES names it.") + "[/]"
        )


def set_thinking(chat: ChatHandle, argument: str) -> None:
    """/thinking MODE: how reasoning is shown; alone, the last turn's reasoning in full."""
    console = chat.console
    mode = argument.lower()
    if mode in THINKING_MODES:
        chat.show_reasoning = cast(ReasoningDisplay, mode)
        console.print(f"[dim]{_(THINKING_MODES[mode])}[/]")
        return
    if mode:
        console.print("[yellow]" + _("/thinking full, /thinking collapsed or /thinking off.") + "[/]")
        return
    if not chat.last_reasoning:
        console.print("[dim]" + _("The last turn had no reasoning to show.") + "[/]")
        return
    for number, text in enumerate(chat.last_reasoning, 1):
        if len(chat.last_reasoning) > 1:
            console.print("[dim]— " + _("model call {number}").format(number=number) + " —[/]")
        console.print(Text(text, style="dim"))
