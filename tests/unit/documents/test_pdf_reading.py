"""PDF pages read as a person reads them where the geometry misled the reader: quote marks
set high on a line (DocBook's and gnuplot's manuals), a code listing beside its typeset
output (lshort-zh-cn), columns typeset on their own baselines, a boxed note beside the
text. Each PDF is drawn here with reportlab's canvas, a piece at a time, as those
producers draw them."""

from __future__ import annotations

from pathlib import Path

from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas

from generalAgent.config.settings import Settings
from generalAgent.documents.extract import extract_document
from generalAgent.documents.pdf import read_pdf_tables

PAGE = (595.0, 842.0)


def _pieces(pdf: canvas.Canvas, x: float, y: float, pieces: list[tuple[str, str]]) -> float:
    """Draw `pieces` (kind, text) one after the other on the baseline `y`: words in Times,
    code in Courier, and `"` as a typewriter quote mark in a smaller size raised above
    the baseline, each drawn on its own as TeX writes them. Returns where the line ends."""
    for kind, text in pieces:
        if kind == "quote":
            pdf.setFont("Courier", 7)
            pdf.drawString(x, y + 2.0, text)
            x += stringWidth(text, "Courier", 7) - 1.0
        else:
            font = "Courier" if kind == "code" else "Times-Roman"
            pdf.setFont(font, 10)
            pdf.drawString(x, y, text)
            x += stringWidth(text, font, 10) + (0.5 if kind == "code" else 2.5)
    return x


def quoted(code: str) -> list[tuple[str, str]]:
    return [("quote", '"'), ("code", code), ("quote", '"')]


def test_quote_marks_set_high_in_a_paragraph_make_no_table(tmp_path: Path, settings: Settings):
    # gnuplot's page 151: a paragraph naming its modifiers in quotes, "-", "+", " ", "#".
    path = tmp_path / "modifiers.pdf"
    pdf = canvas.Canvas(str(path), pagesize=PAGE)
    lines = [
        [
            ("text", "Other acceptable modifiers (after the"),
            *quoted("="),
            ("text", "but before the letter) are"),
            *quoted("-"),
        ],
        [
            ("text", ", which left-justifies the number;"),
            *quoted("+"),
            ("text", ", which signs all;"),
            *quoted(" "),
        ],
        [
            ("text", "(a space), which pads positive numbers; and"),
            *quoted("-"),
            ("text", ", which places a"),
            *quoted("."),
        ],
        [
            ("text", "after floats that have only zeroes after the point;"),
            *quoted("~"),
            ("text", "pads with zeroes;"),
            *quoted(","),
        ],
        [("text", "groups thousands as the locale does; a positive integer, the field width."), *quoted("+")],
    ]
    for n, pieces in enumerate(lines):
        _pieces(pdf, 72, 700 - 13 * n, pieces)
    pdf.save()
    assert read_pdf_tables(path.open("rb"), path) == []
    blocks = extract_document(path, settings.documents).blocks
    assert [block.place for block in blocks] == ["page 1"]
    text = "".join(blocks[0].text.split())  # pdfium spaces the quote marks its own way
    assert 'beforetheletter)are"-",whichleft-justifiesthenumber;"+",whichsignsall;""(aspace)' in text
    assert 'whichplacesa"."afterfloats' in text


def test_a_closing_quote_stays_after_its_cell(tmp_path: Path):
    # The Debian Reference's systemctl table: each command between quote marks set high.
    rows = [
        ("Operation", "Command snippets"),
        ("List all target units", "systemctl list-units --type=target"),
        ("Start a unit", "systemctl start $unit"),
        ("Stop a unit", "systemctl stop $unit"),
        ("Enable a unit", "systemctl enable $unit"),
        ("Disable a unit", "systemctl disable $unit"),
    ]
    path = tmp_path / "systemctl.pdf"
    pdf = canvas.Canvas(str(path), pagesize=PAGE)
    pdf.setFont("Times-Bold", 10)
    pdf.drawString(72, 712, "Table 3.6: List of typical systemctl command snippets")
    for n, (operation, command) in enumerate(rows):
        y = 690 - 12 * n
        if n == 0:
            _pieces(pdf, 72, y, [("text", operation)])
            _pieces(pdf, 260, y, [("text", command)])
        else:
            _pieces(pdf, 72, y, [("text", operation)])
            _pieces(pdf, 260, y, quoted(command))
    pdf.save()
    tables = read_pdf_tables(path.open("rb"), path)
    assert len(tables) == 1
    assert tables[0].header == [["Operation", "Command snippets"]]
    assert [row[1] for row in tables[0].rows] == [f'" {command} "' for _, command in rows[1:]]


