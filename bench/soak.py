"""Soak: 1,000 scripted turns with faults injected at random, printed as JSON.

The real agent (`load_agent`: graph, tools, SQLite checkpoints, `ChatOpenAI`) answers
turns from the local OpenAI-compatible test server the way the chat does (`run_turn`,
with `/retry` after an error), in sessions of 50 turns, while a seeded random choice
injects a fault into about half of them:

    rate_limit      429 with Retry-After, retried by the client     (no error shown)
    server_error    500 twice: the retry fails too                   (error shown, /retry)
    reset           the connection is cut mid-stream                 (error shown, /retry)
    timeout         the endpoint hangs past MODEL_TIMEOUT twice      (error shown, /retry)
    invalid_json    tool-call arguments that are not JSON            (error answer, model goes on)
    unknown_tool    a call to a tool that does not exist             (error answer, model goes on)
    big_result      read_file of a 2 MB log with no limit            (cut to 60,000 characters)
    endless_tools   tool calls until MAX_LOOPS, then finalize        (answer without tools)
    ctrl_c          SIGINT while the answer streams                  (cancelled, history repaired)
    restart         the process "restarts": the agent is closed and loaded again before the turn

Reported: turns completed (answered, after at most one /retry), turns the user cancelled,
turns left unanswered, errors shown to the user, requests with an invalid tool-call
history (target 0), stored histories with a problem at the end of each session (target
0), peak memory (VmHWM) and resident memory after warm-up and at the end (target: flat).

    python -m bench.soak [--turns 1000] [--seed 7]
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import multiprocessing
import os
import random
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from generalAgent.agent.loading import LoadedAgent, limit_malloc_arenas, load_agent  # noqa: E402
from generalAgent.agent.storage_errors import describe_storage_error  # noqa: E402
from generalAgent.agent.turn_input import prepare_turn  # noqa: E402
from generalAgent.agent.turns import run_turn  # noqa: E402
from generalAgent.config.settings import Settings, load_settings  # noqa: E402
from generalAgent.graph.turn import thread_config  # noqa: E402
from generalAgent.providers.errors import describe_model_error  # noqa: E402
from generalAgent.tools.run_context import RunContext, SessionScope  # noqa: E402
from tests.support.history import stored_history_problems  # noqa: E402
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ToolCall  # noqa: E402
from tests.support.summaries import extractive_summary  # noqa: E402

SESSION_TURNS = 50
WARM_UP_TURNS = 100
MAX_LOOPS = 4
MODEL_TIMEOUT = 0.3  # seconds: the timeout fault costs two of these
FAULTS = {  # name: share of turns
    "rate_limit": 0.06,
    "server_error": 0.05,
    "reset": 0.05,
    "timeout": 0.04,
    "invalid_json": 0.06,
    "unknown_tool": 0.05,
    "big_result": 0.04,
    "endless_tools": 0.04,
    "ctrl_c": 0.04,
    "restart": 0.02,
}
ANSWER = "Here is the summary: revenue grew 12% year on year. 营收同比增长 12%。 "
BIG_LOG_BYTES = 2_000_000


class QuietView:
    """The chat's view without a terminal: counts what the user would have seen."""

    def __init__(self) -> None:
        self.text_chunks = 0
        self.tool_calls = 0

    def on_event(self, event: Any) -> None:
        from generalAgent.agent.events import TextChunk, ToolStart

        if isinstance(event, TextChunk):
            self.text_chunks += 1
        elif isinstance(event, ToolStart):
            self.tool_calls += 1

    def approve(self, request: Any) -> str:
        return "no"

    def close(self) -> None:
        return


