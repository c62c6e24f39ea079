"""A fake `xclip` on PATH: the clipboard Pillow's ImageGrab reads on X11, under the test's control."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

XCLIP = """#!{python}
import sys, time
mode = {mode!r}
if mode == "image":
    sys.stdout.buffer.write(open({image!r}, "rb").read())
elif mode == "empty":
    sys.stderr.write("xclip: Error: There is no owner for the CLIPBOARD selection\\n")
    sys.exit(1)
elif mode == "hang":
    time.sleep(60)
else:
    sys.stderr.write("xclip: something broke\\n")
    sys.exit(1)
"""


def fake_xclip(folder: Path, mode: str, image: Path | None = None) -> dict[str, str]:
    """Install an `xclip` in `folder` answering as `mode` says; the environment that finds it."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "xclip"
    script.write_text(
        XCLIP.format(python=sys.executable, mode=mode, image=str(image or "")), encoding="utf-8"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env = {key: value for key, value in os.environ.items() if key != "WAYLAND_DISPLAY"}
    env.update(DISPLAY=":0", PATH=f"{folder}{os.pathsep}{env.get('PATH', '')}")
    return env