CODE = [
    r"\begin{tabular}{lcr}",
    r"  \hline",
    r"  left & center & right \\",
    r"  one & two & three \\",
    r"  four & five & six \\",
    r"  \hline",
    r"\end{tabular}",
]
OUTPUT = ["left center right", "one two three", "four five six"]


def _frame(pdf: canvas.Canvas, x0: float, y0: float, x1: float, y1: float, fill: bool) -> None:
    """A box as TeX's example environments draw it: a grey ground, then four rules."""
    if fill:
        pdf.setFillGray(0.92)
        pdf.rect(x0, y0, x1 - x0, y1 - y0, stroke=0, fill=1)
        pdf.setFillGray(0)
    pdf.setLineWidth(0.8)
    for a, b, c, d in ((x0, y1, x1, y1), (x0, y0, x1, y0), (x0, y0, x0, y1), (x1, y0, x1, y1)):
        pdf.line(a, b, c, d)


def draw_example(pdf: canvas.Canvas, top: float) -> float:
    """lshort-zh-cn's example: the code in a grey box on the left, what it typesets in a
    box on the right, centred against it, each with its own font and leading (so the two
    boxes' lines face each other on different baselines). Returns the bottom."""
    code_height = 11 * len(CODE) + 8
    _frame(pdf, 108, top - code_height, 308, top, fill=True)
    pdf.setFont("Courier", 8)
    for n, line in enumerate(CODE):
        pdf.drawString(115, top - 12 - 11 * n, line)
    output_height = 14 * len(OUTPUT) + 10
    output_top = top - (code_height - output_height) / 2
    _frame(pdf, 323, output_top - output_height, 523, output_top, fill=False)
    pdf.setFont("Times-Roman", 10)
    for n, line in enumerate(OUTPUT):
        for word, x in zip(line.split(), (340, 410, 480), strict=True):
            pdf.drawString(x, output_top - 16 - 14 * n, word)
    return top - code_height


def test_a_code_listing_beside_what_it_typesets_is_read_box_by_box(tmp_path: Path, settings: Settings):
    path = tmp_path / "example.pdf"
    pdf = canvas.Canvas(str(path), pagesize=PAGE)
    pdf.setFont("Times-Roman", 10)
    pdf.drawString(108, 760, "The tabular environment sets a table; the code on the left gives this:")
    bottom = draw_example(pdf, 745)
    pdf.setFont("Times-Roman", 10)
    pdf.drawString(
        108, bottom - 20, "Each row ends with a double backslash and its cells are parted by ampersands."
    )
    pdf.save()
    assert read_pdf_tables(path.open("rb"), path) == []
    blocks = extract_document(path, settings.documents).blocks
    assert [block.place for block in blocks] == ["page 1"]
    text = " ".join(blocks[0].text.split())
    # The listing whole and in its order, then the typeset table, not line beside line.
    listing = " ".join(" ".join(CODE).split())
    assert listing in text
    assert text.index(listing) < text.index("left center right one two three four five six")


