"""search_folder: find passages across every document under a workspace folder."""

from __future__ import annotations

from langchain_core.tools import BaseTool, tool

from generalAgent.display import N_
from generalAgent.tools.environment import ToolEnvironment, ToolRuntime
from generalAgent.tools.errors import ToolError


def create_tool(env: ToolEnvironment) -> BaseTool:
    settings = env.settings
    # The engine (documents/folder.py and the index) loads on the first call, as search_file's.

    @tool("search_folder")
    def search_folder_tool(
        query: str | list[str],
        runtime: ToolRuntime,
        folder: str = ".",
        max_results: int | None = None,
    ) -> str:
        """Search every document under a folder at once (PDF, DOCX, XLSX, PPTX, Markdown,
        text, code): a folder of documents is searched like one book.

        Returns the best passages grouped per document, best document first, each with
        its place (page, slide, sheet and rows, or § section) to cite and the chunks
        around it, and says each document's language. Documents not indexed yet, or
        changed, are indexed first (a large folder may take several searches; the answer
        says how many are left). Use short, specific words. Words match only in a
        document's own language: when the documents are in another language than the
        user's, give query as a list, the user's words and their rendering in the
        documents' language, e.g. ["备份 恢复", "backup restore"]. To read one document
        further, use search_file on it.

        Args:
            query: words to look for, or a list of phrasings of the same question (up to 5)
            folder: workspace folder, e.g. uploads/ or uploads/contracts ("." for all)
            max_results: passages to return in all (leave it unset for the usual number)
        """
        from generalAgent.documents.folder import render_folder_search, search_folder
        from generalAgent.documents.ocr import ocr_call
        from generalAgent.documents.search import SearchFailure
        from generalAgent.search.lookup import INDEX_ERRORS

        failures: tuple[type[Exception], ...] = (SearchFailure, *INDEX_ERRORS)

        workspace = env.workspace(runtime)
        path = workspace.resolve(folder)
        if not path.is_dir():
            raise ToolError(
                N_(
                    "{folder} is not a folder in the workspace. Use search_file for one file, "
                    "or list the workspace to see the folders (uploads/ holds the user's files)."
                ),
                folder=folder,
            )
        try:
            semantic = env.semantic_search()
            # Ctrl-C gives up the query's embedding request, not only what follows it (the
            # call's cancel: ocr_call). The session's background reads the tables of the PDFs
            # indexed here with their text only (documents/index.py): the answer does not
            # wait for them.
            with (
                env.document_index(runtime) as where,
                ocr_call(None, env.cancel_token(runtime), scans=env.scans(runtime)),
            ):
                result = search_folder(
                    settings.paths.indexes_db,
                    settings.documents,
                    path,
                    query,
                    max_results,
                    shown_as=workspace.display,
                    vectors=semantic.for_query() if semantic is not None else None,
                    open_file=workspace.open_for_reading,
                    **where,
                    render=env.query_renderer(runtime),
                )
        except failures as exc:
            raise ToolError.of(exc) from exc
        note = ""
        if semantic is not None:
            if result.warning:  # the query could not be embedded; the answer says so
                semantic.failed(result.warning, told=True)
            note = semantic.after_search()
        rendered = render_folder_search(result)
        return f"{rendered}\n\n{note}" if note else rendered

    return search_folder_tool
