"""Start-up and per-turn overhead of the agent, printed as JSON.

1. Seconds from process start to the interactive prompt (pexpect, in a pseudo-terminal),
   median of several runs, beside the time a bare `import langgraph, langchain_openai`
   takes in the same run: the ratio shows what loading in the background saves.
2. Graph overhead per turn excluding the model: 100 turns through the real compiled
   graph with the SQLite checkpointer and a scripted model that answers instantly, each
   turn one tool call (`now`) and an answer.
3. What MCP servers cost at start-up: time to prompt and to the first answer (a message
   sent as soon as the prompt shows, answered by the local OpenAI-compatible test server)
   with no mcp.json, and with one that holds a server that never answers beside one
   that works, side by side in the same run.

4. `-p hi` answered by the local test server beside the bare import, alternately in
   fresh processes, wall and CPU time (print_mode_ratio); `--baseline DIR` runs another
   commit's source tree in the same rotation.
5. Turn time of the agent's graph beside plain LangGraph (`create_react_agent` +
   SqliteSaver) on the same growing history, in lockstep, at 10, 100 and 400 turns, with
   the growth exponent of each (turn_overhead_vs_plain).
6. Leaving at once: seconds from Ctrl-D, pressed the moment the prompt shows (the agent
   still loading), to the end of the process, with no MCP server and with one that never
   answers, and whether that server outlived the chat (exit_while_loading); with
   `--baseline DIR` that tree's chat in the same rotation.

    python -m bench.startup [--runs 7] [--turns 100] [--parts prompt,print,overhead,versus_plain,mcp,exit]
                            [--baseline DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def time_to_prompt(
    runs: int, mcp_servers: dict | None = None, base_url: str = "http://127.0.0.1:9/v1", answer: str = ""
) -> list[float]:
    """Seconds to the prompt; with `answer`, to that answer of a message sent at the prompt."""
    import pexpect

    times = []
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "MODEL_NAME": "bench-model",
            "OPENAI_API_KEY": "sk-bench",
            "OPENAI_BASE_URL": base_url,
            "DATA_DIR": str(Path(tmp) / "data"),
            "PROMPT_TOOLKIT_NO_CPR": "1",
            "GENERALAGENT_CONFIG_DIR": str(Path(tmp) / "user-config"),  # no developer's own servers
            # Longer than any measurement: a hanging server is still "starting" throughout.
            "MCP_STARTUP_TIMEOUT": "120",
        }
        from generalAgent.config.trust import STORE_NAME, TrustStore

        # The chat asks about a folder once; a returning user's folder is decided (and the
        # folder's mcp.json is used only in a trusted folder, docs/security.md).
        TrustStore(Path(tmp) / "user-config" / STORE_NAME).remember(Path(tmp), mcp_servers is not None)
        if mcp_servers is not None:
            (Path(tmp) / "mcp.json").write_text(json.dumps({"mcpServers": mcp_servers}), encoding="utf-8")
        for _ in range(runs):
            started = time.perf_counter()
            child = pexpect.spawn(
                sys.executable, ["-m", "generalAgent"], env=env, cwd=tmp, encoding="utf-8", timeout=60
            )
            child.expect("›")
            if answer:
                child.sendline("ping")
                child.expect(answer)
            times.append(time.perf_counter() - started)
            if answer:
                child.expect("›")  # Ctrl-D only ends the chat at the prompt
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
    return times


def mcp_start_up(runs: int) -> dict[str, object]:
    """Time to prompt and to a first answer with no MCP server, one that works, and one that
    never answers beside it; the three are interleaved run by run, so drift hits them alike."""
    from tests.support.mcp_config import stdio_entry
    from tests.support.openai_server import ScriptedOpenAIServer

    setups: dict[str, dict | None] = {
        "none": None,
        "working": {"notes": stdio_entry(trust=True)},
        "hanging_and_working": {"hang": stdio_entry("--hang"), "notes": stdio_entry(trust=True)},
    }
    prompt: dict[str, list[float]] = {name: [] for name in setups}
    answer: dict[str, list[float]] = {name: [] for name in setups}
    offered: dict[str, int] = {name: 0 for name in setups}  # first requests that had notes' tools
    with ScriptedOpenAIServer(default_text="pong") as model:
        for _ in range(runs):
            for name, servers in setups.items():
                prompt[name] += time_to_prompt(1, servers)
                answer[name] += time_to_prompt(1, servers, model.base_url, "pong")
                offered[name] += "notes__echo" in model.chat_requests[-1].tool_names
    median = {name: statistics.median(values) for name, values in prompt.items()}
    first = {name: statistics.median(values) for name, values in answer.items()}
    return {
        "runs": runs,
        "servers": "stdio servers of tests/support/mcp_server.py; MCP_STARTUP_TIMEOUT=120 (the hang never ends)",
        "time_to_prompt_s": {name: round(value, 3) for name, value in median.items()},
        "time_to_first_answer_s": {name: round(value, 3) for name, value in first.items()},
        "first_message_offered_the_working_servers_tools": offered,
        "first_answer_ratio_working_vs_none": round(first["working"] / first["none"], 3),
        "first_answer_ratio_hanging_vs_working": round(first["hanging_and_working"] / first["working"], 3),
    }


def exit_while_loading(runs: int, baseline: Path | None = None) -> dict[str, Any]:
    """Ctrl-D the moment the prompt shows, while the agent loads: seconds to the process's
    end, without and with a stdio server that never answers; trees and set-ups interleaved."""
    import uuid

    import pexpect

    from tests.support.mcp_config import stdio_entry
    from tests.support.processes import processes_with

    trees = {"current": None, "baseline": baseline} if baseline is not None else {"current": None}
    seconds: dict[str, list[float]] = {}
    left_running: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            for setup in ("no_server", "hanging_server"):
                for tree, source in trees.items():
                    key = f"{tree}_{setup}"
                    marker = f"bench-exit-{uuid.uuid4().hex[:8]}"
                    home = Path(tmp) / marker
                    (home / "folder").mkdir(parents=True)
                    env = {
                        **os.environ,
                        "MODEL_NAME": "bench-model",
                        "OPENAI_API_KEY": "sk-bench",
                        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                        "DATA_DIR": str(home / "data"),
                        "PROMPT_TOOLKIT_NO_CPR": "1",
                        "GENERALAGENT_CONFIG_DIR": str(home / "user-config"),
                        "MCP_STARTUP_TIMEOUT": "120",
                    }
                    if source is not None:
                        env["PYTHONPATH"] = str(source)
                    if setup == "hanging_server":
                        config = home / "mcp.json"
                        servers = {"hang": stdio_entry("--hang", "--name", marker)}
                        config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
                        env["MCP_CONFIG"] = str(config)
                    child = pexpect.spawn(
                        sys.executable,
                        ["-m", "generalAgent"],
                        env=env,
                        cwd=str(home / "folder"),
                        encoding="utf-8",
                        timeout=120,
                    )
                    if child.expect(["›", r"\[y/N\]"]) == 1:  # a folder not decided yet
                        child.sendline("n")
                        child.expect("›")
                    started = time.perf_counter()
                    child.sendcontrol("d")
                    child.expect(pexpect.EOF)
                    seconds.setdefault(key, []).append(time.perf_counter() - started)
                    left = processes_with(marker) if setup == "hanging_server" else []
                    left_running[key] = left_running.get(key, 0) + len(left)
                    for pid in left:  # the bench cleans up what a chat left behind
                        os.kill(pid, 15)
    return {
        "runs": runs,
        "seconds_to_exit_median": {key: round(statistics.median(v), 3) for key, v in seconds.items()},
        "seconds_to_exit_max": {key: round(max(v), 3) for key, v in seconds.items()},
        "servers_left_running": left_running,
    }


BARE_IMPORT = [sys.executable, "-c", "import langgraph.graph, langchain_openai"]


def timed_run(command: list[str], **kwargs: Any) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall seconds, CPU seconds of the child: user + system, the finished process).

    CPU time is what the child itself computed: on a shared machine, where the wall time
    of the same run varies two-fold with the load, it varies far less."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, **kwargs)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done


def time_heavy_import(runs: int) -> list[float]:
    return [timed_run(BARE_IMPORT, check=True)[0] for _ in range(runs)]


def graph_overhead(turns: int, with_tool: bool) -> dict[str, float]:
    """Per-turn wall time of `graph.invoke` minus the scripted model's own time.

    The history grows by 2 (plain) or 4 (tool) messages a turn, as in a real session,
    so the last turns show what a long conversation costs (mostly LangGraph loading and
    saving the checkpointed message list).
    """
    from generalAgent.config.settings import load_settings
    from generalAgent.graph.checkpoints import open_sqlite_checkpointer
    from generalAgent.graph.context import PromptBuilder
    from tests.support.agent import build_test_agent, thread, user_turn
    from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

    calls = {"n": 0}

    def responder(request):
        calls["n"] += 1  # with a tool: odd calls ask for it, even calls answer
        return ai("", tool_call("now")) if with_tool and calls["n"] % 2 else ai("done")

    history_seconds = [0.0]
    original_history = PromptBuilder.history

    def timed_history(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return original_history(self, *args, **kwargs)
        finally:
            history_seconds[0] += time.perf_counter() - started

    PromptBuilder.history = timed_history  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            settings = load_settings(
                env_file=None,
                model={"model_name": "bench", "openai_api_key": "sk"},
                paths={"data_dir": Path(tmp)},
            )
            model = ScriptedChatModel(responder=responder)
            _, graph = build_test_agent(settings, model, open_sqlite_checkpointer(settings.paths.sessions_db))
            per_turn = []
            for turn in range(turns):
                started = time.perf_counter()
                graph.invoke(user_turn(f"turn {turn}: what time is it?", settings), thread("bench"))
                per_turn.append(time.perf_counter() - started)
            # The scripted model's own cost, measured alone on the same requests.
            alone = ScriptedChatModel(responder=lambda request: ai("done"))
            started = time.perf_counter()
            for request in list(model.requests):
                alone.invoke(request.messages)
            model_per_turn = (time.perf_counter() - started) / turns
    finally:
        PromptBuilder.history = original_history  # type: ignore[method-assign]
    overhead = [t - model_per_turn for t in per_turn]
    ms = lambda seconds: round(seconds * 1000, 2)  # noqa: E731
    return {
        "turns": turns,
        "messages_at_end": turns * (4 if with_tool else 2),
        "overhead_ms_mean": ms(statistics.mean(overhead)),
        "overhead_ms_first_10": ms(statistics.mean(overhead[:10])),
        "overhead_ms_last_10": ms(statistics.mean(overhead[-10:])),
        "overhead_ms_p95": ms(sorted(overhead)[int(0.95 * turns) - 1]),
        "of_which_history_preparation_ms": ms(history_seconds[0] / turns),
        "scripted_model_ms": ms(model_per_turn),
    }


def print_mode_ratio(runs: int, baseline: Path | None = None) -> dict[str, Any]:
    """`generalagent -p hi` (answered by the local test server, DATA_DIR already made) beside
    a bare `import langgraph.graph, langchain_openai`, alternately, in fresh processes; wall
    and CPU time. With `baseline` (a source tree of another commit, e.g. from `git archive`),
    that tree's `-p hi` runs in the same rotation, so before and after share the load."""
    from tests.support.openai_server import ScriptedOpenAIServer

    variants = ["current", "baseline"] if baseline is not None else ["current"]
    wall: dict[str, list[float]] = {name: [] for name in ["bare", *variants]}
    cpu: dict[str, list[float]] = {name: [] for name in wall}
    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAIServer(default_text="hello") as server:
        env = {
            **os.environ,
            "MODEL_NAME": "bench-model",
            "OPENAI_API_KEY": "sk-bench",
            "OPENAI_BASE_URL": server.base_url,
            "DATA_DIR": str(Path(tmp) / "data"),
            "GENERALAGENT_CONFIG_DIR": str(Path(tmp) / "user-config"),
        }
        # The baseline's package comes first on the path (the editable install's finder is last).
        envs = {"current": env, "baseline": {**env, "PYTHONPATH": str(baseline)}}
        command = [sys.executable, "-m", "generalAgent", "-p", "hi"]
        for name in variants:  # the data folder made, as a user's second command meets it
            subprocess.run(command, env=envs[name], cwd=tmp, capture_output=True, check=True)
        for _ in range(runs):
            seconds, used, _done = timed_run(BARE_IMPORT, check=True)
            wall["bare"].append(seconds)
            cpu["bare"].append(used)
            for name in variants:
                seconds, used, done = timed_run(
                    command, env=envs[name], cwd=tmp, capture_output=True, text=True, check=True
                )
                if done.stdout.strip() != "hello":
                    raise SystemExit(f"-p did not answer ({name}): {done.stderr[-1000:]}")
                wall[name].append(seconds)
                cpu[name].append(used)

    def ratios(times: dict[str, list[float]], name: str) -> list[float]:
        return [mine / bare for mine, bare in zip(times[name], times["bare"], strict=True)]

    result: dict[str, Any] = {
        "runs": runs,
        "bare_import_s_median": round(statistics.median(wall["bare"]), 3),
        "bare_import_cpu_s_median": round(statistics.median(cpu["bare"]), 3),
    }
    for name in variants:
        prefix = "" if name == "current" else "baseline_"
        wall_ratios, cpu_ratios = ratios(wall, name), ratios(cpu, name)
        result |= {
            f"{prefix}print_hi_s_median": round(statistics.median(wall[name]), 3),
            f"{prefix}print_hi_cpu_s_median": round(statistics.median(cpu[name]), 3),
            f"{prefix}ratio_median": round(statistics.median(wall_ratios), 2),
            f"{prefix}ratios": [round(r, 2) for r in wall_ratios],
            f"{prefix}cpu_ratio_median": round(statistics.median(cpu_ratios), 2),
            f"{prefix}cpu_ratios": [round(r, 2) for r in cpu_ratios],
        }
    if baseline is not None:  # the two side by side, run by run: the closest comparison
        paired = {
            "wall": [mine / base for mine, base in zip(wall["current"], wall["baseline"], strict=True)],
            "cpu": [mine / base for mine, base in zip(cpu["current"], cpu["baseline"], strict=True)],
        }
        result |= {
            "current_vs_baseline_ratio_median": round(statistics.median(paired["wall"]), 3),
            "current_vs_baseline_cpu_ratio_median": round(statistics.median(paired["cpu"]), 3),
        }
    result["target"] = "<= 1.3"
    return result