def test_a_table_right_above_an_example_is_found_and_ends_where_the_example_starts(
    tmp_path: Path,
):
    path = tmp_path / "above.pdf"
    pdf = canvas.Canvas(str(path), pagesize=PAGE)
    pdf.setFont("Times-Roman", 10)
    pdf.drawString(185, 780, "Table 3.1: Column formats")
    pdf.setLineWidth(0.8)
    pdf.line(180, 772, 420, 772)
    rows = [
        ("Format", "Meaning"),
        ("l/c/r", "left, centred, right"),
        ("p{width}", "a paragraph"),
        ("|", "a rule"),
    ]
    y = 762
    for n, (key, meaning) in enumerate(rows):
        pdf.setFont("Courier" if n else "Times-Bold", 9)
        pdf.drawString(185, y, key)
        pdf.setFont("Times-Roman" if n else "Times-Bold", 9)
        pdf.drawString(260, y, meaning)
        if n == 0:
            pdf.line(180, y - 4, 420, y - 4)
        y -= 12
    pdf.line(180, y + 7, 420, y + 7)
    draw_example(pdf, y - 6)
    pdf.save()
    tables = read_pdf_tables(path.open("rb"), path)
    assert [(t.caption, t.header, t.rows) for t in tables] == [
        ("Table 3.1: Column formats", [["Format", "Meaning"]], [list(row) for row in rows[1:]])
    ]


OPERATIONS = [
    ("List all target units", "systemctl list-units --type=target"),
    ("List all service units", "systemctl list-units --type=service"),
    ("List all socket units in memory", "systemctl list-sockets"),
    ("List all timer units in memory", "systemctl list-timers"),
    ("Start a unit", "systemctl start $unit"),
    ("Stop a unit", "systemctl stop $unit"),
    ("Reload service-specific configuration", "systemctl reload $unit"),
    ("Stop and start all of a unit", "systemctl restart $unit"),
    ("Start a unit and stop all others", "systemctl isolate $unit"),
    ("Switch to graphical (GUI system)", "systemctl isolate graphical"),
    ("Switch to multi-user (CLI system)", "systemctl isolate multi-user"),
    ("Send kill signal to a unit", "systemctl kill $unit"),
    ("Check if a service is active", "systemctl is-active $unit"),
    ("Check if a service is failed", "systemctl is-failed $unit"),
    ("Show properties of a unit or job", "systemctl show $unit"),
    ("Reset a failed unit", "systemctl reset-failed $unit"),
    ("Enable a unit (add symlink)", "systemctl enable $unit"),
    ("Disable a unit (remove symlink)", "systemctl disable $unit"),
    ("Get the default target", "systemctl get-default"),
    ("Reload all unit files and daemons", "systemctl daemon-reload"),
]


def test_a_long_two_column_table_of_short_entries_is_a_table_not_two_columns(tmp_path: Path):
    # Each operation fills its column only up to the longest; a column of prose runs to
    # its edge line after line. Read as columns, the page lost the table (Debian
    # Reference's Table 3.6, once its quote marks no longer made lines of their own).
    path = tmp_path / "operations.pdf"
    pdf = canvas.Canvas(str(path), pagesize=PAGE)
    pdf.setFont("Times-Bold", 10)
    pdf.drawString(72, 760, "Operation")
    pdf.drawString(270, 760, "Command snippets")
    for n, (operation, command) in enumerate(OPERATIONS):
        pdf.setFont("Times-Roman", 10)
        pdf.drawString(72, 746 - 12 * n, operation)
        pdf.setFont("Courier", 10)
        pdf.drawString(270, 746 - 12 * n, command)
    pdf.setFont("Times-Roman", 10)
    pdf.drawString(
        200, 746 - 12 * len(OPERATIONS) - 8, "Table 3.6: List of typical systemctl command snippets"
    )
    pdf.save()
    tables = read_pdf_tables(path.open("rb"), path)
    assert len(tables) == 1
    assert tables[0].caption == "Table 3.6: List of typical systemctl command snippets"
    assert tables[0].rows == [list(row) for row in OPERATIONS]


