"""The UI's languages: the Chinese catalog is complete and compiled, and the language follows
UI_LANGUAGE, then the locale."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from generalAgent import i18n

PACKAGE = i18n.LOCALE_DIR.parent
CATALOG = i18n.LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / f"{i18n.DOMAIN}"


def code_messages() -> set[str | tuple[str, str]]:
    found = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
        str(PACKAGE),
        method_map=[("**.py", "python")],
        keywords={"_": None, "N_": None, "N_plural": (1, 2), "ngettext": (1, 2)},
    ):
        found.add(message if isinstance(message, str) else tuple(message))
    return found


def catalog():
    with open(f"{CATALOG}.po", "rb") as handle:
        return read_po(handle, locale="zh_CN")


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_every_message_of_the_code_has_a_chinese_translation() -> None:
    translated = catalog()
    missing = []
    for message in code_messages():
        key = message[0] if isinstance(message, tuple) else message
        entry = translated.get(key)
        strings = entry.string if entry is not None else None
        if not entry or entry.fuzzy or not strings or (isinstance(strings, tuple) and not all(strings)):
            missing.append(key)
    assert missing == [], "run `make i18n` and translate these in generalagent.po"


def test_no_message_is_marked_inside_an_f_string() -> None:
    """babel reads an f-string as one token, so a _("...") inside one never reaches the catalog."""
    hidden = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in PACKAGE.rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if re.search(r"""f(["'])[^"']*\{[^}]*\b_\((["'])""", line)
    ]
    assert hidden == []


def test_translations_keep_the_fields_of_the_message() -> None:
    for entry in catalog():
        if not entry.id:
            continue
        source = entry.id if isinstance(entry.id, str) else entry.id[0]
        targets = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        for target in targets:
            assert fields(target) == fields(source), (source, target)


# One Chinese word for each term the UI uses often, so a reader never wonders whether 片段 and
# 分块 are two things (the catalog had both for "chunk", 端点 and 接口 for "endpoint", 目录 and
# 文件夹 for "folder"). (English pattern, the word every match says, words none may say).
# Option, argument and command names (--chunks, chunk_start, {folder}, generalagent index)
# are not the term.
TERMS = [
    (r"(?<![-_{])\bchunks?\b(?![_}])", "片段", ("分块", "块")),
    (r"\bendpoints?\b(?!})", "接口", ("端点",)),
    (r"\bembedding models?\b", "向量模型", ("嵌入",)),
    (r"(?<![{#])\b(folders?|[Dd]irector(y|ies))\b(?![}/])", "文件夹|数据目录", ("目录",)),
    (r"(?<!-)\b[Aa]pprov(e|es|ed|ing|al|als)\b", "批准|审批", ("同意",)),
    (r"\bknowledge base\b", "知识库", ()),
    (r"(?<![-_/.`{])(?<!generalagent )\bindex(es|ed|ing)?\b(?![_.=}])", "索引", ()),
    (r"\bsemantic search\b", "语义检索", ("语义搜索",)),
    (r"\bworkspace\b", "工作区", ("工作空间",)),
    (r"\bcategor(y|ies)\b(?!,)", "类别", ("分类",)),  # "…, category, tags": the keys' own names
]


@pytest.mark.parametrize(
    ("english", "chosen", "others"),
    TERMS,
    ids=[
        "chunk",
        "endpoint",
        "embedding-model",
        "folder",
        "approve",
        "knowledge-base",
        "index",
        "semantic-search",
        "workspace",
        "category",
    ],
)
def test_each_term_is_translated_with_one_word(english: str, chosen: str, others: tuple[str, ...]) -> None:
    wrong = []
    for entry in catalog():
        sources = (entry.id,) if isinstance(entry.id, str) else entry.id
        if not entry.id or not any(re.search(english, source) for source in sources):
            continue
        for target in entry.string if isinstance(entry.string, tuple) else (entry.string,):
            rest = re.sub(chosen, "", target)  # 数据目录 is the data folder's name, not a stray 目录
            if not re.search(chosen, target) or any(other in rest for other in others):
                wrong.append((sources[0], target))
    assert wrong == []


def test_the_compiled_catalog_is_current() -> None:
    """What the .mo holds, not its bytes: those name the babel version that wrote them."""

    def translations(messages: Catalog) -> dict[object, object]:
        return {
            key(message.id): key(message.string)
            for message in messages
            if message.id and message.string and not message.fuzzy
        }

    def key(text: str | Sequence[str]) -> str | tuple[str, ...]:
        return text if isinstance(text, str) else tuple(text)

    with open(f"{CATALOG}.mo", "rb") as handle:
        compiled = read_mo(handle)
    assert translations(compiled) == translations(catalog()), "run `make i18n` to compile generalagent.po"
    assert compiled.plural_forms == catalog().plural_forms


@pytest.mark.parametrize(
    ("setting", "environ", "expected"),
    [
        ("zh", {"LANG": "en_US.UTF-8"}, "zh"),
        ("en", {"LANG": "zh_CN.UTF-8"}, "en"),
        ("auto", {"LANG": "zh_CN.UTF-8"}, "zh"),
        (None, {"LC_ALL": "zh_TW.UTF-8", "LANG": "en_US"}, "zh"),
        (None, {"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, "en"),  # LC_ALL wins, even when it says C
        (None, {"LC_MESSAGES": "zh_CN", "LANG": "en_GB"}, "zh"),
        (None, {}, "en"),
    ],
)
def test_the_language_follows_the_setting_then_the_locale(setting, environ, expected) -> None:
    assert i18n.choose_language(setting, environ) == expected


def test_messages_are_shown_in_the_chosen_language() -> None:
    translated = [e for e in catalog() if e.id and isinstance(e.id, str) and e.string]
    if not translated:
        pytest.skip("the catalog has no entries yet")
    entry = translated[0]
    try:
        i18n.use_language("zh")
        assert i18n._(entry.id) == entry.string
        i18n.use_language("en")
        assert i18n._(entry.id) == entry.id
    finally:
        i18n.use_language("en")
    assert re.search(r"[\u4e00-\u9fff]", entry.string)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("zh", "zh"),
        ("zh_CN", "zh"),
        ("zh-CN", "zh"),
        ("zh_Hans", "zh"),
        ("zh_CN.UTF-8", "zh"),
        ("ZH-hans-CN", "zh"),
        ("en_US", "en"),
        ("EN", "en"),
        ("auto", "auto"),
    ],
)
def test_ui_language_takes_locale_tags(monkeypatch: pytest.MonkeyPatch, value: str, expected: str) -> None:
    from generalAgent.config.settings import load_settings

    monkeypatch.setenv("UI_LANGUAGE", value)
    assert load_settings(env_file=None).interface.ui_language == expected


def test_ui_language_names_what_it_accepts(monkeypatch: pytest.MonkeyPatch) -> None:
    from generalAgent.config.settings import SettingsError, load_settings

    monkeypatch.setenv("UI_LANGUAGE", "fr_FR")
    with pytest.raises(SettingsError, match=r"UI_LANGUAGE='fr_FR'.*auto, en, zh"):
        load_settings(env_file=None)


# Exceptions whose message a person reads (in the terminal, the editor, a command's line):
# each is raised with an N_-marked template and its fields, never an f-string, so the
# catalog holds the sentence and the terminal can say it in the UI language.
SAID_ERRORS = {
    "ToolError",
    "WorkspaceError",
    "KnowledgeError",
    "DownloadError",
    "DocumentError",
    "FrontMatterError",
    "ImageError",
    # Said in the UI language where they are raised, or kept as a Message (issue 37's sweep).
    "SearchFailure",
    "MCPConfigError",
    "ToolConfigError",
    # Why embeddings failed: `generalagent index`'s line and `kb search`'s warning.
    "EmbeddingError",
    "EmbeddingTimeout",
}


def _raised_sentences() -> list[str]:
    """`file:line` of each raise of those errors whose first argument is a written-out
    sentence (an f-string, a concatenation, or a literal without N_)."""
    import ast

    found = []
    for path in PACKAGE.rglob("*.py"):
        if "builtin" in path.relative_to(PACKAGE).parts[:1]:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in SAID_ERRORS
            ):
                continue
            first = node.args[0] if node.args else None
            if isinstance(first, ast.JoinedStr | ast.BinOp) or (
                isinstance(first, ast.Constant) and isinstance(first.value, str)
            ):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


# search/semantic.py raises EmbeddingError twice with a plain literal; another helper worked
# in that file in round 5, so the N_ around it waits for the merge. The sentence is in the
# catalog already (knowledge/search.py raises the same one), so it is shown translated.
def test_errors_a_person_reads_are_marked_templates() -> None:
    unmarked = list(_raised_sentences())
    assert unmarked == [], 'raise them as Error(N_("... {field} ..."), field=value)'


def test_a_tool_error_is_english_for_the_model_and_chinese_for_a_person() -> None:
    from generalAgent.display import N_
    from generalAgent.tools.errors import SHOWN_ERROR, ToolError, shown_error

    error = ToolError(N_("{path} does not exist. list_workspace_files shows what is there."), path="a.txt")
    assert str(error) == "a.txt does not exist. list_workspace_files shows what is there."
    artifact = {SHOWN_ERROR: error.said.to_data()}
    try:
        i18n.use_language("zh")
        assert (
            shown_error("Error: " + str(error), artifact, i18n._)
            == "错误：a.txt 不存在。list_workspace_files 会显示有哪些文件。"
        )
        assert shown_error("Error: raw", None, i18n._) == "Error: raw"  # an answer saved before: as it was
    finally:
        i18n.use_language("en")
    assert (
        shown_error("Error: x", artifact, i18n._)
        == "Error: a.txt does not exist. list_workspace_files shows what is there."
    )


def test_an_os_error_is_said_in_words_naming_the_path() -> None:
    """`[Errno 13] Permission denied: '/abs/report.pdf'` becomes a sentence in the UI language."""
    import errno

    from generalAgent.tools.errors import ToolError

    denied = PermissionError(errno.EACCES, "Permission denied", "/home/me/report.pdf")
    error = ToolError.from_os_error(denied, "report.pdf")
    assert "Errno" not in str(error) and str(error).startswith(
        "report.pdf cannot be opened: permission denied"
    )
    try:
        i18n.use_language("zh")
        shown = error.said.shown(i18n._)
    finally:
        i18n.use_language("en")
    assert shown.startswith("无法打开 report.pdf：权限不足") and "Permission" not in shown


def test_kb_show_fields_follow_the_language_and_count() -> None:
    from generalAgent.knowledge.items import KnowledgeItem
    from generalAgent.knowledge.render import render_item

    item = KnowledgeItem(id="abc", domain="general", title="报销", content="差旅", source_path="/d/报销.md")
    english = render_item(item, None, 1, 1000)
    assert "| 1 chunk |" in english and "source: /d/报销.md" in english
    assert "| 3 chunks |" in render_item(item, None, 3, 1000)
    try:
        i18n.use_language("zh")
        chinese = render_item(item, None, 1, 1000, i18n._, i18n.ngettext)
    finally:
        i18n.use_language("en")
    assert "1 个片段" in chinese and "来源：/d/报销.md" in chinese and "chunk" not in chinese


# The places a Chinese session still read English (issue 37, item 6): each said in Chinese
# (the `chinese` fixture: tests/unit/conftest.py).
def test_a_front_matter_refusal_is_said_in_the_ui_language(chinese: None) -> None:
    from generalAgent.display import Message, said_of_error
    from generalAgent.front_matter import FrontMatterError, split_front_matter

    for text, words in [
        ("# no front matter\n", "没有开头的元数据"),
        ("---\nname: x\n", "没有以一行 '---' 结束"),
        ("---\n- a\n---\n", "必须是键到值的映射"),
        ("---\nname: [x\n---\n", "不是有效的 YAML"),
    ]:
        with pytest.raises(FrontMatterError) as refused:
            split_front_matter(text)
        said = said_of_error(refused.value)
        assert isinstance(said, Message) and words in said.shown(i18n._), text
        assert "front matter" in str(refused.value)  # the English, for logs and the model


def test_the_attach_line_names_the_file_type_in_the_ui_language(chinese: None) -> None:
    from generalAgent.display import describe_file

    note = {"path": "uploads/notes.txt", "type": "text", "size": 2048}
    assert describe_file(note, i18n.ngettext, i18n._) == "uploads/notes.txt (文本, 2.0 KB)"
    assert describe_file(note) == "uploads/notes.txt (text, 2.0 KB)"  # the model's line
    pdf = {"path": "uploads/a.pdf", "type": "pdf", "size": 2048, "pages": 3}
    assert describe_file(pdf, i18n.ngettext, i18n._).startswith("uploads/a.pdf (pdf, 2.0 KB, 3")


def test_a_page_that_cannot_be_shown_is_named_in_the_ui_language(chinese: None, settings, tmp_path) -> None:
    """view_page's "page 1 of 2" was English inside the Chinese sentence, and so was the reason."""
    from generalAgent.documents.images import ImageLimits
    from generalAgent.tools.environment import ToolEnvironment
    from generalAgent.tools.errors import shown_error
    from tests.support.documents import make_pdf
    from tests.support.tools import run_tool, workspace_root

    make_pdf(workspace_root(settings) / "uploads" / "r.pdf", [["第一页"], ["第二页"]])
    tiny = ToolEnvironment(settings=settings, image_limits=ImageLimits(max_bytes=200))
    answer, state = run_tool(settings, "view_page", {"file_path": "uploads/r.pdf", "page": 1}, env=tiny)
    assert answer.startswith("Error: uploads/r.pdf page 1 of 2 cannot be shown: the image cannot be made")
    shown = shown_error(answer, state["messages"][-1].artifact, i18n._, i18n.ngettext)
    assert "uploads/r.pdf 第 1 页（共 2 页）" in shown and "图像无法缩小到模型能接受的大小" in shown, shown


