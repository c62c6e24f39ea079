"""Several editor sessions at once: wall time of three concurrent prompts against three in a row.

One `generalagent acp` process (spawned as an editor spawns it) serves three sessions; the
local OpenAI-compatible test server answers every prompt with the same streamed answer
(`--chunks` chunks, `--delay` seconds apart: a model that takes a while, as real ones do).
In the same process and run, the three prompts are sent one after another (`sequential_s`:
each awaited before the next is sent), then all three at once (`concurrent_s`). Since the
answers are paced by the model, sessions that run at once take about as long as one;
sessions served one at a time take three times as long. Prints JSON:

    sequential_s, concurrent_s   wall time of the three prompts, each way
    ratio                        concurrent / sequential (1/3 is perfect overlap)
    per_prompt_s                 the model's pacing: chunks × delay

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


async def measure(env: dict[str, str], folder: Path, rounds: int) -> dict[str, list[float]]:
    client = EditorClient()
    async with spawn(env, folder, client) as (conn, _process):
        await conn.initialize(protocol_version=1)
        ids = [(await conn.new_session(cwd=str(folder), mcp_servers=[])).session_id for _ in range(SESSIONS)]

        async def prompt(session_id: str) -> Any:
            reply = await conn.prompt(session_id=session_id, prompt=[text_block("讲个故事")])
            assert reply.stop_reason == "end_turn", reply
            return reply

        await prompt(ids[0])  # the agent loads on the first prompt: not timed
        times: dict[str, list[float]] = {"sequential": [], "concurrent": []}
        for _ in range(rounds):  # in lockstep, so load from elsewhere slows both alike
            started = time.perf_counter()
            for session_id in ids:
                await prompt(session_id)
            times["sequential"].append(time.perf_counter() - started)
            started = time.perf_counter()
            await asyncio.gather(*(prompt(session_id) for session_id in ids))
            times["concurrent"].append(time.perf_counter() - started)
        return times


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
        times = asyncio.run(measure(env, folder, args.rounds))
    sequential, concurrent = min(times["sequential"]), min(times["concurrent"])
    print(
        json.dumps(
            {
                "sessions": SESSIONS,
                "per_prompt_s": round(args.chunks * args.delay, 3),
                "sequential_s": round(sequential, 3),
                "concurrent_s": round(concurrent, 3),
                "ratio": round(concurrent / sequential, 3),
                "rounds": {k: [round(v, 3) for v in vs] for k, vs in times.items()},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
