"""Several editor sessions at once: wall time of three concurrent prompts against three in a row.

One `generalagent acp` process (spawned as an editor spawns it) serves three sessions; the
local OpenAI-compatible test server answers every prompt with the same streamed answer
(`--chunks` chunks, `--delay` seconds apart: a model that takes a while, as real ones do).
In the same process and run, the three prompts are sent one after another (`sequential_s`:
each awaited before the next is sent), then all three at once (`concurrent_s`). Since the
answers are paced by the model, sessions that run at once take about as long as one;
sessions served one at a time take three times as long. Then, each round, the three are
sent at once again and the first is cancelled (`session/cancel`) half-way through its
answer: the cancel must reach only its own session. Prints JSON:

    sequential_s, concurrent_s   wall time of the three prompts, each way
    ratio                        concurrent / sequential (1/3 is perfect overlap)
    per_prompt_s                 the model's pacing: chunks × delay
    cancel_latency_s             session/cancel sent -> its prompt answered "cancelled" (best)
    cancelled_share              how much of its answer the cancelled session had streamed
    others_whole                 every round, the other two answered in full ("end_turn")
    others_s                     their wall time in the round with the cancel (best)

    python -m bench.acp_sessions [--chunks 40] [--delay 0.05] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from acp import text_block  # noqa: E402

from tests.support.acp_editor import EditorClient, spawn  # noqa: E402
from tests.support.openai_server import Reply, ScriptedOpenAIServer  # noqa: E402

SESSIONS = 3


class CountingEditor(EditorClient):
    """The editor, counting the answer's characters each session received."""

    def __init__(self) -> None:
        super().__init__()
        self.chars: dict[str, int] = {}

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if update.session_update == "agent_message_chunk":
            self.chars[session_id] = self.chars.get(session_id, 0) + len(update.content.text)
        await super().session_update(session_id, update, **kwargs)


async def measure(
    env: dict[str, str], folder: Path, rounds: int, answer_chars: int, pace: float
) -> dict[str, Any]:
    client = CountingEditor()
    async with spawn(env, folder, client) as (conn, _process):
        await conn.initialize(protocol_version=1)
        ids = [(await conn.new_session(cwd=str(folder), mcp_servers=[])).session_id for _ in range(SESSIONS)]

        async def prompt(session_id: str) -> Any:
            reply = await conn.prompt(session_id=session_id, prompt=[text_block("讲个故事")])
            assert reply.stop_reason == "end_turn", reply
            return reply

        await prompt(ids[0])  # the agent loads on the first prompt: not timed
        times: dict[str, list[Any]] = {"sequential": [], "concurrent": []}
        for _ in range(rounds):  # in lockstep, so load from elsewhere slows both alike
            started = time.perf_counter()
            for session_id in ids:
                await prompt(session_id)
            times["sequential"].append(time.perf_counter() - started)
            started = time.perf_counter()
            await asyncio.gather(*(prompt(session_id) for session_id in ids))
            times["concurrent"].append(time.perf_counter() - started)
            cancel = await cancel_one(conn, client, ids, pace / 2)
            for key, value in cancel.items():
                times.setdefault(key, []).append(value)
        times["others_whole"] = [
            all(whole == answer_chars for whole in wholes) for wholes in times.pop("others_chars")
        ]
        return times


async def cancel_one(conn: Any, client: CountingEditor, ids: list[str], after: float) -> dict[str, Any]:
    """The three prompts at once, the first cancelled `after` seconds in: how long the cancel
    took to end its prompt, how far its answer got, and what the other two received."""
    client.chars.clear()
    started = time.perf_counter()
    tasks = [
        asyncio.create_task(conn.prompt(session_id=session_id, prompt=[text_block("讲个故事")]))
        for session_id in ids
    ]
    await asyncio.sleep(after)
    sent = time.perf_counter()
    await conn.cancel(session_id=ids[0])
    cancelled = await tasks[0]
    latency = time.perf_counter() - sent
    assert cancelled.stop_reason == "cancelled", cancelled
    others = await asyncio.gather(*tasks[1:])
    return {
        "cancel_latency": latency,
        "cancelled_chars": client.chars.get(ids[0], 0),
        "others_chars": [client.chars.get(session_id, 0) for session_id in ids[1:]],
        "others_end_turn": all(reply.stop_reason == "end_turn" for reply in others),
        "others": time.perf_counter() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=40)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    text = "一二三四" * args.chunks

    with (
        tempfile.TemporaryDirectory() as tmp,
        ScriptedOpenAIServer(
            responder=lambda request: Reply(text=text, chunk_chars=4, chunk_delay=args.delay)
        ) as server,
    ):
        home = Path(tmp)
        folder = home / "work"
        folder.mkdir()
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MODEL_"))},
            "MODEL_NAME": "bench-model",
            "OPENAI_API_KEY": "sk-bench",
            "OPENAI_BASE_URL": server.base_url,
            "MODEL_MAX_RETRIES": "0",
            "DATA_DIR": str(home / "data"),
            "GENERALAGENT_CONFIG_DIR": str(home / "config"),
        }
        # An editor session in an undecided folder asks whether to trust it: this one was
        # answered "no" before (nothing in it to trust), as tests/support/environment.py does.
        os.environ["GENERALAGENT_CONFIG_DIR"] = env["GENERALAGENT_CONFIG_DIR"]
        from tests.support.environment import decline_if_plain

        decline_if_plain(folder)
        times = asyncio.run(measure(env, folder, args.rounds, len(text), args.chunks * args.delay))
    sequential, concurrent = min(times["sequential"]), min(times["concurrent"])
    print(
        json.dumps(
            {
                "sessions": SESSIONS,
                "per_prompt_s": round(args.chunks * args.delay, 3),
                "sequential_s": round(sequential, 3),
                "concurrent_s": round(concurrent, 3),
                "ratio": round(concurrent / sequential, 3),
                "cancel_latency_s": round(min(times["cancel_latency"]), 3),
                "cancelled_share": [round(chars / len(text), 3) for chars in times["cancelled_chars"]],
                "others_whole": all(times["others_whole"]) and all(times["others_end_turn"]),
                "others_s": round(min(times["others"]), 3),
                "rounds": {
                    k: [round(v, 3) for v in vs]
                    for k, vs in times.items()
                    if k in ("sequential", "concurrent", "cancel_latency", "others")
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