def test_a_file_linked_out_of_its_folder_is_named_in_the_ui_language(chinese: None, tmp_path) -> None:
    """The line "… leads outside … (a symbolic link)" was English for a skill, an agent
    profile, AGENTS.md, a custom command and the tools file in a Chinese session; each says
    once what follows (the link's sentence ended "; skipped" and the loaders added theirs)."""
    from generalAgent.agent_profiles import load_agent_profiles
    from generalAgent.cli.custom_commands import load_custom_commands
    from generalAgent.config.settings import load_settings
    from generalAgent.config.trust import FolderTrust
    from generalAgent.graph.project_memory import load_project_memory
    from generalAgent.skills.loader import load_skills
    from generalAgent.tools.registry import ToolConfigError, parse_tools_yaml

    i18n.use_language("zh")  # importing generalAgent.cli chose the language of the environment
    secret = tmp_path / "secret.txt"
    secret.write_text("PRIVATE", encoding="utf-8")
    (tmp_path / "skills" / "stolen").mkdir(parents=True)
    (tmp_path / "skills" / "stolen" / "SKILL.md").symlink_to(secret)
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "spy.md").symlink_to(secret)
    (tmp_path / "user" / "commands").mkdir(parents=True)
    (tmp_path / "user" / "commands" / "leak.md").symlink_to(secret)
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "tools.yaml").symlink_to(secret)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "AGENTS.md").symlink_to(secret)
    leaving = "通向 {folder} 之外（符号链接）"

    [skill] = load_skills(tmp_path / "skills").warnings
    assert (
        skill.shown(i18n._)
        == f"{tmp_path}/skills/stolen/SKILL.md " + leaving.format(folder=tmp_path / "skills") + "；跳过此技能"
    )
    [profile] = load_agent_profiles(tmp_path / "agents").warnings
    assert profile.shown(i18n._).endswith(leaving.format(folder=tmp_path / "agents") + "；跳过此配置")
    [command] = load_custom_commands(tmp_path / "user", FolderTrust(), tmp_path).problems
    leak = tmp_path / "user" / "commands" / "leak.md"
    assert command.shown(i18n._) == f"{leak} " + leaving.format(folder=tmp_path / "user" / "commands")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("USER_AGENTS_FILE", str(tmp_path / "home" / "AGENTS.md"))
        [memory] = load_project_memory(load_settings(env_file=None), tmp_path / "skills").problems
    assert memory.shown(i18n._).endswith(leaving.format(folder=tmp_path / "home"))
    with pytest.raises(ToolConfigError) as refused:
        parse_tools_yaml(tmp_path / "conf" / "tools.yaml")
    assert str(refused.value).endswith("之外（符号链接）；请让 TOOLS_CONFIG 直接指向该文件本身")
    for said in (skill, profile, command, memory):
        assert "leads outside" in said.english()  # the English, for logs
        assert said.english().count("skipped") <= 1 and said.shown(i18n._).count("跳过") <= 1


