"""Write a formatted Word report (.docx) under outputs/ from Markdown or JSON (Chinese-ready)."""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

try:
    import docx  # noqa: F401  (checked here so a missing install is one clear line)
except ImportError:
    sys.exit(
        f"error: python-docx is not installed for {sys.executable}; "
        "run the script with the Python that runs generalAgent."
    )

from _docx_writer import Fonts, write_docx
from _report_model import Heading, Report, ReportInputError, parse_json, parse_markdown, plain_text

EXIT_FAILED = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """The command line asks for something the script will not do."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Write a formatted .docx report under outputs/ from Markdown or JSON.",
        epilog="Example: make_report.py temp/report.md --output outputs/report.docx "
        '--title "季度报告" --author "Finance" --date today --title-page --toc',
    )
    parser.add_argument("input", help="a .md or .json file (e.g. temp/report.md), or - for stdin")
    parser.add_argument("--output", "-o", required=True, help="the .docx to write, under outputs/")
    parser.add_argument(
        "--format",
        choices=("auto", "markdown", "json"),
        default="auto",
        help="input format; auto: by file extension, else JSON if it starts with {",
    )
    parser.add_argument("--title", help="report title (default: front matter title)")
    parser.add_argument("--subtitle", help="subtitle under the title")
    parser.add_argument("--author", help="author shown under the title")
    parser.add_argument("--date", help='date shown under the title; "today" for today')
    parser.add_argument(
        "--title-page",
        action="store_true",
        default=None,
        help="put the title on its own page (uses the first # heading if no title is given)",
    )
    parser.add_argument(
        "--toc", action="store_true", default=None, help="add a table of contents (headings 1-3)"
    )
    parser.add_argument("--font", default="Calibri", help="font for Latin text (default Calibri)")
    parser.add_argument(
        "--cjk-font",
        default="Microsoft YaHei",
        help="font for Chinese/Japanese/Korean text (default Microsoft YaHei; e.g. SimSun, 宋体)",
    )
    parser.add_argument("--paper", choices=("a4", "letter"), default="a4", help="page size")
    return parser


def read_input(argument: str) -> tuple[str, Path | None]:
    if argument == "-":
        return sys.stdin.read(), None
    path = Path(argument)
    if not path.is_file():
        raise ReportInputError(f"{argument}: no such file.")
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig"), path
    except UnicodeDecodeError:
        pass
    try:
        # Files saved by Chinese Windows tools are often GB18030/GBK rather than UTF-8.
        return raw.decode("gb18030"), path
    except UnicodeDecodeError as error:
        raise ReportInputError(f"{argument}: not UTF-8 text (nor GB18030).") from error


def parse(source: str, path: Path | None, form: str) -> Report:
    if form == "auto":
        suffix = path.suffix.lower() if path else ""
        if suffix == ".json" or (not suffix and source.lstrip().startswith("{")):
            form = "json"
        else:
            form = "markdown"
    return parse_json(source) if form == "json" else parse_markdown(source)


def report_path(argument: str) -> Path:
    """The output file, refused unless it lies under outputs/ of the current directory."""
    cwd = Path.cwd().resolve()
    outputs = cwd / "outputs"
    target = (cwd / argument).resolve()
    if outputs not in target.parents:
        name = Path(argument).name or "report.docx"
        raise UsageError(
            f"{argument}: reports are written only under outputs/ (e.g. outputs/{name})."
        )
    if target.suffix.lower() != ".docx":
        raise UsageError(f"{argument}: the file name must end in .docx.")
    if target.is_dir():
        raise UsageError(f"{argument}: is a folder; give a file name ending in .docx.")
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def apply_options(report: Report, args: argparse.Namespace) -> None:
    for name in ("title", "subtitle", "author", "date"):
        value = getattr(args, name)
        if value is not None:
            setattr(report, name, value)
    if args.title_page is not None:
        report.title_page = args.title_page
    if args.toc is not None:
        report.toc = args.toc
    if report.date and report.date.strip().lower() == "today":
        report.date = date.today().isoformat()
    first = report.blocks[0] if report.blocks else None
    if report.title_page and not report.title:
        if not (isinstance(first, Heading) and first.level == 1):
            raise UsageError(
                "a title page needs a title: pass --title or start the Markdown with '# Title'."
            )
        report.title = first.text
        report.blocks.pop(0)


def main() -> int:
    args = build_parser().parse_args()
    target = report_path(args.output)
    source, path = read_input(args.input)
    report = parse(source, path, args.format)
    apply_options(report, args)
    if not report.blocks and not report.title:
        raise ReportInputError(f"{args.input}: nothing to write (no headings, text or tables).")
    workspace = Path.cwd().resolve()
    roots = [workspace] + ([path.resolve().parent] if path else [])
    summary = write_docx(
        report,
        target,
        fonts=Fonts(latin=args.font, cjk=args.cjk_font),
        paper=args.paper,
        image_roots=roots,
        workspace=workspace,
    )
    counts = (
        (summary.headings, "heading"),
        (summary.paragraphs, "paragraph"),
        (summary.lists, "list"),
        (summary.tables, "table"),
        (summary.images, "image"),
    )
    parts = [f"{count} {noun}{'' if count == 1 else 's'}" for count, noun in counts if count]
    if report.title:
        parts.insert(
            0,
            f"title {plain_text(report.title)!r}"
            + (" on its own page" if report.title_page else ""),
        )
    if report.toc:
        parts.append("table of contents")
    shown = target.relative_to(workspace).as_posix()
    print(f"Wrote {shown}: " + ", ".join(parts) + ".")
    for note in summary.notes:
        print(f"note: {note}.")
    return 0


def run() -> None:
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding="utf-8")
    try:
        code = main()
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        code = EXIT_USAGE
    except (ReportInputError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        code = EXIT_FAILED
    except Exception as error:  # a library failure must still reach the model as one line
        print(f"error: {type(error).__name__}: {error}", file=sys.stderr)
        code = EXIT_FAILED
    sys.exit(code)


if __name__ == "__main__":
    run()
