"""Bounded state: tool-call arguments within limits, URLs without their credentials, data
files only their owner reads."""

from __future__ import annotations

import io
import logging
import os
import stat
from pathlib import Path

from langchain_core.messages import AIMessage

from generalAgent.cli.app import MaskedURLs
from generalAgent.display import mask_urls, public_url, url_secrets
from generalAgent.graph.tool_arguments import REFUSED, refuse_unbounded_calls
from generalAgent.private_storage import private_file, private_folder


def calls(*args: object) -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": "t", "args": a, "id": f"c{i}"} for i, a in enumerate(args)]
    )


def test_too_large_or_too_deep_arguments_become_refused_calls_without_their_arguments() -> None:
    deep: object = 1
    for _ in range(100):
        deep = [deep]
    message = calls({"a": "x" * 20_000}, {"a": deep}, {"a": "fine"})
    bounded = refuse_unbounded_calls(message, {}, max_chars=10_000, max_depth=64)
    assert [c["id"] for c in bounded.tool_calls] == ["c2"]
    refused = {c["id"]: c for c in bounded.invalid_tool_calls}
    assert refused["c0"]["args"] == "{}" and "TOOL_ARGUMENT_MAX_CHARS" in refused["c0"]["error"]
    assert refused["c1"]["error"].startswith(REFUSED) and "TOOL_ARGUMENT_MAX_DEPTH" in refused["c1"]["error"]
    within = calls({"a": "x" * 100, "b": [[1, 2], {"c": None}]})
    assert refuse_unbounded_calls(within, {}, max_chars=10_000, max_depth=64) is within


def test_nesting_far_beyond_the_stack_is_measured_without_recursion() -> None:
    deep: object = "leaf"
    for _ in range(50_000):
        deep = {"a": deep}
    bounded = refuse_unbounded_calls(calls(deep), {}, max_chars=10**9, max_depth=64)
    assert not bounded.tool_calls and "nested more than 64" in bounded.invalid_tool_calls[0]["error"]


def test_credentials_in_urls_are_masked_whatever_their_parameter_is_called() -> None:
    url = "https://u:pw12@h.example/p?auth=A1B2C3&X-Amz-Signature=S1S2S3&page=2&client_secret=C1C2C3#id_token=T1T2T3"
    shown = public_url(url)
    assert shown == "https://h.example/p?auth=***&X-Amz-Signature=***&page=2&client_secret=***#id_token=***"
    assert set(url_secrets(url)) == {"pw12", "A1B2C3", "S1S2S3", "C1C2C3", "T1T2T3"}  # "u": too short to mask
    text = f"GET {url} then https://plain.example/a?q=b%20c and ftp://me:hunter2@x.example/"
    masked = mask_urls(text)
    assert "A1B2C3" not in masked and "hunter2" not in masked and "pw12" not in masked
    assert "https://plain.example/a?q=b%20c" in masked  # nothing to hide: left as written


def test_the_log_masks_credentials_in_messages_and_tracebacks() -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(MaskedURLs())
    logger = logging.getLogger("test-masked-urls")
    logger.addHandler(handler)
    try:
        logger.warning("HTTP Request: GET %s", "https://h.example/x?token=LEAKED1")
        try:
            raise ValueError("failed https://h.example/y?auth=LEAKED2")
        except ValueError:
            logger.exception("boom")
    finally:
        logger.removeHandler(handler)
    assert "LEAKED" not in out.getvalue() and "token=***" in out.getvalue() and "auth=***" in out.getvalue()


def test_data_files_are_created_0600_in_0700_folders(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        db = private_file(tmp_path / "data" / "logs" / "x.log")
        assert stat.S_IMODE(db.stat().st_mode) == 0o600
        assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(db.parent.parent.stat().st_mode) == 0o700
        loose = tmp_path / "old.db"
        loose.write_text("x")
        loose.chmod(0o644)
        private_file(loose)
        assert stat.S_IMODE(loose.stat().st_mode) == 0o600 and loose.read_text() == "x"
        shared = tmp_path / "shared"
        shared.mkdir(mode=0o755)
        private_folder(shared)
        assert stat.S_IMODE(shared.stat().st_mode) == 0o755  # a folder the user made is theirs to set
    finally:
        os.umask(old)