def test_a_tools_file_that_cannot_be_read_is_said_in_the_ui_language(chinese: None, tmp_path) -> None:
    """The lines "tools.yaml: cannot read it (Permission denied)" and "not valid YAML" were English."""
    import os

    from generalAgent.tools.registry import ToolConfigError, parse_tools_yaml

    with pytest.raises(ToolConfigError) as missing:
        parse_tools_yaml(tmp_path / "tools.yaml")
    assert str(missing.value) == "tools.yaml：无法读取（它不存在）"
    broken = tmp_path / "broken.yaml"
    broken.write_text("core: [a\n", encoding="utf-8")
    with pytest.raises(ToolConfigError) as invalid:
        parse_tools_yaml(broken)
    assert str(invalid.value).startswith("broken.yaml：不是有效的 YAML（")
    if os.geteuid() != 0:  # root reads any file
        locked = tmp_path / "locked.yaml"
        locked.write_text("core: {}\n", encoding="utf-8")
        locked.chmod(0)
        with pytest.raises(ToolConfigError, match="权限不足"):
            parse_tools_yaml(locked)


def test_an_image_left_out_of_a_request_is_said_in_the_ui_language(chinese: None, tmp_path) -> None:
    """The reason an attached image was not sent ("the model takes at most 5 images in one
    request", an OS error's strerror) was English in the chat's line; the model keeps English."""
    from PIL import Image

    from generalAgent.documents.images import ImageLimits
    from generalAgent.graph.images import turn_images

    for index in range(3):
        Image.new("RGB", (40, 30), (index * 60, 90, 160)).save(tmp_path / f"{index}.png")
    found = turn_images(["0.png", "1.png", "2.png"], tmp_path, True, ImageLimits(max_images=2))
    [(path, why)] = found.unread
    assert path == "2.png" and why.shown(i18n._) == "该模型一次请求最多接受 2 张图像"
    assert "[image: 2.png not attached: the model takes at most 2 images in one request]" in found.lines
    [(gone, missing)] = turn_images(["gone.png"], tmp_path, True, ImageLimits()).unread
    assert gone == "gone.png" and missing.shown(i18n._) == "它不存在"
    too_big = ImageLimits(max_request_bytes=3 * 1024 * 1024).over_request(1, 4 * 1024 * 1024)
    assert too_big is not None and too_big.shown(i18n._) == "该模型一次请求最多接受 3 MB 的图像"


