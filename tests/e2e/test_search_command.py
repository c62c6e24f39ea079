"""`generalagent search` as a person runs it: the real CLI in a subprocess, real files, the real
index. Targets (a file, a folder, a glob, everything indexed), `-n` within the content
budgets, hits grouped per document with their place, spreadsheet rows one per line, help."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.support.documents import make_pdf, make_xlsx

SECTIONS = 25


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "COLUMNS": "200"}  # no wrapping: lines are checked whole


@pytest.fixture
def library(workdir: Path) -> Path:
    """A folder of four documents: a PDF, a spreadsheet, a text log, a long Markdown book."""
    folder = workdir / "library"
    folder.mkdir()
    make_pdf(folder / "report.pdf", [["Intro page."], ["The walrus count doubled this year."]])
    rows: list[list[object]] = [["Region", "Animal", "Count"]]
    rows += [[f"region{n}", "walrus" if n in (4, 9) else "seal", n * 10] for n in range(12)]
    make_xlsx(folder / "counts.xlsx", {"Survey": rows})
    log = [f"{n:03} routine entry, nothing to report" for n in range(1, 301)]
    log[206] = "207 a walrus was seen on the ice"
    (folder / "watch.log.txt").write_text("\n".join(log) + "\n", encoding="utf-8")
    book = "\n\n".join(
        f"# Chapter {n}\n\n"
        + f"Chapter {n} tells of the walrus and the tides. "
        + "Filler words go on. " * 80
        for n in range(1, SECTIONS + 1)
    )
    (workdir / "book.md").write_text(book, encoding="utf-8")
    return folder


def test_n_is_honoured_beyond_five_and_the_budget_cut_is_said(
    library: Path, workdir: Path, env: dict[str, str]
) -> None:
    many = run_cli(["search", "book.md", "walrus tides", "-n", "12", "--json"], env, workdir)
    assert many.returncode == 0, many.stderr
    data = json.loads(many.stdout)
    assert (data["max_results"], data["capped"]) == (12, False)
    assert len(data["results"]) == 12 and all(r["matched"] for r in data["results"])
    shown = run_cli(["search", "book.md", "walrus tides", "-n", "12"], env, workdir)
    assert shown.stdout.startswith('12 passages in book.md for "walrus tides":')
    assert "left out" not in shown.stdout

    tight = {**env, "MAX_TOTAL_CONTENT_SIZE": "1000"}
    cut = run_cli(["search", "book.md", "walrus tides", "-n", "12"], tight, workdir)
    assert cut.returncode == 0, cut.stderr
    head = cut.stdout.splitlines()[0]
    kept = int(head.split()[0])
    assert 1 <= kept < 12
    said = "was found" if kept == 11 else "were found"
    assert (
        f"{12 - kept} more passage{'' if kept == 11 else 's'} {said} but left out by the content budget"
        in cut.stdout
    )
    assert "MAX_TOTAL_CONTENT_SIZE" in cut.stdout and "-n" in cut.stdout

    most = run_cli(["search", "book.md", "walrus", "-n", "50"], env, workdir)
    assert "At most 20 passages per search." in most.stdout


def test_a_folder_a_glob_and_everything_indexed_are_targets_grouped_per_document_with_places(
    library: Path, workdir: Path, env: dict[str, str]
) -> None:
    folder = run_cli(["search", "library", "walrus"], env, workdir)
    assert folder.returncode == 0, folder.stderr
    lines = folder.stdout.splitlines()
    assert lines[0] == '3 passages in 3 of 3 documents under library for "walrus":'
    for document, place in (
        ("library/report.pdf", "page 2"),
        ("library/counts.xlsx", "sheet Survey, rows 2–13"),
        ("library/watch.log.txt", "line 207"),
    ):
        at = lines.index(document)  # the document's name on a line of its own, its places below
        assert lines[at + 1].split(maxsplit=1)[1] == place

    glob = run_cli(["search", "library/*.pdf", "walrus"], env, workdir)
    assert glob.returncode == 0, glob.stderr
    assert glob.stdout.splitlines()[:3] == [
        '1 passage in 1 of 1 documents under library/*.pdf for "walrus":',
        "library/report.pdf",
        " 1 page 2",
    ]
    assert run_cli(["search", "library/*.docx", "walrus"], env, workdir).returncode == 1

    run_cli(["index", "book.md"], env, workdir)
    everything = run_cli(["search", "--all", "walrus", "-n", "20", "--json"], env, workdir)
    assert everything.returncode == 0, everything.stderr
    data = json.loads(everything.stdout)
    files = {Path(d["file"]).name for d in data["documents"]}
    assert files == {"report.pdf", "counts.xlsx", "watch.log.txt", "book.md"}
    assert data["indexed"] == 0  # nothing read: only what the index holds
    assert run_cli(["search", "--all", "book.md", "walrus"], env, workdir).returncode == 2


def test_spreadsheet_rows_come_one_per_line(library: Path, workdir: Path, env: dict[str, str]) -> None:
    found = run_cli(["search", "library/counts.xlsx", "walrus"], env, workdir)
    assert found.returncode == 0, found.stderr
    lines = found.stdout.splitlines()
    assert lines[1] == " 1 sheet Survey, rows 2–13"
    assert [line.strip() for line in lines[2:4]] == ["region4 | walrus | 40", "region9 | walrus | 90"]


def test_the_help_names_the_defaults_and_every_target(workdir: Path, env: dict[str, str]) -> None:
    shown = run_cli(["search", "--help"], env, workdir)
    assert shown.returncode == 0
    flat = " ".join(shown.stdout.split())
    assert "SEARCH_MAX_RESULTS_DEFAULT" not in flat
    assert "default 5 in a file, 10 across files; at most 20" in flat
    assert "--all" in flat and "a glob" in flat


def test_a_file_name_with_a_line_break_stays_on_its_line(workdir: Path, env: dict[str, str]) -> None:
    # A folder's file named "notes\n✓ …" printed a line of its author's choosing in the
    # index and search output; and one passage was "1 passages".
    (workdir / "notes\n✓ fake line.md").write_text("# notes\nheron sighting\n", encoding="utf-8")
    (workdir / "other.md").write_text("# other\nnothing here\n", encoding="utf-8")
    indexed = run_cli(["index", "."], env, workdir)
    assert indexed.returncode == 0, indexed.stderr
    assert not any(line.startswith("✓ fake line") for line in indexed.stderr.splitlines()), indexed.stderr
    assert "notes␤✓ fake line.md: 1 chunk" in indexed.stderr, indexed.stderr
    found = run_cli(["search", ".", "heron"], env, workdir)
    assert found.returncode == 0, found.stderr
    lines = found.stdout.splitlines()
    assert '1 passage in 1 of 2 documents under . for "heron":' in lines, found.stdout
    assert "notes␤✓ fake line.md" in lines and "✓ fake line.md" not in lines, found.stdout


def test_the_words_before_the_folder_are_told_the_order(workdir: Path, env: dict[str, str]) -> None:
    # `search 营收 .` said "Cannot search 营收: 营收 does not exist; check the path." (in
    # English, in a Chinese UI too), not that the target comes first.
    (workdir / "notes.md").write_text("# 营收\n本季度营收增长。\n", encoding="utf-8")
    zh = run_cli(["search", "营收", "."], {**env, "UI_LANGUAGE": "zh"}, workdir)
    assert zh.returncode == 2, zh.stderr
    assert "营收 不是文件或文件夹：要搜索的位置放在前面：" in zh.stderr and "search . 营收" in zh.stderr, (
        zh.stderr
    )
    en = run_cli(["search", "营收", "notes.md"], env, workdir)
    assert (
        en.returncode == 2 and "the target comes first" in en.stderr and "search notes.md 营收" in en.stderr
    )
    right = run_cli(["search", ".", "营收"], env, workdir)
    assert right.returncode == 0 and "notes.md" in right.stdout, right.stderr


def test_a_data_dir_inside_the_folder_is_neither_indexed_nor_searched(
    workdir: Path, env: dict[str, str]
) -> None:
    """DATA_DIR=./data (a folder's .env, say): the session copies of attached files and the log
    under it would be indexed and found a second time."""
    env = {**env, "DATA_DIR": str(workdir / "data")}
    (workdir / "report.md").write_text("The walrus count doubled.\n", encoding="utf-8")
    first = run_cli(["index", "report.md"], env, workdir)  # the data folder now exists
    assert first.returncode == 0, first.stderr
    copy = workdir / "data" / "workspaces" / "20261126-0900-ab12" / "uploads" / "report.md"
    copy.parent.mkdir(parents=True)
    copy.write_text("The walrus count doubled.\n", encoding="utf-8")

    indexed = run_cli(["index", "."], env, workdir)
    assert indexed.returncode == 0, indexed.stderr
    said = indexed.stdout + indexed.stderr
    assert "data was not indexed: it holds generalAgent's own data (DATA_DIR)" in " ".join(said.split())
    found = run_cli(["search", ".", "walrus", "--json"], env, workdir)
    assert found.returncode == 0, found.stderr
    data = json.loads(found.stdout)
    assert data["files"] == 1 and [d["file"] for d in data["documents"]] == ["report.md"]


def test_the_words_need_no_quotes_and_the_target_is_what_exists(workdir: Path, env: dict[str, str]) -> None:
    # `search manual.md named pipe` said "Give the words to look for", `search named pipe`
    # "Cannot search named", and `kb search 报销 审批` "extra argument".
    (workdir / "manual.md").write_text(
        "# IPC\n\nA named pipe connects two processes.\n\n# Other\n\nNothing else here.\n", encoding="utf-8"
    )
    (workdir / "expenses.md").write_text("# 报销\n\n报销需要经理审批。\n", encoding="utf-8")
    in_file = run_cli(["search", "manual.md", "named", "pipe", "--json"], env, workdir)
    assert in_file.returncode == 0, in_file.stderr
    found = json.loads(in_file.stdout)
    assert (
        found["query"] == "named pipe" and "named pipe connects" in found["results"][0]["matched"][0]["text"]
    )
    in_folder = run_cli(["search", "named", "pipe"], env, workdir)  # "named" names nothing: all words
    assert in_folder.returncode == 0, in_folder.stderr
    assert 'under . for "named pipe"' in in_folder.stdout and "manual.md" in in_folder.stdout
    assert run_cli(["index", "expenses.md"], env, workdir).returncode == 0
    kb = run_cli(["kb", "search", "报销", "审批", "--json"], env, workdir)
    assert kb.returncode == 0, kb.stderr
    assert json.loads(kb.stdout)["query"] == "报销 审批"


def test_a_chinese_question_finds_an_english_file_and_folder_through_the_dictionary(
    workdir: Path, env: dict[str, str]
) -> None:
    """The command sends its words as a list of one phrasing, as the search tools do: the
    CC-CEDICT gloss is searched for it too (it was only for a bare string, so no user path
    glossed), in one file and in a folder. No word of the question is in the files."""
    folder = workdir / "manuals"
    folder.mkdir()
    (folder / "modules.md").write_text(
        "# Kernel modules\n\nUse lsmod to list the kernel modules that are currently loaded.\n",
        encoding="utf-8",
    )
    (folder / "mail.md").write_text(
        "# Mail\n\nThe local spool directory keeps messages until they are delivered.\n", encoding="utf-8"
    )
    for target in ("manuals", "manuals/modules.md"):
        result = run_cli(["search", target, "怎么查看已加载的内核模块", "--json"], env, workdir)
        assert result.returncode == 0, result.stderr
        data = json.loads(result.stdout)
        results = data["documents"][0]["results"] if "documents" in data else data["results"]
        assert results, target
        assert "lsmod" in results[0]["matched"][0]["text"], target


def test_the_command_says_which_english_keywords_the_dictionary_searched(
    workdir: Path, env: dict[str, str]
) -> None:
    """A person sees why English passages answer a Chinese question: the English keywords
    the gloss searched, in a line of the UI's language, and `glossed` in --json ("" when
    the search added none)."""
    folder = workdir / "manuals"
    folder.mkdir()
    (folder / "modules.md").write_text(
        "# Kernel modules\n\nUse lsmod to list the kernel modules that are currently loaded.\n",
        encoding="utf-8",
    )
    question = "怎么查看已加载的内核模块"
    for target in ("manuals", "manuals/modules.md"):
        shown = run_cli(["search", target, question], env, workdir)
        assert shown.returncode == 0, shown.stderr
        said = shown.stdout.splitlines()[1]
        assert said.startswith('Also searched in English as "'), shown.stdout
        assert "kernel" in said and "module" in said and "(from a Chinese-English dictionary)." in said

        found = json.loads(run_cli(["search", target, question, "--json"], env, workdir).stdout)
        assert "kernel" in found["glossed"].split() and "module" in found["glossed"].split(), target

        chinese = run_cli(["search", target, question], {**env, "UI_LANGUAGE": "zh"}, workdir)
        assert chinese.returncode == 0, chinese.stderr
        line = chinese.stdout.splitlines()[1]
        assert line.startswith("另外按英文关键词“") and line.endswith("”搜索（取自汉英词典）。"), (
            chinese.stdout
        )
        assert "kernel" in line

    english = json.loads(run_cli(["search", "manuals", "kernel modules", "--json"], env, workdir).stdout)
    assert english["glossed"] == ""
    plain = run_cli(["search", "manuals", "kernel modules"], env, workdir)
    assert "Also searched" not in plain.stdout


def test_kb_search_says_which_english_keywords_the_dictionary_searched(
    workdir: Path, env: dict[str, str]
) -> None:
    """`kb search` names the gloss as `search` does: a Chinese question over English notes
    finds the passage through the dictionary's keywords, and a person is told which ones
    (in the UI's language), `glossed` in --json; an English question adds none."""
    page = workdir / "modules.md"
    page.write_text(
        "# Kernel modules\n\nUse lsmod to list the kernel modules that are currently loaded.\n",
        encoding="utf-8",
    )
    assert run_cli(["kb", "add", "modules.md", "--domain", "linux"], env, workdir).returncode == 0
    question = ["kb", "search", "怎么查看已加载的内核模块", "--domain", "linux"]

    shown = run_cli(question, env, workdir)
    assert shown.returncode == 0, shown.stderr
    said = shown.stdout.splitlines()[1]
    assert said.startswith('Also searched in English as "'), shown.stdout
    assert "kernel" in said and "(from a Chinese-English dictionary)." in said

    found = json.loads(run_cli([*question, "--json"], env, workdir).stdout)
    assert (
        "kernel" in found["glossed"].split() and "lsmod" in found["results"][0]["found"]["matched"][0]["text"]
    )

    chinese = run_cli(question, {**env, "UI_LANGUAGE": "zh"}, workdir)
    assert chinese.stdout.splitlines()[1].startswith("另外按英文关键词“"), chinese.stdout

    english = json.loads(run_cli(["kb", "search", "kernel modules", "--json"], env, workdir).stdout)
    assert english["glossed"] == "" and english["results"]


def test_a_file_or_folder_named_alone_is_not_searched_for_as_the_words(
    workdir: Path, env: dict[str, str]
) -> None:
    """`search n.md` searched the working folder for "n.md"; now it says what is missing and
    what to type, in the UI's language, and exits 2 as the command's other usage errors."""
    (workdir / "n.md").write_text("# Notes\n\nThe n.md file is named in n.md itself.\n", encoding="utf-8")
    (workdir / "docs").mkdir()
    alone = run_cli(["search", "n.md"], env, workdir)
    assert alone.returncode == 2 and alone.stdout == "", alone.stdout
    said = " ".join(alone.stderr.split())
    assert "n.md is a file: give the words to look for after it (" in said and "search n.md WORDS" in said
    assert "search . n.md" in said  # the way to look for the name itself
    folder = run_cli(["search", "docs"], {**env, "UI_LANGUAGE": "zh"}, workdir)
    assert folder.returncode == 2 and "docs 是文件夹" in folder.stderr, folder.stderr
    itself = run_cli(["search", ".", "n.md"], env, workdir)
    assert itself.returncode == 0 and "n.md" in itself.stdout, itself.stderr
    words = run_cli(["search", "notes"], env, workdir)  # names nothing: still the words
    assert words.returncode == 0 and 'for "notes"' in words.stdout, words.stderr


def test_more_phrasings_than_a_search_takes_are_refused_not_cut(workdir: Path, env: dict[str, str]) -> None:
    """Six phrasings were cut to five without a word; now the command says the limit and
    searches nothing (exit 2), in the UI's language; five still run."""
    (workdir / "notes.md").write_text("# Walrus\n\nThe walrus count doubled.\n", encoding="utf-8")
    more = [arg for word in ("seal", "otter", "orca", "whale", "puffin") for arg in ("--or", word)]
    six = run_cli(["search", "notes.md", "walrus", *more], env, workdir)
    assert six.returncode == 2 and six.stdout == ""
    assert "A search takes at most 5 phrasings (the words and 4 --or); 6 were given" in " ".join(
        six.stderr.split()
    )
    chinese = run_cli(["search", "notes.md", "walrus", *more], {**env, "UI_LANGUAGE": "zh"}, workdir)
    assert chinese.returncode == 2 and "最多" in chinese.stderr, chinese.stderr
    five = run_cli(["search", "notes.md", "walrus", *more[:8], "--json"], env, workdir)
    assert five.returncode == 0 and len(json.loads(five.stdout)["query"]) == 5, five.stderr


CHINESE_GUIDE = (
    "# 安装\n\n在 Windows 上运行 install-tl-windows.bat 安装 TeX Live，需要的时间比较长。\n\n"
    "# 卸载\n\n在 Windows 上卸载 TeX Live 的方法：运行安装目录中的卸载批处理文件，然后删除剩下的目录。\n\n"
    "# 镜像\n\n下载速度太慢的时候，可以把镜像换成国内的镜像站点。\n"
)


def test_an_english_question_finds_a_chinese_file_through_the_dictionary_and_says_so(
    workdir: Path, env: dict[str, str]
) -> None:
    """The other direction: an English question over a Chinese file is also searched in the
    Chinese words CC-CEDICT gives for its words ("uninstall": 卸载), which the file holds;
    the answer comes first, and the command names the Chinese keywords in the UI's language
    and in --json. Before, the question's own words ("TeX", "Live", "Windows") put the
    installation section first and nothing was said."""
    (workdir / "guide.md").write_text(CHINESE_GUIDE, encoding="utf-8")
    question = "how do I uninstall TeX Live on Windows"
    data = json.loads(run_cli(["search", "guide.md", question, "--json"], env, workdir).stdout)
    assert "卸载批处理文件" in data["results"][0]["matched"][0]["text"]
    assert "卸载" in data["glossed"].split()

    shown = run_cli(["search", "guide.md", question], env, workdir)
    assert shown.returncode == 0, shown.stderr
    said = shown.stdout.splitlines()[1]
    assert said.startswith('Also searched in Chinese as "') and "卸载" in said, shown.stdout
    assert said.endswith("(from an English-Chinese dictionary).")

    chinese = run_cli(["search", "guide.md", question], {**env, "UI_LANGUAGE": "zh"}, workdir)
    line = chinese.stdout.splitlines()[1]
    assert line.startswith("另外按中文关键词“") and line.endswith("”搜索（取自英汉词典）。"), chinese.stdout

    own = json.loads(run_cli(["search", "guide.md", "卸载 TeX Live", "--json"], env, workdir).stdout)
    assert own["glossed"] == ""
