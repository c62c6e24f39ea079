"""One editor turn, run as the chat and `-p` run theirs: prepare, open, run, record.

Everything a turn does besides talking to the editor is here, in one function, so that
it can move onto the session controller the chat and `-p` share (cli/session.py) without
touching the protocol code. It runs in a worker thread; `view` (view.py) carries what the
turn reports to the editor.
"""

from __future__ import annotations

from collections.abc import Callable, MutableSet
from dataclasses import replace
from pathlib import Path
from typing import Any

from generalAgent.cli.acp.modes import approved_in_mode, only_tools_in_mode
from generalAgent.cli.acp.view import AcpView
from generalAgent.cli.i18n import _
from generalAgent.cli.runtime import LoadedAgent
from generalAgent.cli.turns import TurnResult
from generalAgent.tools.approval import ONLY_TOOLS


def run_acp_turn(
    agent: LoadedAgent,
    session_id: str,
    cwd: Path,
    text: str,
    model: str,
    mode: str,
    approved: MutableSet[str],
    view: AcpView,
    warn: Callable[[str], None],
) -> TurnResult:
    """Run one turn of the session; `approved` (the session's "always" answers) gains the
    new ones. `warn` shows a line that is not part of the answer (a skipped #path)."""
    from generalAgent.cli.turn_input import prepare_turn
    from generalAgent.cli.turns import run_turn
    from generalAgent.graph.turn import thread_config
    from generalAgent.providers.errors import describe_model_error
    from generalAgent.sessions import SessionCatalog

    if model != agent.parts.settings.model.model_name:
        settings_model = agent.parts.settings.model.model_copy(update={"model_name": model})
        agent.switch_model(replace(agent.parts.settings, model=settings_model))
    config: dict[str, Any] = thread_config(session_id)
    only = only_tools_in_mode(mode)
    if only is not None:
        config = {**config, "configurable": {**config.get("configurable", {}), ONLY_TOOLS: sorted(only)}}
    prepared = prepare_turn(text, agent, config, session_id, cwd)
    for warning in prepared.warnings:
        warn(warning)
    if prepared.graph_input is None:
        return TurnResult(error=" ".join(prepared.errors))
    title = text.splitlines()[0]
    in_mode = approved_in_mode(mode, approved)
    added_by_mode = in_mode - set(approved)
    catalog = SessionCatalog(agent.parts.settings.paths.sessions_db)
    try:
        catalog.open_session(session_id, title)
        agent.parts.env.start_turn()
        result = run_turn(
            agent.graph,
            config,
            prepared.graph_input,
            view,
            lambda exc: describe_model_error(exc, agent.parts.settings.model, _),
            approved=in_mode,
        )
        # What the user allowed "always" during the turn stays; what the mode added does not.
        approved |= in_mode - added_by_mode
        catalog.record_turn(session_id, title, result.usage)
    finally:
        catalog.close()
    return result