def test_a_tip_box_under_a_small_table_is_no_row_of_it(tmp_path: Path, settings: Settings):
    # The Debian Reference (zh, page 60): a list of names and dates, then a Tip in a box
    # whose top rule runs across the page: the rule carried the table over the white into
    # the note, and every line of the table became one row.
    leaders = [
        ("Ian", "Murdock", "August", "1993"),
        ("Bruce", "Perens", "April", "1996"),
        ("Ian", "Jackson", "January", "1998"),
        ("Wichert", "Akkerman", "January", "1999"),
        ("Ben", "Collins", "April", "2001"),
    ]
    path = tmp_path / "leaders.pdf"
    pdf = canvas.Canvas(str(path), pagesize=PAGE)
    pdf.setFont("Times-Roman", 10)
    pdf.drawString(
        57, 760, "The file DPL holds the project leaders and the month they began, apart by spaces."
    )
    for n, row in enumerate(leaders):
        for x, cell in zip((57, 100, 153, 197), row, strict=True):
            pdf.drawString(x, 740 - 11 * n, cell)
    tip = 740 - 11 * len(leaders) - 30
    pdf.setLineWidth(0.8)
    pdf.line(65, tip + 8, 565, tip + 8)
    pdf.drawString(66, tip - 4, "Tip")
    pdf.drawString(66, tip - 16, "See")
    pdf.drawString(88, tip - 16, "the history of the project for the leaders since.")
    pdf.save()
    tables = read_pdf_tables(path.open("rb"), path)
    assert [table.rows for table in tables] == [[list(row) for row in leaders[1:]]]
    assert tables[0].header == [list(leaders[0])]


BOOT_LOADERS = [
    ("grub-pc", "V:23, I:708", ["Supported"], ["GRUB 2"], "Understands filesystems (BIOS)"),
    ("lilo", "V:0, I:1", ["Supported"], ["Lilo"], "Relies on sector locations"),
    ("mbr", "V:0, I:5", ["Not", "supported"], ["MBR by", "Neil Turton"], "This only understands partitions"),
    ("loadlin", "V:0, I:0", ["Supported"], ["Loadlin"], "Started from the FreeDOS system"),
]


def test_a_cell_wrapped_about_its_rows_middle_keeps_its_lines_apart(tmp_path: Path):
    # The Debian Reference (page 105): each row's cells are centred on its height, so a
    # cell of two lines has one above and one below the one-line cells beside it; the
    # row's runs make one printed line, and the two lines of the cell were read as the
    # pieces of one line: "Notsupported", "MBR byNeil Turton".
    path = tmp_path / "loaders.pdf"
    pdf = canvas.Canvas(str(path), pagesize=PAGE)
    pdf.setFont("Times-Bold", 9)
    pdf.drawString(72, 780, "Table 3.1: List of boot loaders")
    header = ("package", "popcon", "bootloader", "name", "description")
    for cell, x in zip(header, (72, 150, 220, 320, 400), strict=True):
        pdf.drawString(x, 760, cell)
    y = 744.0
    for package, popcon, supported, name, description in BOOT_LOADERS:
        tall = max(len(supported), len(name))
        middle = y - 6 * (tall - 1)
        pdf.setFont("Times-Roman", 10)
        pdf.drawString(72, middle, package)
        pdf.drawString(150, middle, popcon)
        pdf.drawString(400, middle, description)
        for cell, x in ((supported, 220), (name, 320)):
            for n, line in enumerate(cell):
                pdf.drawString(x, middle + 6 * (len(cell) - 1) - 12 * n, line)
        y -= 12 * tall + 6
    pdf.save()
    tables = read_pdf_tables(path.open("rb"), path)
    assert len(tables) == 1
    assert tables[0].rows == [
        [package, popcon, " ".join(supported), " ".join(name), description]
        for package, popcon, supported, name, description in BOOT_LOADERS
    ]


COLUMN_FORMATS = [
    ("l/c/r", "left, centred or right, no wrapping"),
    ("p{width}", "a paragraph of a fixed width"),
    ("|", "a vertical rule"),
    ("@{string}", "the string between two columns"),
]


