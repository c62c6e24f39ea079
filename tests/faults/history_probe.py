"""Prints a check of the latest session's stored history as one JSON line.

For data directories that exist only inside a mount namespace (a tiny tmpfs that fills
up): the test runs this module in the same namespace after the CLI and reads its output.

    python -m tests.faults.history_probe DATA_DIR
    HISTORY {"kinds": ["human", "ai", ...], "problems": [], "contents": [...]}
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.faults.conftest import stored_messages
from tests.support.history import stored_history_problems


def main(argv: list[str]) -> int:
    messages = stored_messages(Path(argv[0]))
    report = {
        "kinds": [m.type for m in messages],
        "problems": stored_history_problems(messages),
        "contents": [m.content if isinstance(m.content, str) else str(m.content) for m in messages],
    }
    print("HISTORY " + json.dumps(report, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
