"""What the sandbox and the withheld keys cost: start-up once, and every command.

- **withhold_secrets**: the agent's one call at start (process_secrets.py), median of
  fresh interpreters (it runs once per process), beside the same interpreter doing
  nothing, in the same run.
- **find_sandbox**: the one probe per process that bubblewrap works here.
- **a command**: `true` and a small Python script run by run_command plain and in
  bubblewrap (the workspace confinement run_bash_command builds), alternately, median of
  each; the ratio is what a sandboxed command costs against a plain one.

    .venv/bin/python -m bench.sandbox
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from generalAgent.sandbox import (
    Confinement,
    SandboxUnavailable,
    _working_sandbox,
    agent_runtime_folders,
    find_sandbox,
)
from generalAgent.tools.builtin.run_bash_command import run_command

ROUNDS = 21


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def in_fresh_interpreter(code: str) -> float:
    """Seconds `code` takes, measured inside a fresh interpreter (import costs excluded)."""
    timed = f"import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
    env = {"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "sk-bench-0123456789", "PYTHONPATH": str(Path.cwd())}
    prelude = "from generalAgent.process_secrets import withhold_secrets; "
    done = subprocess.run(
        [sys.executable, "-c", prelude + timed], env=env, capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip())


def main() -> None:
    withhold = [in_fresh_interpreter("withhold_secrets()") for _ in range(ROUNDS)]
    nothing = [in_fresh_interpreter("None") for _ in range(ROUNDS)]
    probes = []
    for _ in range(5):
        _working_sandbox.cache_clear()
        started = time.perf_counter()
        found = _working_sandbox()
        probes.append(time.perf_counter() - started)
    result: dict = {
        "withhold_secrets_ms": median_ms(withhold),
        "empty_statement_ms": median_ms(nothing),
        "sandbox": found.kind,
        "find_sandbox_probe_ms": median_ms(probes),
    }
    try:
        sandbox = find_sandbox("required")
    except SandboxUnavailable as exc:
        result["commands"] = f"not measured: {exc}"
        print(json.dumps(result, indent=2))
        return
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        confinement = Confinement(
            writable=(workspace,), readable=agent_runtime_folders(), hidden=(Path.home(),), cwd=workspace
        )
        commands = {"true": "true", "python": f"{sys.executable} -c 'import json; print(json.dumps(1))'"}
        for name, command in commands.items():
            plain, boxed = [], []
            for _ in range(ROUNDS):
                started = time.perf_counter()
                run_command(command, workspace, 30, None, ("PATH",))
                plain.append(time.perf_counter() - started)
                started = time.perf_counter()
                run_command(command, workspace, 30, None, ("PATH",), sandbox, confinement)
                boxed.append(time.perf_counter() - started)
            result[f"command_{name}"] = {
                "plain_ms": median_ms(plain),
                "sandboxed_ms": median_ms(boxed),
                "ratio": round(statistics.median(boxed) / statistics.median(plain), 2),
            }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
