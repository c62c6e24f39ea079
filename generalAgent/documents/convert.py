"""Old and WPS Office files, read through LibreOffice: converted to their modern form first.

`.doc`, `.xls`, `.ppt` and Kingsoft WPS's `.wps`, `.et`, `.dps` are binary formats no
Python library we ship reads. When LibreOffice is installed, `soffice --headless
--convert-to` turns a copy into `.docx`/`.xlsx`/`.pptx` inside a temporary folder, with
a private profile (so it neither waits for nor disturbs a LibreOffice the user has open)
and a time limit; the modern readers of extract.py then read the result. Without
LibreOffice such a file is refused with one sentence saying what to install.

The file is copied through the caller's `open_file` (the workspace check of the read
tools), so LibreOffice only ever sees the copy that check allowed.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlparse

from generalAgent.display import N_, os_error_reason
from generalAgent.documents.reading import OLD_OFFICE, DocumentError, OpenFile, open_plainly
from generalAgent.sandbox import Confinement, find_sandbox

# The Microsoft suffix a WPS file's copy is given: WPS files are Microsoft-compatible
# binaries, and LibreOffice picks its import filter from the name as well as the bytes.
_COPY_SUFFIX = {".wps": ".doc", ".et": ".xls", ".dps": ".ppt"}
# A conversion takes 2-10 s (LibreOffice starting is most of it); a file that takes longer
# than this is stuck on something (a dialog, a broken file), not converting.
CONVERT_SECONDS = 120
INSTALL_HINT = (
    "install LibreOffice (Debian/Ubuntu: apt install libreoffice-writer-nogui libreoffice-calc-nogui "
    "libreoffice-impress-nogui; macOS: brew install --cask libreoffice; Windows: libreoffice.org)"
)


# Presentations open only in Impress. A LibreOffice installed without it (Debian's
# libreoffice-writer-nogui and -calc-nogui alone) says no more than "source file could not
# be loaded" for them, which reads like a damaged file.
PRESENTATION_SUFFIXES = frozenset({".pptx", ".ppt", ".dps", ".pps", ".ppsx", ".odp"})
IMPRESS_HINT = "Debian/Ubuntu: apt install libreoffice-impress-nogui"


class ImpressMissing(DocumentError):
    """LibreOffice is installed, its Impress component (slides) is not."""


def soffice() -> str | None:
    """The LibreOffice program, or None when it is not installed."""
    return shutil.which("soffice") or shutil.which("libreoffice")


def impress_missing(binary: str) -> bool:
    """Whether the LibreOffice of `binary` lacks Impress: its configuration folder (the
    .xcd files every component adds, read by LibreOffice at start) has main.xcd but no
    impress.xcd. False when that folder cannot be found (the conversion then speaks)."""
    registry = _registry_folder(Path(os.path.realpath(binary)).parent)
    return registry is not None and not (registry / "impress.xcd").is_file()


def _registry_folder(program: Path) -> Path | None:
    """LibreOffice's configuration folder: the `xcsxcu:` layer its fundamentalrc names
    (Debian's points into /etc/libreoffice), else `share/registry` (LibreOffice's own
    builds) or `Resources/registry` (macOS)."""
    base = program.parent
    candidates: list[Path] = []
    try:
        rc = (program / "fundamentalrc").read_text(encoding="utf-8", errors="replace")
    except OSError:
        rc = ""
    for line in rc.splitlines():
        found = re.match(r"\s*CONFIGURATION_LAYERS\s*=.*?\bxcsxcu:(\S+)", line)
        if found:
            url = found.group(1).replace("${BRAND_BASE_DIR}", base.as_uri())
            if url.startswith("file://") and "$" not in url:
                candidates.append(Path(unquote(urlparse(url).path)))
    candidates += [base / "share" / "registry", base / "Resources" / "registry"]
    return next((folder for folder in candidates if (folder / "main.xcd").is_file()), None)


def _impress_problem(path: Path, binary: str, template: str) -> ImpressMissing | None:
    if path.suffix.lower() not in PRESENTATION_SUFFIXES or not impress_missing(binary):
        return None
    return ImpressMissing(template, name=path.name, install=IMPRESS_HINT)


def is_legacy_office(path: Path) -> bool:
    return path.suffix.lower() in OLD_OFFICE


def modern_suffix(path: Path) -> str:
    return OLD_OFFICE[path.suffix.lower()]


def legacy_office_problem(path: Path) -> DocumentError | None:
    """Why this old/WPS Office file cannot be read here (LibreOffice is missing), else None."""
    if not is_legacy_office(path) or soffice() is not None:
        return None
    return DocumentError(
        N_(
            "{name} is an old or WPS Office file, read through LibreOffice, which is not installed; "
            "{install}, or save it as {suffix}."
        ),
        name=path.name,
        install=INSTALL_HINT,
        suffix=modern_suffix(path),
    )


def convert_legacy_office(
    path: Path, open_file: OpenFile = open_plainly, seconds: float = CONVERT_SECONDS
) -> bytes:
    """The bytes of the modern form (.docx/.xlsx/.pptx) of the old Office file at `path`;
    `DocumentError` when LibreOffice is missing, fails or takes longer than `seconds`."""
    problem = legacy_office_problem(path)
    if problem:
        raise problem
    binary = soffice()
    assert binary is not None
    missing = _impress_problem(
        path,
        binary,
        N_(
            "LibreOffice is installed without Impress (libreoffice-impress); slides cannot be "
            "converted: {name} needs it ({install}), or save it as .pptx."
        ),
    )
    if missing:
        raise missing
    return _convert(path, OLD_OFFICE[path.suffix.lower()], open_file, seconds)


def convert_to_pdf(path: Path, open_file: OpenFile = open_plainly, seconds: float = CONVERT_SECONDS) -> bytes:
    """The PDF LibreOffice prints of an Office document (slides as pages), to show a page."""
    binary = soffice()
    if binary is None:
        raise DocumentError(
            N_("showing a page of {name} needs LibreOffice, which is not installed; {install}."),
            name=path.name,
            install=INSTALL_HINT,
        )
    missing = _impress_problem(
        path,
        binary,
        N_(
            "LibreOffice is installed without Impress (libreoffice-impress); slides cannot be "
            "rendered: {name} needs it ({install})."
        ),
    )
    if missing:
        raise missing
    return _convert(path, ".pdf", open_file, seconds)


def _convert(path: Path, modern: str, open_file: OpenFile, seconds: float) -> bytes:
    binary = soffice()
    assert binary is not None
    suffix = path.suffix.lower()
    copy_suffix = _COPY_SUFFIX.get(suffix, suffix)
    with tempfile.TemporaryDirectory(prefix="generalagent-convert-") as folder:
        work = Path(folder)
        source = work / f"document{copy_suffix}"
        try:
            with open_file(path) as original, source.open("wb") as copy:
                shutil.copyfileobj(original, copy)
        except OSError as exc:
            raise DocumentError(
                N_("{name} cannot be read: {reason}."), name=path.name, reason=os_error_reason(exc)
            ) from None
        _lock_profile(work / "profile")
        command = _offline(
            [
                binary,
                f"-env:UserInstallation={(work / 'profile').as_uri()}",
                "--headless",
                "--norestore",
                "--nolockcheck",
                "--convert-to",
                modern.lstrip("."),
                "--outdir",
                str(work / "out"),
                str(source),
            ],
            work,
        )
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: killed whole on a timeout
            cwd=work,
        )
        try:
            output, _ = process.communicate(timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise DocumentError(
                N_(
                    "{name}: LibreOffice did not finish converting it within {seconds:g} s; "
                    "save it as {suffix} and try again."
                ),
                name=path.name,
                seconds=seconds,
                suffix=modern,
            ) from None
        result = work / "out" / f"document{modern}"
        if process.returncode != 0 or not result.is_file() or result.stat().st_size == 0:
            said = (
                " ".join(output.decode("utf-8", "replace").split())[-200:]
                or f"exit status {process.returncode}"
            )
            raise DocumentError(
                N_(
                    "{name} could not be converted by LibreOffice ({said}); it may be damaged or "
                    "password-protected: save it as {suffix} and try again."
                ),
                name=path.name,
                said=said,
                suffix=modern,
            )
        return result.read_bytes()


# The private profile's settings: a document's links are never followed. A DOCX or DOC whose
# image is an external link (TargetMode="External") made the conversion fetch that URL, with
# no question, from view_page and search_file: a tracking pixel, or a request into the LAN.
# BlockUntrustedRefererLinks stops linked images and other external content (no location is
# trusted in a fresh profile); Update/Link=0 never updates linked sections, OLE objects and
# Calc's external references; DisableActiveContent keeps macros and active content off.
_LOCKED_PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="BlockUntrustedRefererLinks" \
oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="DisableActiveContent" \
oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Writer/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>0</value>\
</prop></item>
<item oor:path="/org.openoffice.Office.Calc/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>0</value>\
</prop></item>
</oor:items>
"""


def _offline(command: list[str], work: Path) -> list[str]:
    """`command` run without network where bubblewrap works: the private profile stops the
    links LibreOffice knows to be links, but not everything a file can make it fetch (an HTML
    page saved as .doc loads its stylesheet whatever the profile says). Inside, LibreOffice
    sees the system read-only, its own temporary folder writable, and no home. Used whatever
    SANDBOX says: this is the agent's own helper, not a command the user approved."""
    sandbox = find_sandbox("auto")
    if sandbox.kind != "bwrap":
        return command
    # LibreOffice itself may live in the home folder or /tmp (an unpacked download): its
    # program folder and the one its name on the PATH is in stay readable.
    program = Path(command[0])
    installed = (program.parent, Path(os.path.realpath(program)).parent.parent)
    confinement = Confinement(
        writable=(work,), readable=installed, hidden=(Path.home(),), network=False, cwd=work
    )
    return sandbox.wrap(command, confinement)


def _lock_profile(profile: Path) -> None:
    """Write the settings that keep LibreOffice off the network into a fresh profile."""
    user = profile / "user"
    user.mkdir(parents=True, exist_ok=True)
    (user / "registrymodifications.xcu").write_text(_LOCKED_PROFILE, encoding="utf-8")
