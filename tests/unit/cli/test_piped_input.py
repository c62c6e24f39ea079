"""What `-p` reads from stdin: a pipe, a file, nothing, a silent pipe, other encodings, too much."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from generalAgent.cli import once
from generalAgent.cli.once import PipedInputError, read_piped


def pipe_with(data: bytes) -> io.TextIOWrapper:
    """The read end of a real pipe, `data` written to it and its write end closed."""
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    return open(read_end, encoding="utf-8")  # noqa: SIM115 - closed by the test


def test_a_pipe_is_read_whole() -> None:
    with pipe_with("第一行\nsecond line\n".encode()) as stream:
        assert read_piped(stream, wait=1.0) == "第一行\nsecond line\n"


def test_a_silent_open_pipe_is_not_waited_for_forever() -> None:
    read_end, write_end = os.pipe()  # nobody writes, nobody closes: a CI runner's stdin
    try:
        with open(read_end, encoding="utf-8") as stream:
            assert read_piped(stream, wait=0.05) is None
    finally:
        os.close(write_end)


def test_a_redirected_file_and_dev_null(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("要点\n", encoding="utf-8")
    with open(notes, encoding="utf-8") as stream:
        assert read_piped(stream, wait=0.05) == "要点\n"
    with open(os.devnull, encoding="utf-8") as stream:
        assert read_piped(stream, wait=0.05) == ""


def test_text_that_is_not_utf8_is_decoded_as_documents_are() -> None:
    text = "季度报告：营收增长百分之十二，客户满意度提升。" * 4
    with pipe_with(text.encode("gb18030")) as stream:
        assert read_piped(stream, wait=1.0) == text


def test_too_much_piped_text_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(once, "MAX_PIPED_BYTES", 1000)
    big = tmp_path / "big.log"
    big.write_bytes(b"x" * 1001)
    with open(big, encoding="utf-8") as stream, pytest.raises(PipedInputError, match="larger than"):
        read_piped(stream, wait=None)
