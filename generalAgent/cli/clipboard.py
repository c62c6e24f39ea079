"""An image on the clipboard, attached to the next message (`/paste`, Ctrl-V).

Pillow's `ImageGrab.grabclipboard` reads it the way each system offers it: `osascript` on
macOS, the Win32 clipboard on Windows, `wl-paste` (Wayland) or `xclip` (X11) on Linux. It
runs in a worker thread with a deadline, since a clipboard owner that never answers would
otherwise hang the prompt. The image is re-encoded as PNG into a private temporary folder
and attached like a `#file`, so the turn sends it as an image part to a model that sees and
as OCR text to one that does not (agent/turn_input.py), and the session keeps it once by hash.
When the clipboard holds copied files instead (Finder, Explorer), those files are attached.
"""

from __future__ import annotations

import hashlib
import io
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generalAgent.cli.chat_handle import ChatHandle
from generalAgent.i18n import _, ngettext

GRAB_SECONDS = 5.0
MAX_PIXELS = 64_000_000  # a screenshot of a 8K screen is 33 MP; more is not a screenshot


@dataclass
class Clipboard:
    """What the clipboard held: an image saved as PNG, copied files, or why there is neither."""

    image: Path | None = None
    files: list[Path] = field(default_factory=list)
    problem: str = ""


def read_clipboard(folder: Path, seconds: float = GRAB_SECONDS) -> Clipboard:
    """The clipboard's image (saved in `folder`) or files; never raises."""
    found: dict[str, Any] = {}

    def grab() -> None:
        try:
            from PIL import ImageGrab

            found["value"] = ImageGrab.grabclipboard()
        except Exception as exc:  # noqa: BLE001 - any failure is one line to the user
            found["error"] = exc

    worker = threading.Thread(target=grab, name="clipboard", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        return Clipboard(problem=_("The clipboard did not answer in {seconds:g} s.").format(seconds=seconds))
    error = found.get("error")
    if isinstance(error, NotImplementedError):  # Linux without wl-paste or xclip
        return Clipboard(
            problem=_(
                "Reading an image from the clipboard needs wl-paste (Wayland) or xclip (X11): "
                "install wl-clipboard or xclip, or attach the file with #path."
            )
        )
    if error is not None:
        return Clipboard(problem=_("The clipboard could not be read: {error}").format(error=one_line(error)))
    value = found.get("value")
    if isinstance(value, list):
        files = [Path(name) for name in value if isinstance(name, str) and name]
        return (
            Clipboard(files=files) if files else Clipboard(problem=_("There is no image on the clipboard."))
        )
    if value is None:
        return Clipboard(problem=_("There is no image on the clipboard."))
    return save_image(value, folder)


def save_image(image: Any, folder: Path) -> Clipboard:
    """`image` (a Pillow image) as `clipboard-<hash>.png` in `folder`: the same picture, one name."""
    width, height = image.size
    if width * height > MAX_PIXELS:
        return Clipboard(
            problem=_("The image on the clipboard is too large ({width}×{height} pixels).").format(
                width=width, height=height
            )
        )
    buffer = io.BytesIO()
    try:
        image.save(buffer, format="PNG")
    except (OSError, ValueError) as exc:
        return Clipboard(problem=_("The clipboard could not be read: {error}").format(error=one_line(exc)))
    data = buffer.getvalue()
    path = folder / f"clipboard-{hashlib.sha256(data).hexdigest()[:12]}.png"
    path.write_bytes(data)
    return Clipboard(image=path)


def clipboard_folder() -> Path:
    """A private folder for the PNG until it is copied into the session's uploads."""
    return Path(tempfile.mkdtemp(prefix="generalagent-paste-"))


def one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text[:200] or type(error).__name__


def attach_clipboard(agent: Any, session_id: str) -> tuple[list[Any], list[str]]:
    """Attach what the clipboard holds to the session: (uploaded files, problems to show)."""
    import shutil

    from generalAgent.agent.chat_input import copy_into_uploads

    folder = clipboard_folder()
    try:
        found = read_clipboard(folder)
        if found.problem:
            return [], [found.problem]
        workspace = agent.parts.env.workspace_for(session_id)
        files, problems = [], []
        for path in [found.image] if found.image else found.files:
            try:
                files.append(copy_into_uploads(path, workspace))
            except (OSError, ValueError) as exc:
                problems.append(f"{path.name}: {one_line(exc)}")
        return files, problems
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def paste(chat: ChatHandle, argument: str = "") -> None:
    """/paste and Ctrl-V: the clipboard's image (or copied files) joins the next message."""
    from rich.markup import escape

    from generalAgent.cli.terminal_text import one_line
    from generalAgent.display import describe_file

    files, problems = attach_clipboard(chat.agent(), chat.session.id)
    for problem in problems:
        chat.console.print(f"[yellow]{escape(problem)}[/]")
    for upload in files:
        chat.console.print(f"[dim]📎 {escape(one_line(describe_file(upload, ngettext, _)))}[/]")
    # The agent hears about them with the next message, as with /upload.
    chat.session.state.pending_uploads += files