def script_for(fault: str | None) -> list[Reply]:
    """The replies one turn consumes, first attempt and (after an error) the retry."""
    answer = Reply(text=ANSWER * 3)
    if fault is None:
        return [Reply(tool_calls=[ToolCall("now", {})]), answer] if random.random() < 0.5 else [answer]
    return {
        "rate_limit": [Reply(status=429, retry_after=0.05), answer],
        "server_error": [Reply(status=500), Reply(status=500), answer],
        "reset": [Reply(text=ANSWER * 10, cut_after_chunks=6), answer],
        "timeout": [Reply(hang=True), Reply(hang=True), answer],
        "invalid_json": [
            Reply(tool_calls=[ToolCall("write_file", '{"path": "outputs/a.md", "content": "cut')]),
            answer,
        ],
        "unknown_tool": [Reply(tool_calls=[ToolCall("format_disk", {"drive": "C"})]), answer],
        "big_result": [
            Reply(tool_calls=[ToolCall("read_file", {"path": "uploads/big.log", "limit": 1_000_000})]),
            answer,
        ],
        "endless_tools": [Reply(tool_calls=[ToolCall("todo_read", {})]) for _ in range(MAX_LOOPS)] + [answer],
        "ctrl_c": [Reply(text=ANSWER * 20, chunk_chars=8, chunk_delay=0.005), answer],
        "restart": [answer],
    }[fault]


class ModelServerProcess:
    """The scripted model server in a process of its own, so the figures are the agent's alone.

    Run in this process, the server's own threads and request bodies would be measured too.
    """

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child,), daemon=True)
        self._process.start()
        self.base_url: str = self._conn.recv()

    def add(self, *replies: Reply) -> None:
        self._conn.send(("add", replies))

    def clear_script(self) -> None:
        self._conn.send(("clear", ()))

    def counts(self) -> tuple[int, int]:
        """(chat requests, requests with an invalid tool-call history)."""
        self._conn.send(("counts", ()))
        return self._conn.recv()

    def close(self) -> None:
        self._conn.send(("stop", ()))
        self._process.join(10)


def _summary(request: Any) -> Reply:
    """Compaction's summary requests, answered apart from the turn's script."""
    return Reply(text=extractive_summary(request.messages))


def _serve(conn: Any) -> None:
    with ScriptedOpenAIServer(keep_requests=False, summaries=_summary) as server:
        conn.send(server.base_url)
        while True:
            command, replies = conn.recv()
            if command == "add":
                server.add(*replies)
            elif command == "clear":
                server.clear_script()
            elif command == "counts":
                conn.send((server.chat_request_count, server.invalid_history_count))
            else:
                return


