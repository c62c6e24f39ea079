"""Real text in two languages for the search benchmarks: the machine's man pages.

English pages come from /usr/share/man (package `manpages` and every installed program);
Chinese ones from Debian's `manpages-zh` (/usr/share/man/zh_CN), installed on first use
when we are root. Nobody on the team wrote either. Pages are converted from roff to plain
Markdown-ish text (section names become headings) by a small converter here rather than by
`man`, which is ~100x slower per page and formats for a terminal; results are cached
under bench/.cache/ (git-ignored) so a second run starts at once.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / ".cache" / "manpages"
MAN_DIRS = {"en": Path("/usr/share/man"), "zh": Path("/usr/share/man/zh_CN")}

_ESCAPES = [
    (re.compile(r"\\f(\[[^\]]*\]|\(..|.)"), ""),  # font changes
    (re.compile(r"\\s[+-]?\d"), ""),  # size changes
    (re.compile(r"\\\((em|en)"), "—"),
    (re.compile(r"\\\((lq|rq|dq)"), '"'),
    (re.compile(r"\\\((oq|cq)"), "'"),
    (re.compile(r"\\\(bu"), "•"),
    (re.compile(r"\\\*\((lq|rq)"), '"'),
    (re.compile(r"\\\*\[[^\]]*\]|\\\*\(..|\\\*."), ""),  # strings
    (re.compile(r"\\\(..|\\\[[^\]]*\]"), ""),  # other named characters
    (re.compile(r"\\[-]"), "-"),
    (re.compile(r"\\e"), "\\\\"),
    (re.compile(r"\\[&|,/^c:%!]"), ""),
    (re.compile(r"\\ "), " "),
    (re.compile(r"\\n\[[^\]]*\]|\\n\(..|\\n."), ""),
]
_CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef]")
_FONT_MACROS = {"B", "I", "SM", "SB", "UR", "MT"}
_ALTERNATING_MACROS = {"BR", "IR", "RB", "RI", "BI", "IB"}
_BREAK_MACROS = {
    "PP",
    "LP",
    "P",
    "TP",
    "IP",
    "HP",
    "sp",
    "br",
    "TQ",
    "RS",
    "RE",
    "EX",
    "EE",
    "nf",
    "fi",
    "UE",
    "ME",
    "in",
    "Pp",
    "Lp",
    "Bl",
    "El",
    "Bd",
    "Ed",
    "It",
    "Dl",
}
# mdoc macros: removed from the text they decorate (Fl is handled: it makes an option).
_MDOC_MACROS = {
    "Ar",
    "Ic",
    "Cm",
    "Nm",
    "Pa",
    "Op",
    "Oo",
    "Oc",
    "Ns",
    "Xo",
    "Xc",
    "Li",
    "Ev",
    "Em",
    "Sy",
    "Dq",
    "Sq",
    "Ql",
    "Va",
    "Dv",
    "Er",
    "Xr",
    "Tn",
    "Ux",
    "At",
    "Bx",
    "Pf",
    "Ta",
    "Lk",
    "Mt",
    "Aq",
    "Pq",
    "Brq",
    "Bq",
    "Qq",
    "Po",
    "Pc",
    "Ao",
    "Ac",
    "Do",
    "Dc",
    "So",
    "Sc",
    "Qo",
    "Qc",
    "Bo",
    "Bc",
    "Ft",
    "Fn",
    "Fa",
    "Fd",
    "Fo",
    "Fc",
    "In",
    "Vt",
    "Ad",
    "An",
    "Lb",
    "Rs",
    "Re",
    "Ox",
    "Nx",
    "Fx",
    "Bsx",
    "Dx",
    "St",
    "Mx",
    "Ms",
    "No",
    "Cd",
    "Ot",
    "Sm",
    "Bk",
    "Ek",
    "Ud",
}


def ensure_manpages_zh() -> None:
    """Install Debian's manpages-zh when the Chinese pages are missing and we may."""
    # Other packages (passwd, man-db) put a few pages in zh_CN too: look for one of its own.
    if (MAN_DIRS["zh"] / "man1" / "ls.1.gz").exists():
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        sys.exit("Chinese man pages missing: run `apt-get install manpages-zh` as root.")
    subprocess.run(["apt-get", "install", "-y", "-q", "manpages-zh"], check=True, stdout=subprocess.DEVNULL)


