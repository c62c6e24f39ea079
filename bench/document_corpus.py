"""Real documents nobody here wrote, for the document-search benchmark: Debian -doc packages.

Two documents per language, each a file a user could hand the agent:

- English: the gnuplot 5.4 manual (PDF, 311 pages) and the Git User Manual (AsciiDoc,
  read as Markdown: its `==` headings become `#` headings, nothing else changes);
- Chinese: 《TeX 急就帖》, the Chinese translation of *TeX for the Impatient* (PDF, 429
  pages), and 《一份（不太）简短的 LaTeX2ε 介绍》 (lshort-zh-cn, PDF, 139 pages).

The Debian Reference manual 2.100 in English and in Chinese (`BILINGUAL`, the same
book in both languages) makes the bilingual set of bench/data/bilingual_questions.jsonl,
built after the set above and before the fusion with plain BM25 was written. Each document is pinned by package, version and the SHA-256 of both
the .deb and the file inside it, so the set is the same wherever it is rebuilt. The first
run downloads the packages with `apt-get download` (no root needed), unpacks them with
`dpkg-deb -x` and keeps the files under bench/.cache/documents/ (git-ignored); later runs,
and nothing at test time, download anything.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".cache" / "documents"


@dataclass(frozen=True)
class SourceDocument:
    key: str  # the name questions use for the document
    lang: str
    package: str
    version: str
    deb_sha256: str
    member: str  # path inside the package
    sha256: str  # of the member as shipped
    file_name: str  # the name the document has in the cache (and so in the index)
    labels: str  # "page" (PDF pages) or "section" (Markdown headings)


DOCUMENTS = (
    SourceDocument(
        key="gnuplot",
        lang="en",
        package="gnuplot-doc",
        version="5.4.4+dfsg1-2",
        deb_sha256="73fe1816a296594cf6a1d38528f8d740fd650f57a2cb62e029f7920fcd5b31f0",
        member="usr/share/doc/gnuplot/gnuplot.pdf",
        sha256="df68dd0613f043141512fc4436d17aaf96727d5a758d85233915ac5056a97206",
        file_name="gnuplot.pdf",
        labels="page",
    ),
    SourceDocument(
        key="git-user-manual",
        lang="en",
        package="git-doc",
        version="1:2.39.5-0+deb12u3",
        deb_sha256="3c89668a11053a6bafade3de1f611f4613db31e082af63f43d8c5b69ad8795ec",
        member="usr/share/doc/git-doc/user-manual.txt",
        sha256="27e2dee864870cddd8e00b08bc0eb8af5c222db30d7b830bdbc0ca4c98c5840b",
        file_name="git-user-manual.md",
        labels="section",
    ),
    SourceDocument(
        key="tex-impatient",
        lang="zh",
        package="texlive-lang-chinese",
        version="2022.20230122-1",
        deb_sha256="9cfa07bd44e7b9098e26f0ecac1b5ad210d2249d474c8074d53de92d650b0ec0",
        member="usr/share/doc/texlive-doc/plain/impatient-cn/cnbook.pdf",
        sha256="5877680a44330d3c7b820247a4e48732d0d5612a1422034bf6174f461743b833",
        file_name="tex-impatient-zh.pdf",
        labels="page",
    ),
    SourceDocument(
        key="lshort-zh",
        lang="zh",
        package="texlive-lang-chinese",
        version="2022.20230122-1",
        deb_sha256="9cfa07bd44e7b9098e26f0ecac1b5ad210d2249d474c8074d53de92d650b0ec0",
        member="usr/share/doc/texlive-doc/latex/lshort-chinese/lshort-zh-cn.pdf",
        sha256="4f6b11c04054fcdbb23d6d3c8527b145d27c21abb9efa7e57f96be2b7def484c",
        file_name="lshort-zh-cn.pdf",
        labels="page",
    ),
)
# The same manual in two languages: English, Chinese and Chinese-about-English questions.
BILINGUAL = (
    SourceDocument(
        key="debian-reference-en",
        lang="en",
        package="debian-reference-en",
        version="2.100",
        deb_sha256="9f31d3a17df505de09689ca255512ea58c1fc47c59bb1b0c7bf1c23362e9743f",
        member="usr/share/debian-reference/debian-reference.en.pdf",
        sha256="32775deeca0770ac25282b0c894cbaae83f4dd4ab00e891b94e8f009c0366728",
        file_name="debian-reference.en.pdf",
        labels="page",
    ),
    SourceDocument(
        key="debian-reference-zh",
        lang="zh",
        package="debian-reference-zh-cn",
        version="2.100",
        deb_sha256="6d2d8d9a646397e28b04cdff23d2e4374101ebf9be348e35961af62c8a2d0977",
        member="usr/share/debian-reference/debian-reference.zh-cn.pdf",
        sha256="93697b9d4a024eaf5adb2def25a646740fad405cb245032a6414222ae0e71bb1",
        file_name="debian-reference.zh-cn.pdf",
        labels="page",
    ),
)
# Two folders of PDFs different in kind from the manuals above, for the held-out `unseen` set
# (bench/data/unseen_questions.jsonl, written before any ranking change of issue 39):
# English specifications (Debian Policy 4.6.2.0, GPL-2+; the Filesystem Hierarchy Standard
# 3.0, verbatim copies permitted), and Chinese FAQs, a proposal, an installation guide and a
# package reference from texlive-lang-chinese (LPPL, CC BY 4.0 and others; the package's
# copyright file names each). Each folder is searched as a folder, every file at once.
# A member ending in .gz is shipped compressed and cached uncompressed.
_TEXLIVE_ZH = (
    "texlive-lang-chinese",
    "2022.20230122-1",
    "9cfa07bd44e7b9098e26f0ecac1b5ad210d2249d474c8074d53de92d650b0ec0",
)
_POLICY = ("debian-policy", "4.6.2.0", "ef9d01b625c3b87c3a845c2cd1b66f1a16e9240b2b9e5bee53472a00e8457a39")
UNSEEN = (
    SourceDocument(
        "policy",
        "en",
        *_POLICY,
        "usr/share/doc/debian-policy/policy.pdf.gz",
        "76783b857b80438a64102c6615c9913e2620bc6a7b72d24aa1f53726e0a3bea7",
        "unseen-en/debian-policy.pdf",
        "page",
    ),
    SourceDocument(
        "fhs",
        "en",
        *_POLICY,
        "usr/share/doc/debian-policy/fhs/fhs-3.0.pdf.gz",
        "56cbbc215bb65c5a14fc8398ad701cf4e0ac48ee135cadf590405262c8fb809b",
        "unseen-en/fhs-3.0.pdf",
        "page",
    ),
    SourceDocument(
        "ctexfaq",
        "zh",
        *_TEXLIVE_ZH,
        "usr/share/doc/texlive-doc/latex/ctex-faq/ctex-faq.pdf",
        "99a72a3158ced551d516d926fa27c69606a1b02366aeaa79d376a8d60fae3fb2",
        "unseen-zh/ctex-faq.pdf",
        "page",
    ),
    SourceDocument(
        "install",
        "zh",
        *_TEXLIVE_ZH,
        "usr/share/doc/texlive-doc/latex/install-latex-guide-zh-cn/install-latex-guide-zh-cn.pdf",
        "a841ed237fb074f65b1eb3c1e71dc6243deb133931f997ea8bf2c21e97b506a3",
        "unseen-zh/install-latex-guide-zh-cn.pdf",
        "page",
    ),
    SourceDocument(
        "asy",
        "zh",
        *_TEXLIVE_ZH,
        "usr/share/doc/texlive-doc/support/asymptote-faq-zh-cn/asymptote-faq-zh-cn.pdf",
        "4e73c77b7d298930de121ce9e7dabcc2fc07d7140fac7d4d98e620f1d80920e2",
        "unseen-zh/asymptote-faq-zh-cn.pdf",
        "page",
    ),
    SourceDocument(
        "proposal",
        "zh",
        *_TEXLIVE_ZH,
        "usr/share/doc/texlive-doc/latex/texproposal/texproposal.pdf",
        "62c7104ce68de476b5db1b511aeaff46190495509acc1b73d00ffac1de0189a3",
        "unseen-zh/texproposal.pdf",
        "page",
    ),
    SourceDocument(
        "zhnumber",
        "zh",
        *_TEXLIVE_ZH,
        "usr/share/doc/texlive-doc/latex/zhnumber/zhnumber.pdf",
        "fbe0c7dbc7c6a1e6e58b8de1fdf68b1a0c2327d9470654ee670aef5771280809",
        "unseen-zh/zhnumber.pdf",
        "page",
    ),
)
BY_KEY = {document.key: document for document in (*DOCUMENTS, *BILINGUAL, *UNSEEN)}

# An AsciiDoc section title ("== Title" .. "====== Title"); "= Title" is the document title.
_ASCIIDOC_TITLE = re.compile(r"^(={1,6})[ \t]+(\S.*?)[ \t]*$")
# The delimiter lines of AsciiDoc listing ("----") and literal ("....") blocks.
_ASCIIDOC_DELIMITER = re.compile(r"^(-{4,}|\.{4,})[ \t]*$")


def asciidoc_as_markdown(text: str) -> str:
    """The AsciiDoc source with section titles as Markdown headings and listing blocks fenced
    with ``` (so a shell comment inside one is not taken for a heading); nothing else changes."""
    lines = []
    inside = ""
    for line in text.splitlines():
        delimiter = _ASCIIDOC_DELIMITER.match(line)
        if delimiter and (not inside or delimiter.group(1) == inside):
            inside = "" if inside else delimiter.group(1)
            lines.append("```")
            continue
        title = None if inside else _ASCIIDOC_TITLE.match(line)
        lines.append("#" * len(title.group(1)) + " " + title.group(2) if title else line)
    return "\n".join(lines) + "\n"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _download(package: str, version: str, deb_sha256: str, into: Path) -> Path:
    """The package's .deb, downloaded with apt-get once and checked against its checksum."""
    into.mkdir(parents=True, exist_ok=True)
    for existing in into.glob(f"{package}_*.deb"):
        if sha256_of(existing) == deb_sha256:
            return existing
    if shutil.which("apt-get") is None:
        sys.exit(f"{package} is not cached and apt-get is missing: run on Debian or copy bench/.cache.")
    done = subprocess.run(
        ["apt-get", "download", "-q", f"{package}={version}"],
        cwd=into,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(
            f"apt-get download {package}={version} failed ({done.stderr.strip()[-300:]}); "
            "run `apt-get update`, or fetch that version from snapshot.debian.org into bench/.cache/debian/."
        )
    for candidate in into.glob(f"{package}_*.deb"):
        if sha256_of(candidate) == deb_sha256:
            return candidate
    sys.exit(f"{package} {version} was downloaded but its checksum differs from the recorded one.")


def document_path(document: SourceDocument) -> Path:
    """The cached file of `document`, fetched and unpacked on first use."""
    target = CACHE / document.file_name
    if target.exists():
        return target
    deb = _download(document.package, document.version, document.deb_sha256, ROOT / ".cache" / "debian")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True)
        member = Path(tmp) / document.member
        if sha256_of(member) != document.sha256:
            sys.exit(f"{document.member} in {deb.name} differs from the recorded checksum.")
        CACHE.mkdir(parents=True, exist_ok=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        if document.member.endswith(".gz"):
            with gzip.open(member) as packed, target.open("wb") as unpacked:
                shutil.copyfileobj(packed, unpacked)
        elif document.file_name.endswith(".md"):
            text = member.read_text(encoding="utf-8")
            target.write_text(asciidoc_as_markdown(text), encoding="utf-8")
        else:
            shutil.copyfile(member, target)
    return target


def documents(lang: str | None = None) -> dict[str, Path]:
    """key -> cached file of every document (of `lang` when given)."""
    return {d.key: document_path(d) for d in DOCUMENTS if lang is None or d.lang == lang}


if __name__ == "__main__":
    for key, path in documents().items():
        print(f"{key}\t{path}")