OVERHEAD_MARKS = (10, 100, 400)


class _TurnVariant:
    """One agent (ours or plain LangGraph) on SQLite, with a scripted model that answers at
    once: with a tool, odd model calls ask for `now` and even ones answer."""

    def __init__(self, kind: str, with_tool: bool, tmp: Path) -> None:
        import sqlite3
        import warnings

        from langchain_core.messages import HumanMessage
        from langchain_core.tools import tool
        from langgraph.checkpoint.sqlite import SqliteSaver

        from generalAgent.config.settings import load_settings
        from generalAgent.graph.checkpoints import open_sqlite_checkpointer
        from tests.support.agent import build_test_agent, thread, user_turn
        from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

        calls = {"n": 0}

        def responder(request: Any) -> Any:
            calls["n"] += 1
            return ai("", tool_call("now")) if with_tool and calls["n"] % 2 else ai("done")

        model = ScriptedChatModel(responder=responder)
        data = tmp / f"{kind}-{'tool' if with_tool else 'plain'}"
        settings = load_settings(
            env_file=None, model={"model_name": "bench", "openai_api_key": "sk"}, paths={"data_dir": data}
        )
        if kind == "generalagent":
            _, self.graph = build_test_agent(
                settings, model, open_sqlite_checkpointer(settings.paths.sessions_db)
            )
            self.turn_input = lambda text: user_turn(text, settings)
            self.config = thread("bench")
        else:
            from langgraph.prebuilt import create_react_agent

            @tool
            def now() -> str:
                """The current date and time (UTC)."""
                return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())

            data.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(data / "plain.db", check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            if kind == "plain-normal":  # the same durability as ours (graph/checkpoints.py)
                conn.execute("PRAGMA synchronous=NORMAL")
            with (
                warnings.catch_warnings()
            ):  # create_react_agent is deprecated in favour of langchain's create_agent
                warnings.simplefilter("ignore")
                self.graph = create_react_agent(model, [now], checkpointer=SqliteSaver(conn))
            self.turn_input = lambda text: {"messages": [HumanMessage(text)]}
            self.config = {"configurable": {"thread_id": "bench"}, "recursion_limit": 100}
        self.seconds: list[float] = []

    def turn(self, number: int) -> None:
        request = self.turn_input(f"turn {number}: what time is it?")
        started = time.perf_counter()
        self.graph.invoke(request, self.config)
        self.seconds.append(time.perf_counter() - started)


def turn_overhead_vs_plain(marks: tuple[int, ...] = OVERHEAD_MARKS, window: int = 10) -> dict[str, Any]:
    """Per-turn wall time of the agent's graph beside plain LangGraph (`create_react_agent` +
    SqliteSaver) on the same growing history, a turn of each in turn (lockstep, so load from
    elsewhere slows both alike), at each mark the mean of the `window` turns before it; and
    the growth exponent of each (slope of log time on log turns over the marks)."""
    import math

    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for with_tool in (False, True):
            ours = _TurnVariant("generalagent", with_tool, Path(tmp))
            plain = _TurnVariant("plain", with_tool, Path(tmp))
            normal = _TurnVariant("plain-normal", with_tool, Path(tmp))
            for number in range(1, max(marks) + 1):
                for variant in (ours, plain, normal):
                    variant.turn(number)
            points = []
            for mark in marks:
                mine, theirs, same = (
                    statistics.mean(v.seconds[mark - window : mark]) * 1000 for v in (ours, plain, normal)
                )
                points.append(
                    {
                        "turns": mark,
                        "generalagent_ms": round(mine, 2),
                        "plain_ms": round(theirs, 2),
                        "plain_synchronous_normal_ms": round(same, 2),
                        "ratio": round(mine / theirs, 2),
                        "ratio_to_plain_synchronous_normal": round(mine / same, 2),
                        # Turn by turn (lockstep pairs): one turn slowed by the machine
                        # moves the mean of ten, hardly their median.
                        "ratio_median_of_turns": round(
                            statistics.median(
                                a / b
                                for a, b in zip(
                                    ours.seconds[mark - window : mark],
                                    plain.seconds[mark - window : mark],
                                    strict=True,
                                )
                            ),
                            2,
                        ),
                    }
                )

            def exponent(key: str, points: list[dict[str, Any]] = points) -> float:
                xs = [math.log(p["turns"]) for p in points]
                ys = [math.log(p[key]) for p in points]
                mx, my = statistics.mean(xs), statistics.mean(ys)
                return round(
                    sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
                    / sum((x - mx) ** 2 for x in xs),
                    2,
                )

            result["tool_turn" if with_tool else "plain_turn"] = {
                "points": points,
                "growth_exponent": {
                    "generalagent": exponent("generalagent_ms"),
                    "plain": exponent("plain_ms"),
                    "plain_synchronous_normal": exponent("plain_synchronous_normal_ms"),
                },
            }
    result["baseline"] = (
        "langgraph.prebuilt.create_react_agent + SqliteSaver (WAL; synchronous FULL as SQLite defaults, "
        "and NORMAL as ours), same scripted model"
    )
    result["target"] = "ratio <= 1.0 at 400 turns"
    return result


PARTS = ("prompt", "print", "overhead", "versus_plain", "mcp", "exit")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--parts", default=",".join(PARTS), help="which measurements, comma-separated")
    parser.add_argument(
        "--repeat", type=int, default=1, help="versus_plain: rounds in this process, for the spread"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="print, exit: a source tree of another commit (git archive COMMIT | tar -x -C DIR) run in the same rotation",
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    result: dict[str, Any] = {}
    if "prompt" in parts:
        prompt = time_to_prompt(args.runs)
        heavy = time_heavy_import(args.runs)
        result["time_to_prompt_s"] = {
            "median": round(statistics.median(prompt), 3),
            "min": round(min(prompt), 3),
            "max": round(max(prompt), 3),
            "runs": args.runs,
        }
        result["import_langgraph_and_openai_s"] = {"median": round(statistics.median(heavy), 3)}
        result["prompt_vs_heavy_import_ratio"] = round(
            statistics.median(prompt) / statistics.median(heavy), 3
        )
        result["target_time_to_prompt_s"] = 1.0
    if "print" in parts:
        result["print_mode_vs_bare_import"] = print_mode_ratio(args.runs, args.baseline)
    if "overhead" in parts:
        result["graph_overhead_plain_turn"] = graph_overhead(args.turns, with_tool=False)
        result["graph_overhead_tool_turn"] = graph_overhead(args.turns, with_tool=True)
        result["target_overhead_ms_per_turn"] = 10
    if "versus_plain" in parts:
        rounds = [turn_overhead_vs_plain() for _ in range(args.repeat)]
        result["turn_overhead_vs_plain_langgraph"] = rounds[0] if args.repeat == 1 else rounds
        if args.repeat > 1:  # the spread of the 400-turn ratio over the rounds of this process
            result["turn_overhead_vs_plain_spread"] = {
                kind: {
                    f"{key}_at_{mark}": [
                        next(p[key] for p in r[kind]["points"] if p["turns"] == mark) for r in rounds
                    ]
                    for mark in OVERHEAD_MARKS
                    for key in ("ratio", "ratio_median_of_turns")
                }
                for kind in ("plain_turn", "tool_turn")
            }
    if "mcp" in parts:
        result["mcp_start_up"] = mcp_start_up(args.runs)
    if "exit" in parts:
        result["exit_while_loading"] = exit_while_loading(args.runs, args.baseline)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