def test_a_search_the_tools_cannot_run_is_said_in_the_ui_language(chinese: None, settings) -> None:
    """search_file and search_folder's refusals ("Empty query: …", "Cannot search …: invalid
    regular expression (…)") reached the terminal's error line in English."""
    from generalAgent.tools.errors import shown_error
    from tests.support.tools import run_tool, workspace_root

    (workspace_root(settings) / "uploads" / "制度.md").write_text(
        "# 报销\n\n差旅报销需要审批。\n", encoding="utf-8"
    )
    cases = [
        ("search_folder", {"folder": "uploads", "query": "  "}, "错误：查询为空：请给出要查找的词。"),
        (
            "search_file",
            {"file_path": "uploads/制度.md", "query": "[", "regex": True},
            "错误：无法搜索 uploads/制度.md：正则表达式无效（",
        ),
    ]
    for tool, args, chinese_line in cases:
        answer, state = run_tool(settings, tool, args)
        assert answer.startswith("Error: ") and "无法" not in answer and "查询" not in answer, answer
        shown = shown_error(answer, state["messages"][-1].artifact, i18n._, i18n.ngettext)
        assert shown.startswith(chinese_line), shown


def test_a_regular_expression_that_does_not_compile_is_said_in_the_ui_language(
    chinese: None, settings
) -> None:
    """The regex library's words ("missing ) at position 4") stayed English inside the
    Chinese sentence; the model still reads them as the library wrote them."""
    from generalAgent.tools.errors import shown_error
    from tests.support.tools import run_tool, workspace_root

    (workspace_root(settings) / "uploads" / "制度.md").write_text(
        "# 报销\n\n差旅报销需要审批。\n", encoding="utf-8"
    )
    answer, state = run_tool(
        settings, "search_file", {"file_path": "uploads/制度.md", "query": "(报销", "regex": True}
    )
    assert "invalid regular expression (missing ) at position 3)" in answer, answer
    shown = shown_error(answer, state["messages"][-1].artifact, i18n._, i18n.ngettext)
    assert shown == "错误：无法搜索 uploads/制度.md：正则表达式无效（缺少 )，位置 3）", shown


