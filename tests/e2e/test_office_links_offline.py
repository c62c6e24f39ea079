"""LibreOffice never fetches what a document links to.

A DOCX whose image is an external link (TargetMode="External") made the conversion behind
view_page request that URL with no question: a tracking pixel, or a request into the LAN.
The conversion's private profile now blocks untrusted links and never updates links.
"""

from __future__ import annotations

import http.server
import shutil
import threading
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from generalAgent.sandbox import find_sandbox
from tests.e2e.conftest import run_cli
from tests.support.openai_server import ImageRules, Reply, ScriptedOpenAIServer, ToolCall

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed"),
]

PICTURE = (
    '<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/'
    'wordprocessingDrawing"><wp:extent cx="914400" cy="914400"/><wp:docPr id="1" name="Picture 1"/>'
    '<a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData '
    'uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic xmlns:pic="http://'
    'schemas.openxmlformats.org/drawingml/2006/picture"><pic:nvPicPr><pic:cNvPr id="0" name="t.png"/>'
    '<pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:link="rIdLinked" xmlns:r="http://schemas.'
    'openxmlformats.org/officeDocument/2006/relationships"/><a:stretch><a:fillRect/></a:stretch>'
    '</pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="914400" cy="914400"/></a:xfrm>'
    '<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic>'
    "</wp:inline></w:drawing></w:r></w:p>"
)


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that records every request it gets."""
    seen: list[str] = []

    class Record(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the library's name)
            seen.append(self.path)
            self.send_error(404)

        do_OPTIONS = do_HEAD = do_GET  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Record)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()


def linked_docx(path: Path, url: str) -> None:
    from docx import Document

    Document().save(path)
    with zipfile.ZipFile(path) as original:
        files = {name: original.read(name) for name in original.namelist()}
    relation = (
        '<Relationship Id="rIdLinked" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        f'relationships/image" Target="{url}/tracker.png" TargetMode="External"/></Relationships>'
    )
    files["word/_rels/document.xml.rels"] = files["word/_rels/document.xml.rels"].replace(
        b"</Relationships>", relation.encode()
    )
    files["word/document.xml"] = files["word/document.xml"].replace(
        b"<w:sectPr", PICTURE.encode() + b"<w:sectPr", 1
    )
    with zipfile.ZipFile(path, "w") as out:
        for name, data in files.items():
            out.writestr(name, data)


@pytest.fixture
def view_first_page(workdir: Path, cli_env: dict[str, str]) -> Callable[[str], None]:
    """Runs `-p` with a model that sees images, whose one tool call is view_page of page 1 of
    the named file in the working folder (converted by LibreOffice); checks the page was shown."""

    def view(name: str) -> None:
        with ScriptedOpenAIServer(model="gpt-4.1-mini", images=ImageRules()) as relay:
            relay.add(
                Reply(tool_calls=[ToolCall("view_page", {"file_path": f"uploads/{name}", "page": 1})]),
                Reply(text="One page."),
            )
            env = {**cli_env, "OPENAI_BASE_URL": relay.base_url, "MODEL_NAME": "gpt-4.1-mini"}
            result = run_cli(["-p", f"Show me page 1 #{name}"], env, workdir, timeout=240)
            assert result.returncode == 0, result.stderr
            answer = next(m for m in relay.chat_requests[1].messages if m["role"] == "tool")
            assert "Error" not in str(answer["content"]), answer

    return view


def test_view_page_of_a_docx_with_a_linked_image_requests_nothing(
    listener: tuple[str, list[str]], view_first_page: Callable[[str], None], workdir: Path
) -> None:
    url, seen = listener
    linked_docx(workdir / "letter.docx", url)
    view_first_page("letter.docx")
    assert seen == []  # the linked image was never fetched


@pytest.mark.skipif(find_sandbox("auto").kind != "bwrap", reason="bubblewrap does not work here")
def test_a_web_page_saved_as_doc_loads_nothing_from_the_network(
    listener: tuple[str, list[str]], view_first_page: Callable[[str], None], workdir: Path
) -> None:
    """Word saves a web page as .doc, and LibreOffice opens such a file as HTML, fetching its
    stylesheet whatever the private profile says: only a conversion without network stops it."""
    url, seen = listener
    (workdir / "page.doc").write_text(
        f'<html><head><link rel="stylesheet" href="{url}/style.css"></head>'
        f'<body><h1>Quarterly note</h1><img src="{url}/pixel.png"></body></html>',
        encoding="utf-8",
    )
    view_first_page("page.doc")
    assert seen == []  # neither the stylesheet nor the image was requested
