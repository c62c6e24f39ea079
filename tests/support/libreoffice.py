"""A LibreOffice installed with Writer and Calc but without Impress, made from the real one.

Debian's libreoffice-writer-nogui and libreoffice-calc-nogui without
libreoffice-impress-nogui (nor libreoffice-draw-nogui, which only Impress pulls in) leave
out Impress's and Draw's libraries and their configuration files (impress.xcd, draw.xcd).
The copy here is that installation: the program folder hard-linked (copied across file
systems), the configuration folder copied without those two files, the presentation
libraries removed, and fundamentalrc pointed at the copy (Debian's names absolute paths).
LibreOffice run from it starts, converts documents, and cannot open a presentation.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

# What libreoffice-impress-nogui and libreoffice-draw-nogui put in the program folder (7.4).
PRESENTATION_LIBRARIES = (
    "libsdlo.so",
    "libsddlo.so",
    "libsdfiltlo.so",
    "libslideshowlo.so",
    "libPresentationMinimizerlo.so",
    "libPresenterScreenlo.so",
    "libwpftimpresslo.so",
    "libwpftdrawlo.so",
    "libanimcorelo.so",
)
PRESENTATION_CONFIGURATION = ("impress.xcd", "draw.xcd")


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def without_impress(soffice: str, folder: Path) -> Path:
    """A folder holding `soffice` for a copy of the LibreOffice of `soffice` without Impress."""
    program = Path(os.path.realpath(soffice)).parent
    base = program.parent
    copy = folder / "libreoffice"
    shutil.copytree(base, copy, symlinks=True, copy_function=_link_or_copy)
    rc_text = (program / "fundamentalrc").read_text(encoding="utf-8")
    registry = copy / "share" / "registry"
    original_registry = Path(os.path.realpath(base / "share" / "registry"))
    if registry.is_symlink():  # Debian: /etc/libreoffice/registry
        registry.unlink()
        shutil.copytree(original_registry, registry, copy_function=_link_or_copy)
    for name in PRESENTATION_CONFIGURATION:
        (registry / name).unlink(missing_ok=True)
    for name in PRESENTATION_LIBRARIES:
        (copy / "program" / name).unlink(missing_ok=True)
    rc = copy / "program" / "fundamentalrc"
    rc.unlink()  # a hard link: the original must stay as it is
    rc.write_text(
        rc_text.replace(original_registry.as_uri(), registry.as_uri()).replace(base.as_uri(), copy.as_uri()),
        encoding="utf-8",
    )
    programs = folder / "bin"
    programs.mkdir()
    (programs / "soffice").symlink_to(copy / "program" / "soffice")
    return programs
