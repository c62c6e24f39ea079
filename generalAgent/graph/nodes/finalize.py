"""The finalize node: answer with what is known, without tools, when the loop budget is
spent or the model repeats a call (graph/repetition.py).

The last assistant message asked for tools that will not run; each call gets an answer
saying so (a call without its answer would make every later request invalid), then the
model is asked once more, with no tools bound, for its best final answer.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from generalAgent.graph.cancellation import invoke_cancellable
from generalAgent.graph.context import PromptBuilder, wrap
from generalAgent.graph.history import call_ids
from generalAgent.graph.repetition import REPEAT_LIMIT, repeated_call
from generalAgent.graph.state import AgentState
from generalAgent.providers.errors import hide_api_key
from generalAgent.tools.run_context import RunContext, cancel_token_of


def build_finalize_node(model: BaseChatModel, prompts: PromptBuilder):
    def finalize(state: AgentState, config: RunnableConfig, runtime: Runtime[RunContext]) -> dict[str, Any]:
        cancelled = cancel_token_of(runtime)  # this session's: another's cancel leaves it
        max_loops = state.get("max_loops") or prompts.settings.governance.max_loops
        last = state["messages"][-1]
        repeated = repeated_call(state["messages"])
        if repeated:
            reason = (
                f"Not run: {repeated} was called with these same arguments {REPEAT_LIMIT} times "
                "in this turn; its earlier results stand."
            )
            notice_text = (
                f"You called {repeated} with the same arguments {REPEAT_LIMIT} times in this turn; "
                "repeating it will not give a different result, and no more tools can run now. "
                "Answer with what you have found: what is done, what is not, and what the user "
                "could do next."
            )
        else:
            reason = f"Not run: the step budget of this turn ({max_loops} model calls) is spent."
            notice_text = (
                f"You have used all {max_loops} steps of this turn and no more tools can run. "
                "Answer now with what you have found: what is done, what is not, and what the "
                "user could do next."
            )
        skipped = [
            ToolMessage(content=reason, tool_call_id=call_id, status="error") for call_id in call_ids(last)
        ]
        system = prompts.system_message(state)
        history = prompts.history({**state, "messages": [*state["messages"], *skipped]}, system, [])
        notice = wrap(notice_text)
        request = prompts.request(system, history, [notice])
        try:
            response = invoke_cancellable(model, request, config, cancelled)
        except Exception as exc:
            hide_api_key(exc, prompts.settings.model)  # the failed step is stored and logged
            raise
        return {"messages": [*skipped, response], "new_mentions": [], "new_uploaded_files": []}

    return finalize
