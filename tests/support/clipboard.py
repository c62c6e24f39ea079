"""A fake `xclip` on PATH: the clipboard Pillow's ImageGrab reads on X11, under the test's control."""

from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path

# A shell script, not Python: it answers in a millisecond, so the chat's few seconds for the
# clipboard (cli/clipboard.py) are never eaten by an interpreter starting on a busy machine.
XCLIP = """#!/bin/sh
case {mode} in
    image) exec cat {image} ;;
    empty) echo "xclip: Error: There is no owner for the CLIPBOARD selection" >&2; exit 1 ;;
    hang) exec sleep 60 ;;
    *) echo "xclip: something broke" >&2; exit 1 ;;
esac
"""


def fake_xclip(folder: Path, mode: str, image: Path | None = None) -> dict[str, str]:
    """Install an `xclip` in `folder` answering as `mode` says; the environment that finds it."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "xclip"
    script.write_text(
        XCLIP.format(mode=shlex.quote(mode), image=shlex.quote(str(image or ""))), encoding="utf-8"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env = {key: value for key, value in os.environ.items() if key != "WAYLAND_DISPLAY"}
    env.update(DISPLAY=":0", PATH=f"{folder}{os.pathsep}{env.get('PATH', '')}")
    return env
