"""How `sessions.db` and the time of a turn grow with a session's length, printed as JSON.

Runs the real agent (`load_agent`: the graph, the tools, SQLite checkpoints, `ChatOpenAI`)
against the local OpenAI-compatible test server. Every turn is what a document session
looks like: the model calls `read_file` on a 2 KB upload (a real tool, a real workspace),
then answers in a few lines. At 25, 100 and 400 turns it reports:

    db_bytes            sessions.db plus its WAL, as on disk
    conversation_bytes  the thread's messages as JSON: the conversation itself
    db_over_conversation  the first divided by the second
    turn_ms             mean wall time of the 10 turns before the mark (the model is local
                        and answers at once, so this is the agent's own overhead)

and the growth exponent of db_bytes (least squares of log bytes on log turns over the
marks: 1 is linear, 2 quadratic). The variants run in the same process in lockstep (a
turn of each in turn, so load from elsewhere slows both alike): `baseline` is LangGraph's plain SqliteSaver (every checkpoint of every step kept,
as before issue 14) with compaction off; `generalagent` is the agent as configured
(checkpoints pruned as the session goes, compaction on); `writes` is the same agent whose
every turn also rewrites one of five files under outputs/ with write_file, so db_bytes
counts snapshots.db too (the file versions /rewind keeps, snapshots.py), also shown alone
as snapshot_bytes.

    python -m bench.session_storage [--turns 400] [--variants baseline,generalagent]
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from langchain_core.messages import messages_to_dict  # noqa: E402

from generalAgent.agent.loading import load_agent  # noqa: E402
from generalAgent.config.settings import Settings, load_settings  # noqa: E402
from generalAgent.graph.turn import main_turn_input  # noqa: E402
from generalAgent.snapshots import SnapshotStore  # noqa: E402
from generalAgent.tools.workspace import Workspace  # noqa: E402
from tests.support.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ToolCall  # noqa: E402

MARKS = (25, 100, 400)
WINDOW = 10  # turns averaged for turn_ms
SESSION = "bench-storage"
RESULT_FILE = "uploads/result.txt"
ANSWER = (
    "The file lists the quarterly figures: revenue grew 12% year on year and the enterprise "
    "segment drove most of it. 文件列出了季度数据：营收同比增长 12%，主要来自企业客户。"
)
SUMMARY = (
    "Earlier turns: the user asked about result.txt several times; it lists quarterly revenue "
    "(+12% year on year, enterprise segment). 用户多次询问 result.txt 的季度数据。"
)


def tool_result_text() -> str:
    """About 2 KB of text, as read_file returns it (line numbers added by the tool)."""
    lines = [f"row {i:02d}: region {i % 7}, revenue {1000 + 37 * i} k, growth {i % 13}%" for i in range(46)]
    return "\n".join(lines) + "\n"


def responder(request: RecordedRequest) -> Reply:
    """A read_file call for each new question, then an answer; summaries when asked (no tools)."""
    if not request.body.get("tools"):
        return Reply(text=SUMMARY)
    last = request.messages[-1]
    if last["role"] == "tool" or (len(request.messages) >= 2 and request.messages[-2]["role"] == "tool"):
        return Reply(text=ANSWER)
    return Reply(tool_calls=[ToolCall("read_file", {"path": RESULT_FILE})])


def writing_responder(request: RecordedRequest) -> Reply:
    """The `writes` variant: each question rewrites outputs/notes-<turn % 5>.md, then an answer."""
    if not request.body.get("tools"):
        return Reply(text=SUMMARY)
    last = request.messages[-1]
    if last["role"] == "tool" or (len(request.messages) >= 2 and request.messages[-2]["role"] == "tool"):
        return Reply(text=ANSWER)
    turn = int(str(last["content"]).split(":")[0].split()[-1])
    content = f"Notes of turn {turn}\n" + tool_result_text()
    return Reply(
        tool_calls=[ToolCall("write_file", {"path": f"outputs/notes-{turn % 5}.md", "content": content})]
    )


def make_settings(data_dir: Path, base_url: str, compaction: bool) -> Settings:
    return load_settings(
        env_file=None,
        model={"model_name": "test-model", "openai_api_key": "sk-bench", "openai_base_url": base_url},
        governance={"max_message_history": 40, "compact_history": compaction},
        paths={"data_dir": data_dir},
    )


def plain_saver(path: Path) -> Any:
    """LangGraph's SqliteSaver as the project opened it before issue 14: nothing pruned."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    saver = SqliteSaver(conn)
    saver.setup()
    return saver