def test_a_search_database_that_cannot_be_reached_is_said_in_the_ui_language(chinese: None, settings) -> None:
    """The PostgreSQL store's refusals (an unreachable database, a lost connection) reached a
    Chinese user's error line in English; the English stays the exception's text."""
    import socket

    pytest.importorskip("psycopg")
    from generalAgent.display import Message, said_of_error
    from generalAgent.search.lookup import QueryError
    from generalAgent.search.postgres_store import PostgresSearchStore

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(QueryError) as refused:
        PostgresSearchStore(
            f"postgresql://nobody@127.0.0.1:{port}/none?connect_timeout=2", settings.documents
        )
    assert str(refused.value).startswith("Cannot reach the search database"), refused.value
    said = said_of_error(refused.value)
    assert isinstance(said, Message) and said.shown(i18n._).startswith("无法连接搜索数据库"), said


def test_a_document_indexed_without_its_vectors_says_why_in_the_ui_language(
    chinese: None, data_dir, tmp_path
) -> None:
    """`generalagent index` printed "Embeddings failed, indexed for keyword search only: {exc}"
    in English under a Chinese file's name; --json keeps the English."""
    import socket

    from generalAgent.config.settings import load_settings
    from generalAgent.documents.index import SearchIndex
    from generalAgent.search.embeddings import embeddings_from_settings

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = load_settings(
        env_file=None,
        model={"openai_api_key": "sk-test"},
        paths={"data_dir": data_dir},
        documents={"embedding_model": "test-embed", "embedding_base_url": f"http://127.0.0.1:{port}/v1"},
    )
    path = tmp_path / "报销.md"
    path.write_text("# 报销制度\n\n差旅报销需要部门经理审批。\n", encoding="utf-8")
    vectors = embeddings_from_settings(settings)
    with SearchIndex(settings.paths.indexes_db, settings.documents, vectors) as index:
        document = index.index_file(path)
    assert document.total_chunks >= 1 and document.warning is not None
    assert document.warning.shown(i18n._, i18n.ngettext) == (
        "生成向量失败，仅按关键词建立索引：向量接口无应答（连接被拒绝；请检查 EMBEDDING_BASE_URL）"
    )
    assert document.warning.english() == (
        "Embeddings failed, indexed for keyword search only: nothing answers at the embedding "
        "endpoint (connection refused; EMBEDDING_BASE_URL)"
    )