def test_a_booktabs_table_under_its_caption_keeps_its_rows_apart(tmp_path: Path):
    # lshort-zh-cn's Table 3.1: a caption centred over a top rule, the header, a mid rule,
    # rows set line under line, a bottom rule. The caption's white was the widest gap
    # between lines and the top rule an inner one: every row of the body became one.
    path = tmp_path / "formats.pdf"
    pdf = canvas.Canvas(str(path), pagesize=PAGE)
    pdf.setFont("Times-Roman", 10)
    pdf.drawString(256, 744, "Table 3.1: Column formats")
    pdf.setLineWidth(0.8)
    pdf.line(180, 738, 440, 738)
    y = 726
    for n, (key, meaning) in enumerate([("Format", "Meaning"), *COLUMN_FORMATS]):
        pdf.setFont("Courier" if n else "Times-Bold", 9)
        pdf.drawString(186, y, key)
        pdf.setFont("Times-Roman" if n else "Times-Bold", 9)
        pdf.drawString(250, y, meaning)
        if n == 0:
            pdf.line(180, y - 4, 440, y - 4)
        y -= 15.5
    pdf.line(180, y + 10, 440, y + 10)
    pdf.save()
    tables = read_pdf_tables(path.open("rb"), path)
    assert [(t.caption, t.header, t.rows) for t in tables] == [
        ("Table 3.1: Column formats", [["Format", "Meaning"]], [list(row) for row in COLUMN_FORMATS])
    ]


SPECIFIERS = [
    ("%f", "floating point notation"),
    ("%e or %E", "exponential notation; an e or E before the power"),
    ("%g or %G", "the shorter of %e and %f"),
    ("%x or %X", "hex"),
]


def test_column_names_set_as_one_string_across_the_columns_head_the_table(tmp_path: Path):
    # gnuplot's page 151: "Format Explanation" is one string whose space spans the white
    # between the columns; left out of the table, its first row was taken as the header.
    path = tmp_path / "specifiers.pdf"
    pdf = canvas.Canvas(str(path), pagesize=PAGE)
    pdf.setFont("Times-Roman", 10)
    pdf.drawString(214, 700, "Tic-mark label numerical format specifiers")
    pdf.drawString(138, 686, "Format          Explanation")
    for n, (key, meaning) in enumerate(SPECIFIERS):
        pdf.drawString(148 if len(key) == 2 else 136, 674 - 12 * n, key)
        pdf.drawString(200, 674 - 12 * n, meaning)
    pdf.save()
    tables = read_pdf_tables(path.open("rb"), path)
    assert len(tables) == 1
    assert tables[0].header == [["Format", "Explanation"]]
    assert tables[0].rows == [list(row) for row in SPECIFIERS]


JOURNAL = [
    ("View log for system services and kernel from", "the last boot", "journalctl -b --system"),
    ("View log for services of the current user from", "the last boot", "journalctl -b --user"),
    ("View job log of a unit from the last boot and", "follow it", "journalctl -b -u $unit -f"),
]


def test_quote_marks_around_a_command_centred_on_a_wrapped_row_stay_with_it(tmp_path: Path):
    # The Debian Reference's journalctl table (page 110): each row ruled, its operation
    # wrapped on two lines, the command between quote marks set small and high, centred
    # on the row. The marks' middles fell in the operation's upper line, the command's in
    # the line below: the cell read "” ” journalctl -b --system".
    path = tmp_path / "journal.pdf"
    pdf = canvas.Canvas(str(path), pagesize=PAGE)
    pdf.setLineWidth(0.5)
    pdf.setFont("Times-Bold", 10)
    pdf.drawString(72, 772, "Operation")
    pdf.drawString(270, 772, "Command snippet")
    top = 766.0
    pdf.line(66, top, 520, top)
    for upper, lower, command in JOURNAL:
        middle = top - 16
        pdf.setFont("Times-Roman", 10)
        pdf.drawString(72, middle + 6, upper)
        pdf.drawString(72, middle - 6, lower)
        _pieces(pdf, 270, middle, quoted(command))
        top -= 30
        pdf.line(66, top, 520, top)
    pdf.save()
    tables = read_pdf_tables(path.open("rb"), path)
    assert len(tables) == 1
    assert [row[1].replace('"', "").split() for row in tables[0].rows] == [
        command.split() for *_, command in JOURNAL
    ]
    assert all(row[1].startswith('"') and row[1].endswith('"') for row in tables[0].rows)