def _clean(text: str) -> str:
    for pattern, replacement in _ESCAPES:
        text = pattern.sub(replacement, text)
    return text.replace("\\", "")


def _args(rest: str) -> str:
    parts = re.findall(r'"([^"]*)"|(\S+)', rest)
    return " ".join(a or b for a, b in parts)


def _mdoc(rest: str) -> str:
    """Text of an mdoc (BSD man page) line: `Fl x` is the option -x, other macros vanish."""
    words = _args(rest).split(" ")
    out: list[str] = []
    flag = False
    for word in words:
        if word == "Fl":
            flag = True
            continue
        if word in _MDOC_MACROS:
            continue
        out.append(("-" + word) if flag else word)
        flag = False
    return _clean(" ".join(out))


def roff_to_text(source: str) -> str:
    """Plain text of a man page: headings for sections, paragraphs separated by blank lines."""
    lines: list[str] = []
    for raw in source.splitlines():
        if raw.startswith(('.\\"', "'\\\"")) or raw.strip() in {".", "'"}:
            continue
        if not raw.startswith((".", "'")):
            lines.append(_clean(raw))
            continue
        macro, _, rest = raw[1:].strip().partition(" ")
        if macro in {"SH", "SS", "Sh", "Ss"}:
            level = "#" if macro in {"SH", "Sh"} else "##"
            lines += ["", f"{level} {_clean(_args(rest))}", ""]
        elif macro in _ALTERNATING_MACROS:  # fonts alternate between words with no space
            lines.append(_clean(_args(rest).replace(" ", "")))
        elif macro in _FONT_MACROS:
            lines.append(_clean(_args(rest)))
        elif macro in _BREAK_MACROS:
            lines.append("")
            if macro in {"IP", "It"} and rest.strip():
                lines.append(_mdoc(rest) if macro == "It" else _clean(_args(rest).split(" ")[0]))
        elif macro == "Nd":
            lines.append("- " + _clean(_args(rest)))
        elif macro in _MDOC_MACROS:
            lines.append(_mdoc(raw[1:]))
    paragraphs, current = [], ""
    for line in lines:
        line = line.strip()
        if not line:
            if current:
                paragraphs.append(current)
            current = ""
            continue
        if line.startswith("#"):
            if current:
                paragraphs.append(current)
            paragraphs.append(line)
            current = ""
            continue
        if current and _CJK.match(current[-1]) and _CJK.match(line[0]):
            current += line
        else:
            current = f"{current} {line}" if current else line
    if current:
        paragraphs.append(current)
    return "\n\n".join(paragraphs) + "\n"


def page_sources(lang: str) -> list[Path]:
    """Every man page source of `lang`, sections 1-8, sorted by name."""
    base = MAN_DIRS[lang]
    found = []
    for section in range(1, 9):
        folder = base / f"man{section}"
        if folder.is_dir():
            found += [p for p in folder.iterdir() if p.is_file() and not p.is_symlink()]
    return sorted(found, key=lambda p: p.name)


def page_name(source: Path) -> str:
    return source.name.removesuffix(".gz")


def converted(lang: str, source: Path) -> Path | None:
    """The cached plain-text file of one man page (None if it is only a `.so` link)."""
    target = CACHE / lang / f"{page_name(source)}.md"
    if target.exists():
        return target if target.stat().st_size > 0 else None
    if source.suffix == ".gz":
        with gzip.open(source) as handle:
            raw = handle.read()
    else:
        raw = source.read_bytes()
    text = raw.decode("utf-8", "replace")
    target.parent.mkdir(parents=True, exist_ok=True)
    body = "" if text.lstrip().startswith(".so ") else roff_to_text(text)
    target.write_text(body if len(body.strip()) > 200 else "", encoding="utf-8")
    return target if target.stat().st_size > 0 else None


def corpus(lang: str, limit: int | None = None, names: set[str] | None = None) -> list[Path]:
    """Converted pages of `lang`: the named ones, or the first `limit` by name."""
    if lang == "zh":
        ensure_manpages_zh()
    paths = []
    for source in page_sources(lang):
        if names is not None and page_name(source) not in names:
            continue
        path = converted(lang, source)
        if path is not None:
            paths.append(path)
            if limit is not None and len(paths) >= limit:
                break
    return paths
