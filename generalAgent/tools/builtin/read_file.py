"""read_file: text with line numbers (offset/limit), documents as a preview, binaries refused."""

from __future__ import annotations

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_
from generalAgent.tools.approval import READS_FILE
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError, said_of
from generalAgent.tools.text_files import NotText

MAX_LINE_CHARS = 2_000
DEFAULT_LIMIT = 2_000
READ_CAP_BYTES = 32 * 1024 * 1024  # paging through a bigger text is a job for search_file


def number_lines(text: str, offset: int, limit: int) -> tuple[str, int, int]:
    """`cat -n` style lines offset..offset+limit-1 (1-based); returns (text, first, last)."""
    lines = text.splitlines()
    start = max(1, offset)
    chosen = lines[start - 1 : start - 1 + limit]
    shown = []
    for number, line in enumerate(chosen, start):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" […{len(line) - MAX_LINE_CHARS} more characters]"
        shown.append(f"{number:6d}\t{line}")
    return "\n".join(shown), start, start + len(chosen) - 1


def create_tool(env: ToolEnvironment) -> BaseTool:
    documents = env.settings.documents

    @tool("read_file")
    def read_file(path: str, runtime: ToolRuntime, offset: int = 1, limit: int = DEFAULT_LIMIT) -> str:
        """Read a file of the working folder or the workspace, e.g. report.docx, uploads/notes.md or skills/pdf/SKILL.md.

        Text comes with line numbers; use `offset` (first line, 1-based) and `limit` (number
        of lines) to page through long files. PDF, DOCX, XLSX and PPTX files come as a text
        preview; use search_file to find passages in them.
        """
        from generalAgent.documents.reading import OFFICE_TYPES, OLD_OFFICE, PDF_TYPES

        workspace = env.workspace(runtime)
        real = workspace.resolve(path)
        shown = workspace.display(real)
        if not real.exists():
            raise ToolError(
                N_("{path} does not exist. list_workspace_files shows what is there."), path=shown
            )
        if real.is_dir():
            raise ToolError(
                N_("{path} is a folder. Use list_workspace_files with path={quoted}."),
                path=shown,
                quoted=repr(shown),
            )
        if real.suffix.lower() in PDF_TYPES.keys() | OFFICE_TYPES.keys() | OLD_OFFICE.keys():
            from generalAgent.documents.extract import preview_document
            from generalAgent.documents.ocr import ocr_call
            from generalAgent.documents.reading import DocumentError

            try:
                with ocr_call(
                    documents.ocr_max_pages_per_call, env.cancel_token(runtime)
                ):  # a scan's first pages
                    preview = preview_document(real, documents, workspace.open_for_reading)
            except DocumentError as exc:
                raise ToolError.of(exc) from exc
            return (
                f"{shown} (preview; search_file with precise keywords finds passages anywhere in it)\n\n"
                f"{preview}"
            )
        size = real.stat().st_size
        whole = size <= documents.text_file_max_size or offset > 1 or limit != DEFAULT_LIMIT
        try:
            text, damage = workspace.read_text_replacing(
                real, max_bytes=READ_CAP_BYTES if whole else documents.text_preview_chars * 4
            )
        except NotText as exc:
            raise ToolError(
                N_("{problem}. read_file reads text and documents only."), problem=said_of(exc)
            ) from exc
        except OSError as exc:
            raise ToolError.from_os_error(exc, shown) from exc
        if not text:
            return f"{shown} is empty."
        if not whole:
            text = text[: documents.text_preview_chars]
        body, first, last = number_lines(text, offset, max(1, limit))
        if not body:
            return f"{shown} has {len(text.splitlines())} lines; offset {offset} is past the end."
        total = len(text.splitlines())
        note = f"{shown}: lines {first}-{last}"
        if whole:
            note += f" of {total}"
            if last < total:
                note += f". Continue with offset={last + 1}."
        else:
            note += (
                f" of the first {documents.text_preview_chars:,} characters ({size:,} bytes in all). "
                f"Continue with offset={last + 1}, or search_file for specific passages."
            )
        return f"{damage}\n{note}\n{body}" if damage else f"{note}\n{body}"

    # The one file it reads: it runs beside calls on other files (tools/judge.py).
    read_file.metadata = {**(read_file.metadata or {}), READS_FILE: "path"}
    return read_file
