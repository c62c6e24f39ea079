"""view_page: look at a PDF page, a slide or an image file as a picture (charts, diagrams, scans).

Text extraction keeps a page's words and loses its figures. For a model that takes images,
the page is rendered by pdfium at a bounded resolution (the provider's longest side, at
most MAX_DPI) and shown: the answer's artifact holds the stored image, which the planner
sends right after the tool answers (graph/images.py says why not inside it). For a
text-only model the answer is the page's text: its text layer, or what OCR reads on the
rendered page when the layer is thin (a scan, a chart), with a line saying so. Slides and
Word pages are shown as LibreOffice prints them (it must be installed).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_, Message
from generalAgent.documents.images import (
    IMAGE_SUFFIXES,
    IMAGES_KEY,
    ImageError,
    ImageLimits,
    recognise_image,
    store_image,
)
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError, said_of

# 200 dpi keeps small print legible; the provider's side limit usually binds first.
MAX_DPI = 200
# A page is rendered at most this large for OCR (text-only models).
OCR_SIDE = 2_500
PAGE_TEXT_CHARS = 3_000  # of the text layer, beside the image
# Shown as LibreOffice prints them (documents/convert.py), then as a PDF page.
PRINTED_SUFFIXES = frozenset({".pptx", ".ppt", ".dps", ".docx", ".doc", ".wps"})


def create_tool(env: ToolEnvironment) -> BaseTool:
    @tool("view_page", response_format="content_and_artifact")
    def view_page(file_path: str, runtime: ToolRuntime, page: int = 1) -> tuple[str, dict[str, Any]]:
        """Look at one page of a PDF, a slide of a presentation, or an image file, as a picture.

        Use it when the words are not enough: a chart, a diagram, a table drawn as an
        image, a scanned page, a screenshot, or an image attached in an earlier turn
        (those are shown only in the turn they were attached). Find the page first
        (search_file gives page numbers), then view it.

        Args:
            file_path: workspace path, e.g. uploads/report.pdf, uploads/deck.pptx or uploads/chart.png
            page: page or slide number, 1-based
        """
        workspace = env.workspace(runtime)
        real = workspace.resolve(file_path)
        shown = workspace.display(real)
        if not real.is_file():
            raise ToolError(
                N_("{path} is not a file in the workspace; list_workspace_files shows what is there."),
                path=shown,
            )
        suffix = real.suffix.lower()
        limits = env.image_limits
        if suffix == ".pdf" or suffix in PRINTED_SUFFIXES:
            opener: Callable[[Path], BinaryIO] = workspace.open_for_reading
            if suffix in PRINTED_SUFFIXES:  # a slide or a Word page: as LibreOffice prints it
                from generalAgent.documents.convert import ImpressMissing, convert_to_pdf
                from generalAgent.documents.reading import DocumentError

                try:
                    printed = convert_to_pdf(real, workspace.open_for_reading)
                except ImpressMissing as exc:
                    if suffix != ".pptx":  # an old slide file is read through Impress as well
                        raise ToolError.of(exc) from exc
                    return _slide_text(env, workspace.open_for_reading, real, shown, page, exc), {}
                except DocumentError as exc:
                    raise ToolError.of(exc) from exc
                opener = lambda _path: io.BytesIO(printed)  # noqa: E731 - the PDF stands for the file
            picture, text, total = _render_pdf_page(opener, real, page, limits)
            place = (
                N_("{path} slide {page} of {total}")
                if suffix in (".pptx", ".ppt", ".dps")
                else N_("{path} page {page} of {total}")
            )
            said_where = Message(place, {"path": shown, "page": str(page), "total": str(total)})
        elif suffix in IMAGE_SUFFIXES:
            with workspace.open_for_reading(real) as handle:
                picture = handle.read()
            text, said_where = "", Message(N_("{path}"), {"path": shown})
        else:
            raise ToolError(
                N_(
                    "{path}: view_page shows PDF pages, slides, Word pages and images; "
                    "read other files with read_file or search_file."
                ),
                path=shown,
            )
        where = said_where.english()  # the model's words; the person's come from `said_where`
        if limits is None:
            return _as_text(where, picture, text), {}
        try:
            ref = store_image(workspace.root, picture, limits, where)
        except ImageError as exc:
            raise ToolError(
                N_("{where} cannot be shown: {problem}."), where=said_where, problem=said_of(exc)
            ) from exc
        answer = f"{where} ({ref['width']}×{ref['height']}): the image follows in the next message."
        if text.strip():
            answer += f"\nText layer of the page:\n{text[:PAGE_TEXT_CHARS]}"
        return answer, {IMAGES_KEY: [ref]}

    return view_page


def _slide_text(
    env: ToolEnvironment,
    open_file: Callable[[Path], BinaryIO],
    path: Path,
    shown: str,
    page: int,
    why: Exception,
) -> str:
    """A slide that cannot be rendered (LibreOffice without Impress): its text, read from the
    .pptx itself, after the sentence saying why there is no picture."""
    from generalAgent.documents.office import read_pptx
    from generalAgent.documents.reading import DocumentError, ReadLimit

    try:
        with open_file(path) as handle:
            slides = read_pptx(handle, path, env.settings.documents, ReadLimit())
    except DocumentError as exc:
        raise ToolError.of(exc) from exc
    if not 1 <= page <= len(slides):
        raise ToolError(
            N_("{name} has {total} pages; page {page} does not exist."),
            name=path.name,
            total=len(slides),
            page=page,
        )
    text = slides[page - 1].text.strip() or "(no text on this slide)"
    return (
        f"{why}\n{shown} slide {page} of {len(slides)}: its text follows instead of the picture "
        f"(figures are not described):\n{text[: PAGE_TEXT_CHARS * 3]}"
    )


def _render_pdf_page(
    open_file: Any, path: Any, page: int, limits: ImageLimits | None
) -> tuple[bytes, str, int]:
    """(PNG of the page, its text layer, pages in the document)."""
    import pypdfium2 as pdfium

    from generalAgent.documents.pdf import page_text
    from generalAgent.documents.pdfium_lock import PDFIUM

    with open_file(path) as handle:
        data = handle.read()
    with PDFIUM:  # one pdfium call at a time in the process
        try:
            pdf = pdfium.PdfDocument(data)
        except pdfium.PdfiumError:
            raise ToolError(
                N_("{name} is not a readable PDF (damaged, or password-protected)."), name=path.name
            ) from None
        try:
            total = len(pdf)
            if not 1 <= page <= total:
                raise ToolError(
                    N_("{name} has {total} pages; page {page} does not exist."),
                    name=path.name,
                    total=total,
                    page=page,
                )
            document_page = pdf[page - 1]
            try:
                width, height = document_page.get_size()  # points, 72 a inch
                side = limits.max_side if limits is not None else OCR_SIDE
                scale = min(MAX_DPI / 72, side / max(width, height, 1))
                bitmap = document_page.render(scale=scale)
                image = bitmap.to_pil().copy()  # out of pdfium's buffer before it is closed
                bitmap.close()
                textpage = document_page.get_textpage()
                try:
                    text = page_text(textpage)  # columns in reading order
                finally:
                    textpage.close()
            finally:
                document_page.close()
        finally:
            pdf.close()
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue(), text, total


def _as_text(where: str, picture: bytes, text: str) -> str:
    """A page for a text-only model: its text layer, else what OCR reads on it."""
    from generalAgent.documents.ocr import OcrUnavailable, needs_ocr

    if text.strip() and not needs_ocr(text):
        return (
            f"{where}: this model does not take images, so the page's text layer is given instead "
            f"(figures are not described):\n{text[: PAGE_TEXT_CHARS * 3]}"
        )
    try:
        recognised = recognise_image(picture).strip()
    except OcrUnavailable as exc:
        return f"{where}: this model does not take images and {exc}; the page has no text layer to give."
    except ImageError as exc:
        raise ToolError(N_("{where} cannot be read: {problem}."), where=where, problem=said_of(exc)) from exc
    if not recognised and text.strip():  # OCR found nothing (a font drawn as boxes): the layer's few words
        return f"{where}: this model does not take images; the page's text layer follows:\n{text.strip()}"
    return (
        f"{where}: this model does not take images; the text OCR read on the page follows "
        f"(it may misread; figures are not described):\n{recognised or '(no text found)'}"
    )
