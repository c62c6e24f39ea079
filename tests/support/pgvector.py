"""A PostgreSQL server with pgvector for the tests of the store's HNSW path, on any machine.

GENERALAGENT_TEST_PGVECTOR_URL names one when set. Otherwise the session starts the
PostgreSQL 16 + pgvector bundled in the `pgserver` wheel (a dev dependency; Debian 12 has no
postgresql-15-pgvector) in a temporary folder, on a free loopback port, and stops and removes
it at the end. The binaries are pgserver's; the start is ours, the way `.ci/run` starts its
cluster: as a non-root user when run as root (initdb and postgres refuse root), no fsync.
pgserver's own `get_server` would instead create a system user, chmod every parent folder of
its data and binaries, and keep a process-wide lock and registry.

pgserver has wheels for CPython 3.11 and 3.12 only: on 3.13 the tests skip, saying so, even
under CI=1 (nothing on that machine could run them). Where pgserver is installed and its
server does not start, they fail under CI=1 and skip elsewhere with the server's log.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

URL_ENV = "GENERALAGENT_TEST_PGVECTOR_URL"


class ServerUnavailable(RuntimeError):
    """No PostgreSQL with pgvector can be had here; `installable` is False where pgserver
    has no wheel for this Python (or is not installed), True where its server failed."""

    def __init__(self, message: str, *, installable: bool) -> None:
        super().__init__(message)
        self.installable = installable


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _cluster_owner() -> dict[str, Any]:
    """subprocess arguments that run a command as a user PostgreSQL accepts: ourselves, or
    (as root) `postgres` where the Debian package made it, else `nobody`."""
    if os.geteuid() != 0:
        return {}
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
    raise ServerUnavailable(
        "running as root, and no `postgres` or `nobody` user to run PostgreSQL as", installable=True
    )


def _reachable(bin_dir: Path, root: Path, owner: dict[str, Any]) -> Path:
    """`bin_dir`, or a copy of the installation under `root` when the user PostgreSQL runs
    as cannot reach it (a virtualenv under root's 0700 home)."""
    if not owner:
        return bin_dir
    try:
        subprocess.run(
            [str(bin_dir / "postgres"), "--version"], check=True, capture_output=True, timeout=60, **owner
        )
        return bin_dir
    except (OSError, subprocess.CalledProcessError):
        # Relocatable as laid out in site-packages: lib/ and share/ beside bin/, and the
        # wheel's shared libraries in pgserver.libs (their rpath: $ORIGIN/../../../pgserver.libs).
        package = bin_dir.parent.parent
        copy = root / "site-packages"
        shutil.copytree(
            bin_dir.parent, copy / "pgserver" / "pginstall", ignore=shutil.ignore_patterns("include")
        )
        shutil.copytree(package.parent / "pgserver.libs", copy / "pgserver.libs")
        return copy / "pgserver" / "pginstall" / "bin"


@contextmanager
def pgserver_cluster() -> Iterator[str]:
    """pgserver's PostgreSQL with pgvector, started in a temporary folder on a free loopback
    port, yielding its URL; stopped and removed at the end. Raises ServerUnavailable."""
    # Found, not imported: importing pgserver sets up its own server registry and lock.
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        raise ServerUnavailable(
            f"no PostgreSQL with pgvector: pgserver, whose wheel bundles one, is not installed "
            f"(its wheels are for Python 3.11 and 3.12, this is {version}; on those, install "
            f"the dev extra); set {URL_ENV} to a server with pgvector to run these tests",
            installable=False,
        )
    bin_dir = Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"
    owner = _cluster_owner()
    root = Path(tempfile.mkdtemp(prefix="generalagent-pgvector-"))
    root.chmod(0o755)
    if owner:
        os.chown(root, owner["user"], owner["group"])
    data, log, port = root / "data", root / "server.log", _free_port()

    def run(*command: str) -> None:
        subprocess.run(command, check=True, capture_output=True, timeout=120, cwd=root, **owner)

    try:
        bin_dir = _reachable(bin_dir, root, owner)
        run(
            str(bin_dir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "--no-sync",
            "-E",
            "UTF8",
        )
        run(
            str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60",
            "-o", f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off",
            "start",
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        detail = (getattr(exc, "stderr", b"") or b"").decode(errors="replace")
        server_log = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise ServerUnavailable(
            f"pgserver's PostgreSQL did not start ({exc}): {detail} {server_log}", installable=True
        ) from None
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True, timeout=60, cwd=root, **owner,
        )  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)


def pgvector_server() -> Iterator[str]:
    """The URL of a PostgreSQL server offering pgvector (a session fixture's body): the
    one GENERALAGENT_TEST_PGVECTOR_URL names, else pgserver's for the session."""
    url = os.environ.get(URL_ENV)
    if url:
        yield url
        return
    with ExitStack() as stack:
        try:
            url = stack.enter_context(pgserver_cluster())
        except ServerUnavailable as exc:
            if exc.installable and os.environ.get("CI"):
                pytest.fail(str(exc))
            pytest.skip(str(exc))
        yield url


@pytest.fixture(scope="session")
def pgvector_url() -> Iterator[str]:
    """A PostgreSQL server offering pgvector for the whole session (see the module)."""
    yield from pgvector_server()
