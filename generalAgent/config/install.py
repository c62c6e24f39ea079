"""How to add an optional extra (ocr, postgres, local-embeddings) to *this* installation.

The distribution is `generalagent-cli` (the import package stays `generalAgent`, the command
`generalagent`): "generalagent" on the package index is another project, so a hint that names
it installs someone else's program. A hint must also reach the environment the program runs
in, which depends on how it was installed; that is read at run time, where the hint is shown:

- pipx writes `pipx_metadata.json` into the venv it made: `pipx inject <venv> <requirements>`;
- `uv tool install` writes `uv-receipt.toml` there: `uv tool install --with ... <source>`;
- a clone set up by `make` runs from `<clone>/.venv` with an editable install of `<clone>`:
  `make -C <clone> extras EXTRAS=<extra>`;
- anything else is pip in the running interpreter's environment, naming the clone when the
  package was installed from a folder (PEP 610's direct_url.json) and the index otherwise.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

DISTRIBUTION = "generalagent-cli"


@dataclass(frozen=True)
class Installation:
    """What decides the right install command: where the program runs and where it came from."""

    prefix: Path  # sys.prefix: the environment the program runs in
    python: str  # the interpreter to name for pip ("python" when that is the one on PATH)
    source: Path | None = None  # the folder it was installed from (a clone), None: the index
    editable: bool = False
    requirements: dict[str, tuple[str, ...]] = field(default_factory=dict)  # per extra


def install_command(extra: str, where: Installation) -> str:
    """The shell command that adds `extra` to the installation `where` (pure)."""
    requirements = where.requirements.get(extra) or (f"{DISTRIBUTION}[{extra}]",)
    if (where.prefix / "pipx_metadata.json").is_file():
        return shlex.join(["pipx", "inject", where.prefix.name, *requirements])
    if (where.prefix / "uv-receipt.toml").is_file():
        withs = [part for requirement in requirements for part in ("--with", requirement)]
        source = [str(where.source)] if where.source else [DISTRIBUTION]
        editable = ["--editable"] if where.source and where.editable else []
        return shlex.join(["uv", "tool", "install", *editable, *withs, *source])
    if (
        where.source is not None
        and where.editable
        and where.prefix == where.source / ".venv"
        and (where.source / "Makefile").is_file()
    ):
        return shlex.join(["make", "-C", str(where.source), "extras", f"EXTRAS={extra}"])
    if where.source is not None:
        spec = ["-e", f"{where.source}[{extra}]"] if where.editable else [f"{where.source}[{extra}]"]
    else:
        spec = [f"{DISTRIBUTION}[{extra}]"]
    return shlex.join([where.python, "-m", "pip", "install", *spec])


def current_installation() -> Installation:
    """The running program's installation, read from the interpreter and the package metadata."""
    from importlib.metadata import distributions

    prefix = Path(sys.prefix)
    on_path = shutil.which("python")
    try:
        ours = on_path is not None and os.path.samefile(on_path, sys.executable)
    except OSError:
        ours = False
    source: Path | None = None
    editable = False
    requirements: dict[str, list[str]] = {}
    # The installed record first: a clone's setuptools leaves a `.egg-info` beside the sources,
    # found first when the current folder is on sys.path, and it has no direct_url.json.
    found = sorted(distributions(name=DISTRIBUTION), key=lambda d: d.read_text("direct_url.json") is None)
    if found:  # none: a source tree run without installing it
        source, editable = _installed_from(found[0].read_text("direct_url.json"))
        found_requires = found[0].requires
    else:
        found_requires = None
    for line in found_requires or []:
        requirement, _, marker = line.partition(";")
        extra = _extra_of(marker)
        if extra:
            requirements.setdefault(extra, []).append(requirement.strip())
    return Installation(
        prefix=prefix,
        python="python" if ours else sys.executable,
        source=source,
        editable=editable,
        requirements={name: tuple(values) for name, values in requirements.items()},
    )


def install_hint(extra: str) -> str:
    """The command that adds `extra` to the running installation (see the module's docstring)."""
    return install_command(extra, current_installation())


def _installed_from(direct_url: str | None) -> tuple[Path | None, bool]:
    """The local folder and editable flag of PEP 610's direct_url.json; (None, False) for the index."""
    if not direct_url:
        return None, False
    try:
        record = json.loads(direct_url)
    except ValueError:
        return None, False
    url = urlparse(str(record.get("url", "")))
    if url.scheme != "file" or "dir_info" not in record:
        return None, False
    return Path(unquote(url.path)), bool(record["dir_info"].get("editable"))


def _extra_of(marker: str) -> str | None:
    """`ocr` from a requirement's marker `extra == "ocr"`; None for a requirement of every install."""
    marker = marker.strip()
    if not marker.startswith("extra"):
        return None
    _, _, value = marker.partition("==")
    return value.strip().strip("'\"") or None