def memory_kb(field: str) -> int:
    """VmRSS (resident now) or VmHWM (peak resident) of this process, in KB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def new_session(agent: LoadedAgent, number: int) -> str:
    session_id = f"soak-{number:04d}"
    uploads = agent.parts.env.workspace_for(session_id).root / "uploads"
    line = "2026-11-21 12:00:00 INFO request served in 12 ms " + "x" * 200 + "\n"
    (uploads / "big.log").write_text(line * (BIG_LOG_BYTES // len(line)), encoding="utf-8")
    return session_id


def run(turns: int, seed: int) -> dict[str, Any]:
    random.seed(seed)
    names, weights = list(FAULTS), list(FAULTS.values())
    stats: dict[str, Any] = {
        "turns": turns,
        "seed": seed,
        "turns_completed": 0,
        "errors_shown": 0,
        "retries": 0,
        "cancelled": 0,
        "unanswered_turns": 0,
        "faults": dict.fromkeys(FAULTS, 0),
    }
    server = ModelServerProcess()
    with tempfile.TemporaryDirectory(prefix="generalagent-soak-") as tmp:
        settings: Settings = load_settings(
            env_file=None,
            model={
                "model_name": "test-model",
                "openai_api_key": "sk-soak",
                "openai_base_url": server.base_url,
                "model_max_retries": 1,
                "model_timeout": MODEL_TIMEOUT,
            },
            governance={"max_loops": MAX_LOOPS},
            paths={"data_dir": Path(tmp) / "data"},
        )
        agent = load_agent(settings)
        sessions_checked, history_problems = 0, 0
        memory_samples: list[tuple[int, int]] = []
        started = time.perf_counter()
        session_id = ""
        for turn in range(turns):
            if turn % SESSION_TURNS == 0:
                if session_id:
                    history_problems += check_session(agent, session_id)
                    sessions_checked += 1
                session_id = new_session(agent, turn // SESSION_TURNS)
            fault = random.choices(names, weights)[0] if random.random() < sum(weights) else None
            if fault:
                stats["faults"][fault] += 1
            if fault == "restart":
                agent.close()
                agent = load_agent(settings)
            server.add(*script_for(fault))
            outcome = one_turn(agent, settings, session_id, f"Question {turn}: summarise the report.", fault)
            for key in ("errors_shown", "retries", "cancelled"):
                stats[key] += outcome[key]
            stats["turns_completed"] += outcome["answered"]
            stats["unanswered_turns"] += not (outcome["answered"] or outcome["cancelled"])
            server.clear_script()  # a cancelled turn leaves its unused replies behind
            if (turn + 1) % 50 == 0:
                gc.collect()
                memory_samples.append((turn + 1, memory_kb("VmRSS")))
        history_problems += check_session(agent, session_id)
        sessions_checked += 1
        elapsed = time.perf_counter() - started
        agent.close()
        requests, invalid_requests = server.counts()
        server.close()
        warm = next(kb for done, kb in memory_samples if done >= WARM_UP_TURNS)
        stats.update(
            {
                "seconds": round(elapsed, 1),
                "turns_per_second": round(turns / elapsed, 1),
                "model_requests": requests,
                "invalid_history_requests": invalid_requests,
                "sessions_checked": sessions_checked,
                "stored_history_problems": history_problems,
                "peak_rss_mb": round(memory_kb("VmHWM") / 1024, 1),
                "rss_after_warm_up_mb": round(warm / 1024, 1),
                "rss_at_end_mb": round(memory_samples[-1][1] / 1024, 1),
                "rss_growth_after_warm_up_mb": round((memory_samples[-1][1] - warm) / 1024, 1),
                "rss_every_50_turns_mb": [round(kb / 1024) for _, kb in memory_samples],
            }
        )
    return stats


def one_turn(
    agent: LoadedAgent, settings: Settings, session_id: str, text: str, fault: str | None
) -> dict[str, int]:
    """One user turn as the chat runs it, with one /retry if it ends in an error."""
    config = thread_config(session_id)

    def describe(exc: BaseException) -> str | None:
        return describe_model_error(exc, settings.model) or describe_storage_error(exc, settings.paths)

    prepared = prepare_turn(text, agent, config, session_id, Path.cwd())
    outcome = {"answered": 0, "errors_shown": 0, "retries": 0, "cancelled": 0}
    scope = SessionScope(session_id, Path.cwd())
    context = RunContext(scope=scope)
    timer = None
    if fault == "ctrl_c":
        # run_turn handles SIGINT while it runs; one arriving just after the turn is ignored.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        timer = threading.Timer(0.15, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
    try:
        result = run_turn(
            agent.graph,
            config,
            prepared.graph_input,
            QuietView(),
            describe,
            on_cancel=scope.cancel,
            context=context,
        )
    finally:
        if timer is not None:
            timer.join()
            signal.signal(signal.SIGINT, previous)
    if result.cancelled:
        outcome["cancelled"] = 1
        return outcome
    if result.error:
        outcome["errors_shown"] = 1
        if agent.graph.get_state(config).next:
            outcome["retries"] = 1
            scope.start_turn()
            result = run_turn(agent.graph, config, None, QuietView(), describe, context=context)
    outcome["answered"] = int(result.ok and bool(result.answer.strip()))
    return outcome


def check_session(agent: LoadedAgent, session_id: str) -> int:
    config = {"configurable": {"thread_id": session_id}}
    messages = agent.graph.get_state(config).values.get("messages", [])
    return len(stored_history_problems(messages))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    limit_malloc_arenas()  # as the generalagent command does at start
    # Library warnings (e.g. the callback that stops a cancelled stream) are not the output.
    logging.getLogger().addHandler(logging.NullHandler())
    print(json.dumps(run(args.turns, args.seed), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
