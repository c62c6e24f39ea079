"""`generalagent --server URL`: what a server run cannot take, and a server that is not
there, each one line and exit status 2 before anything is sent."""

from __future__ import annotations

import socket

import pytest

from generalAgent.cli.remote_views import RemoteOptions, run_remote
from generalAgent.config.settings import load_settings


def test_options_a_server_run_cannot_take_are_named_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = run_remote(
        load_settings(env_file=None), "http://127.0.0.1:9", RemoteOptions(prompt="hi"), ["-c", "--model"]
    )
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "-c, --model: not available with --server (docs/deployment.md says what is)."
    ]


def test_json_output_says_a_refusal_as_its_result_object(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import json

    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # nothing piped
    options = RemoteOptions(prompt="hi", output_format="json")
    assert run_remote(load_settings(env_file=None), "ftp://example.org", options, []) == 2
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["type"] == "result" and result["status"] == "error" and result["exit_code"] == 2
    assert (
        result["error"]
        == "ftp://example.org is not a server address: give one like http://localhost:2024 to --server."
    )


def test_an_address_nothing_listens_at_is_one_line_before_anything_is_sent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = run_remote(load_settings(env_file=None), f"http://127.0.0.1:{port}", RemoteOptions(), [])
    assert code == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"Cannot reach the server at http://127.0.0.1:{port} (")