def db_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


class Session:
    """One variant's agent, model server and thread, advanced a turn at a time."""

    def __init__(self, variant: str, tmp: Path) -> None:
        self.server = ScriptedOpenAIServer(
            responder=writing_responder if variant == "writes" else responder
        ).start()
        self.settings = make_settings(tmp, self.server.base_url, compaction=variant != "baseline")
        self.agent = load_agent(self.settings)
        if variant == "baseline":
            from generalAgent.graph.builder import build_graph
            from generalAgent.graph.checkpoints import close_checkpointer

            close_checkpointer(self.agent.checkpointer)
            self.agent.checkpointer = plain_saver(self.settings.paths.sessions_db)
            self.agent.graph = build_graph(self.agent.parts, self.agent.checkpointer)
        workspace = Workspace.for_session(self.settings.paths.workspaces_dir, SESSION)
        (workspace.root / RESULT_FILE).write_text(tool_result_text(), encoding="utf-8")
        self.config = {"configurable": {"thread_id": SESSION}, "recursion_limit": 1000}
        self.durations: list[float] = []
        self.points: list[dict[str, Any]] = []

    def turn(self, turn: int) -> None:
        question = f"Turn {turn}: what does result.txt say about region {turn % 7}?"
        started = time.perf_counter()
        self.agent.graph.invoke(
            main_turn_input(question, session_id=SESSION, max_loops=self.settings.governance.max_loops),
            self.config,
        )
        self.durations.append(time.perf_counter() - started)

    def mark(self, turn: int) -> None:
        messages = self.agent.graph.get_state(self.config).values["messages"]
        conversation = len(json.dumps(messages_to_dict(messages), ensure_ascii=False).encode())
        snapshots = db_bytes(SnapshotStore.in_data_dir(self.settings.paths.data_dir).db_path)
        size = db_bytes(self.settings.paths.sessions_db) + snapshots
        recent = self.durations[-WINDOW:]
        self.points.append(
            {
                "turns": turn,
                "db_bytes": size,
                "db_mb": round(size / 1e6, 2),
                "snapshot_bytes": snapshots,
                "conversation_bytes": conversation,
                "db_over_conversation": round(size / conversation, 2),
                "turn_ms": round(1000 * sum(recent) / len(recent), 1),
            }
        )

    def close(self) -> dict[str, Any]:
        self.agent.close()
        self.server.stop()
        return {
            "points": self.points,
            "growth_exponent": growth_exponent([(p["turns"], p["db_bytes"]) for p in self.points]),
            "model_requests": len(self.server.chat_requests),
        }


def run_variants(variants: list[str], turns: int) -> dict[str, dict[str, Any]]:
    """All variants in lockstep, a turn of each in turn, so load from elsewhere hits them alike."""
    marks = [m for m in MARKS if m <= turns]
    with tempfile.TemporaryDirectory() as tmp:
        sessions = {variant: Session(variant, Path(tmp) / variant) for variant in variants}
        for turn in range(1, turns + 1):
            for session in sessions.values():
                session.turn(turn)
            if turn in marks:
                for session in sessions.values():
                    session.mark(turn)
        return {variant: session.close() for variant, session in sessions.items()}


def growth_exponent(points: list[tuple[int, int]]) -> float | None:
    """Slope of log(bytes) against log(turns), least squares."""
    if len(points) < 2:
        return None
    xs = [math.log(t) for t, _ in points]
    ys = [math.log(b) for _, b in points]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mean_x) ** 2 for x in xs
    )
    return round(slope, 2)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--variants", default="baseline,generalagent")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"tool_result_bytes": len(tool_result_text().encode())}
    result.update(run_variants(args.variants.split(","), args.turns))
    if "baseline" in result and "generalagent" in result:
        base, ours = result["baseline"]["points"], result["generalagent"]["points"]
        result["baseline_over_generalagent"] = {
            str(b["turns"]): {
                "db_bytes": round(b["db_bytes"] / o["db_bytes"], 1),
                "turn_ms": round(b["turn_ms"] / o["turn_ms"], 2),
            }
            for b, o in zip(base, ours, strict=True)
        }
    result["targets"] = {
        "growth_exponent": "<= 1.1",
        "db_over_conversation": "< 10",
        "db_400_turns": "tens of MB",
    }
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
