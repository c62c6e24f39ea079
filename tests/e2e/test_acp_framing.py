"""A line on the ACP's stdin that is not one JSON-RPC object is answered with an error and the
agent goes on: the line `[]` (an empty batch) ended it with an AttributeError."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


def test_malformed_batches_get_a_json_rpc_error_and_the_agent_goes_on(
    cli_env: dict[str, str], workdir: Path
) -> None:
    lines = ["[]", "[1, 2]", "42", "not json at all", json.dumps(INITIALIZE)]
    result = subprocess.run(
        [sys.executable, "-m", "generalAgent", "acp"],
        input="\n".join(lines) + "\n",
        env=cli_env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "AttributeError" not in result.stderr
    answers = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    errors = [a["error"]["code"] for a in answers if "error" in a]
    assert errors == [-32600, -32600, -32600, -32700]
    assert all(a["id"] is None for a in answers if "error" in a)
    (initialized,) = [a for a in answers if a.get("id") == 1]
    assert initialized["result"]["agentInfo"]["name"] == "generalagent"
