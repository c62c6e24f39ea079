"""search_file: find passages in one document of the workspace (PDF, Office, Markdown, text)."""

from __future__ import annotations

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError
from generalAgent.tools.reading_progress import reading_progress


def create_tool(env: ToolEnvironment) -> BaseTool:
    settings = env.settings

    @tool("search_file")
    def search_file(
        file_path: str,
        query: str | list[str],
        runtime: ToolRuntime,
        max_results: int | None = None,
        regex: bool = False,
        check_place: str | None = None,
    ) -> str:
        """Search one document for passages: PDF, DOCX, XLSX, PPTX, Markdown, text or code.

        Returns the best passages, one per page or section, each with its place (page,
        slide, sheet and rows, or § section) to cite, and the chunks around it, and says
        the document's language. Works in Chinese and English; passages with more of the
        words, and rarer ones, come first. Use short, specific words (names, numbers,
        terms), not a whole question. Words match only in the document's own language:
        when it differs from the user's, give query as a list of phrasings, the user's
        words and their rendering in the document's language, e.g. ["日志 上次启动",
        "log since last boot"]; the phrasings are searched together and fused.
        Set regex=true to grep the exact text with a regular expression instead.
        To verify a citation, put the quoted sentence in query and its place in
        check_place: the answer says whether it occurs there word for word (or where).

        Args:
            file_path: a path in the working folder or the workspace, e.g. report.pdf or uploads/report.pdf
            query: words to look for, e.g. "营收增长 2024" or "baseline results", or a list
                of phrasings of the same question (up to 5)
            max_results: passages to return (leave it unset for the usual number)
            regex: treat query as a regular expression (case-insensitive)
            check_place: a cited place, e.g. "page 12" or "§ Pricing": check query is there
        """
        from generalAgent.documents.ocr import ocr_call

        # Indexing a scan reads its pages by OCR: within the budget of one call, and
        # stopped by Ctrl-C (documents/ocr.py).
        with ocr_call(
            settings.documents.ocr_max_pages_per_call, env.cancel_token(runtime), scans=env.scans(runtime)
        ):
            return _search(file_path, query, runtime, max_results, regex, check_place)

    def _search(
        file_path: str,
        query: str | list[str],
        runtime: ToolRuntime,
        max_results: int | None,
        regex: bool,
        check_place: str | None,
    ) -> str:
        from generalAgent.documents.search import (
            SearchFailure,
            check_citation,
            render_citation,
            render_search,
            search_document,
        )
        from generalAgent.search.lookup import INDEX_ERRORS

        failures: tuple[type[Exception], ...] = (SearchFailure, *INDEX_ERRORS)

        workspace = env.workspace(runtime)
        path = workspace.resolve(file_path)
        if not path.is_file():
            raise ToolError(
                N_(
                    "{path} is not a file in the workspace or the working folder. "
                    "list_workspace_files shows the file names (uploads/ holds the files the user attached)."
                ),
                path=file_path,
            )
        if check_place:
            if not isinstance(query, str):
                raise ToolError(N_("check_place checks one quote: give query as one string."))
            try:
                with env.document_index(runtime) as where:
                    checked = check_citation(
                        settings.paths.indexes_db,
                        settings.documents,
                        path,
                        query,
                        check_place,
                        shown_as=workspace.display(path),
                        open_file=workspace.open_for_reading,
                        progress=reading_progress(runtime.stream_writer, workspace.display(path)),
                        store=where.get("store"),
                        viewer=where["viewer"],
                    )
            except SearchFailure as exc:
                raise ToolError.of(exc) from exc
            return render_citation(checked)
        try:
            semantic = env.semantic_search()
            with env.document_index(runtime) as where:
                result = search_document(
                    settings.paths.indexes_db,
                    settings.documents,
                    path,
                    query,
                    max_results,
                    regex=regex,
                    shown_as=workspace.display(path),
                    vectors=semantic.for_query() if semantic is not None else None,
                    open_file=workspace.open_for_reading,
                    **where,
                    render=env.query_renderer(runtime),
                    progress=reading_progress(runtime.stream_writer, workspace.display(path)),
                )
        except failures as exc:
            raise ToolError.of(exc) from exc
        note = ""
        if semantic is not None:
            if result.warning:  # the query could not be embedded; the answer says so
                semantic.failed(result.warning, told=True)
            note = semantic.after_search()
        rendered = render_search(result)
        return f"{rendered}\n\n{note}" if note else rendered

    return search_file
