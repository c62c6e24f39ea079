"""search_file: find passages in one document of the workspace (PDF, Office, Markdown, text)."""

from __future__ import annotations

from langchain_core.tools import BaseTool, tool
from langgraph.prebuilt import ToolRuntime

from generalAgent.documents.search import (
    SearchFailure,
    check_citation,
    render_citation,
    render_search,
    search_document,
)
from generalAgent.search.embeddings import embeddings_from_settings
from generalAgent.tools.environment import ToolEnvironment
from generalAgent.tools.errors import ToolError


def create_tool(env: ToolEnvironment) -> BaseTool:
    settings = env.settings
    vectors = embeddings_from_settings(settings)  # None unless semantic search is configured

    @tool("search_file")
    def search_file(
        file_path: str,
        query: str,
        runtime: ToolRuntime,
        max_results: int | None = None,
        regex: bool = False,
        check_place: str | None = None,
    ) -> str:
        """Search one document for passages: PDF, DOCX, XLSX, PPTX, Markdown, text or code.

        Returns the best passages, one per page or section, each with its place (page,
        slide, sheet and rows, or § section) to cite, and the chunks around it. Works in
        Chinese and English; passages with more of the words, and rarer ones, come first.
        Use short, specific words (names, numbers, terms), not a whole question. Set
        regex=true to grep the exact text with a regular expression instead.
        To verify a citation, put the quoted sentence in query and its place in
        check_place: the answer says whether it occurs there word for word (or where).

        Args:
            file_path: a path in the working folder or the workspace, e.g. report.pdf or uploads/report.pdf
            query: words to look for, e.g. "营收增长 2024" or "baseline results"
            max_results: passages to return (leave it unset for the usual number)
            regex: treat query as a regular expression (case-insensitive)
            check_place: a cited place, e.g. "page 12" or "§ Pricing": check query is there
        """
        workspace = env.workspace(runtime)
        path = workspace.resolve(file_path)
        if not path.is_file():
            raise ToolError(
                f"{file_path} is not a file in the workspace or the working folder. "
                "list_workspace_files shows the file names (uploads/ holds the files the user attached)."
            )
        if check_place:
            try:
                checked = check_citation(
                    settings.paths.indexes_db,
                    settings.documents,
                    path,
                    query,
                    check_place,
                    shown_as=workspace.display(path),
                    open_file=workspace.open_for_reading,
                )
            except SearchFailure as exc:
                raise ToolError(str(exc)) from exc
            return render_citation(checked)
        try:
            result = search_document(
                settings.paths.indexes_db,
                settings.documents,
                path,
                query,
                max_results,
                regex=regex,
                shown_as=workspace.display(path),
                vectors=vectors,
                open_file=workspace.open_for_reading,
            )
        except SearchFailure as exc:
            raise ToolError(str(exc)) from exc
        return render_search(result)

    return search_file