def test_a_hooks_file_that_cannot_be_read_is_said_in_the_ui_language(chinese: None, tmp_path) -> None:
    """The chat printed "{path} not read: {error}" with the error's English str(), which for a
    settings.json linked out of its folder named the path twice ("X not read: X leads outside …")."""
    from generalAgent.config.trust import FolderTrust
    from generalAgent.hooks import load_hooks

    user, elsewhere = tmp_path / "config", tmp_path / "elsewhere"
    user.mkdir()
    elsewhere.mkdir()
    (elsewhere / "settings.json").write_text('{"hooks": {}}', encoding="utf-8")
    (user / "settings.json").symlink_to(elsewhere / "settings.json")
    [problem] = load_hooks(user, FolderTrust(), tmp_path).problems
    linked = user / "settings.json"
    assert problem.english() == f"{linked} leads outside {user} (a symbolic link); not read"
    assert problem.said().shown(i18n._, i18n.ngettext) == f"{linked} 通向 {user} 之外（符号链接）；未读取"


@pytest.mark.parametrize(
    ("content", "english", "chinese_line"),
    [
        (
            b'{"hooks": {"PreToolUse": [}}',
            "not read: it is not valid JSON (Expecting value, line 1, column 27)",
            "未读取：它不是有效的 JSON（Expecting value，第 1 行第 27 列）",
        ),
        (
            b" " * 1_000_001 + b"{}",
            "not read: it is larger than 1,000,000 bytes (the most a settings file may be)",
            "未读取：它大于 1,000,000 字节（设置文件的上限）",
        ),
        (b'{"hooks": "\xff"}', "not read: it is not UTF-8 text", "未读取：它不是 UTF-8 文本"),
    ],
    ids=["invalid-json", "too-large", "not-utf8"],
)
def test_a_hooks_file_that_is_not_json_is_said_in_the_ui_language(
    chinese: None, tmp_path, content: bytes, english: str, chinese_line: str
) -> None:
    """A settings.json with a JSON error or over the size limit was said in English in a
    Chinese UI ("… not read: Expecting value: line 1 column 27 (char 26)", "… larger than
    1,000,000 bytes"); the parser's own detail may stay English inside the sentence."""
    from generalAgent.config.trust import FolderTrust
    from generalAgent.hooks import load_hooks

    user = tmp_path / "config"
    user.mkdir()
    (user / "settings.json").write_bytes(content)
    [problem] = load_hooks(user, FolderTrust(), tmp_path).problems
    path = user / "settings.json"
    assert problem.english() == f"{path} {english}"
    shown = problem.said().shown(i18n._, i18n.ngettext)
    head, _, rest = chinese_line.partition("：")
    assert shown == f"{head} {path}：{rest}", shown
