"""Turn a `Report` into a formatted .docx with python-docx, with fonts that render Chinese.

Word picks a font per character class: w:ascii / w:hAnsi for Latin text, w:eastAsia for CJK.
python-docx's `font.name` sets only the Latin pair, and the default template names *theme*
fonts (w:asciiTheme, ...), which win over explicit names. So `apply_fonts` removes the theme
references and names both fonts on the document defaults and on every style, and code runs set
w:eastAsia themselves. Without this, Chinese text falls back to whatever the viewer guesses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from _report_model import (
    Block,
    CodeBlock,
    Heading,
    Image,
    ListBlock,
    PageBreak,
    Paragraph,
    Quote,
    Report,
    ReportInputError,
    Rule,
    Span,
    Table,
    parse_inline,
    plain_text,
)
from docx import Document
from docx.document import Document as DocxDocument
from docx.enum.section import WD_ORIENT
from docx.enum.style import WD_STYLE_TYPE
from docx.enum.table import WD_TABLE_ALIGNMENT
from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_BREAK
from docx.image.exceptions import UnrecognizedImageError
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.oxml.xmlchemy import BaseOxmlElement
from docx.shared import Cm, Pt, RGBColor
from docx.text.paragraph import Paragraph as DocxParagraph
from docx.text.run import Run

PAPER_CM = {"a4": (21.0, 29.7), "letter": (21.59, 27.94)}
MARGIN_CM = 2.5
CODE_FONT = "Consolas"
CODE_STYLE = "Source Code"
LINK_COLOR = RGBColor(0x05, 0x63, 0xC1)
HEADER_FILL = "D9E2F3"
TOC_LEVELS = 3
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_THEME_ATTRIBUTES = ("w:asciiTheme", "w:hAnsiTheme", "w:eastAsiaTheme", "w:cstheme")
_ALIGN = {
    "left": WD_ALIGN_PARAGRAPH.LEFT,
    "center": WD_ALIGN_PARAGRAPH.CENTER,
    "right": WD_ALIGN_PARAGRAPH.RIGHT,
}
# Later elements of w:settings that w:updateFields must precede (the schema fixes the order).
_SETTINGS_AFTER_UPDATE_FIELDS = (
    "w:hdrShapeDefaults",
    "w:footnotePr",
    "w:endnotePr",
    "w:compat",
    "w:docVars",
    "w:rsids",
)


@dataclass
class Fonts:
    latin: str = "Calibri"
    cjk: str = "Microsoft YaHei"


@dataclass
class WriteSummary:
    """What was written, for the one-line report the model passes on to the user."""

    headings: int = 0
    paragraphs: int = 0
    lists: int = 0
    tables: int = 0
    images: int = 0
    notes: list[str] = field(default_factory=list)


def has_cjk(report: Report) -> bool:
    texts = [report.title or "", report.subtitle or ""]
    for block in report.blocks:
        if isinstance(block, Heading | Paragraph | Quote):
            texts.append(block.text)
        elif isinstance(block, ListBlock):
            texts.extend(item.text for item in block.items)
        elif isinstance(block, Table):
            texts.extend(block.header)
    return any(_CJK.search(text) for text in texts)


def write_docx(
    report: Report,
    target: Path,
    *,
    fonts: Fonts,
    paper: str,
    image_roots: list[Path],
    workspace: Path,
) -> WriteSummary:
    """Write `report` to `target`; images are looked up under `image_roots`, inside `workspace`."""
    document = Document()
    apply_fonts(document, fonts)
    set_page(document, paper, numbered_from_second=report.title_page)
    chinese = has_cjk(report)
    summary = WriteSummary()
    properties = document.core_properties
    properties.title = plain_text(report.title or "")
    properties.author = report.author or ""
    properties.subject = plain_text(report.subtitle or "")

    if report.title:
        add_title(document, report)
    if report.toc:
        add_table_of_contents(document, report.blocks, chinese)
        summary.notes.append(
            "Word fills in the table of contents when the file is opened (answer Yes to update "
            "fields); in LibreOffice use Tools > Update > Update All"
        )
    numbering = ListNumbering(document)
    for block in report.blocks:
        add_block(document, block, numbering, fonts, image_roots, workspace, summary)
    document.save(str(target))
    return summary


# -- page, fonts, settings ------------------------------------------------------------


def apply_fonts(document: DocxDocument, fonts: Fonts) -> None:
    styles = document.styles.element
    defaults = styles.find(qn("w:docDefaults")).find(qn("w:rPrDefault")).find(qn("w:rPr"))
    language = defaults.find(qn("w:lang"))
    if language is not None:
        language.set(qn("w:eastAsia"), "zh-CN")
    for fonts_element in styles.iter(qn("w:rFonts")):
        for attribute in _THEME_ATTRIBUTES:
            fonts_element.attrib.pop(qn(attribute), None)
        name_fonts(fonts_element, fonts.latin, fonts.cjk)


def name_fonts(element: BaseOxmlElement, latin: str, cjk: str) -> None:
    for attribute in ("w:ascii", "w:hAnsi", "w:cs"):
        element.set(qn(attribute), latin)
    element.set(qn("w:eastAsia"), cjk)


def set_page(document: DocxDocument, paper: str, *, numbered_from_second: bool) -> None:
    width, height = PAPER_CM[paper]
    section = document.sections[0]
    section.orientation = WD_ORIENT.PORTRAIT
    section.page_width, section.page_height = Cm(width), Cm(height)
    for side in ("left_margin", "right_margin", "top_margin", "bottom_margin"):
        setattr(section, side, Cm(MARGIN_CM))
    section.different_first_page_header_footer = numbered_from_second
    footer = section.footer.paragraphs[0]
    footer.alignment = WD_ALIGN_PARAGRAPH.CENTER
    add_field(footer, "PAGE", "1")


def text_width(document: DocxDocument) -> int:
    section = document.sections[0]
    return section.page_width - section.left_margin - section.right_margin


def ask_word_to_update_fields(document: DocxDocument) -> None:
    settings = document.settings.element
    update = OxmlElement("w:updateFields")
    update.set(qn("w:val"), "true")
    for name in _SETTINGS_AFTER_UPDATE_FIELDS:
        later = settings.find(qn(name))
        if later is not None:
            later.addprevious(update)
            return
    settings.append(update)


def add_field(paragraph: DocxParagraph, instruction: str, shown: str) -> None:
    """A complex field (PAGE, TOC, ...) whose current result is `shown` until Word updates it."""
    paragraph.add_run()._r.append(_field_char("begin"))
    instruction_run = paragraph.add_run()
    text = OxmlElement("w:instrText")
    text.set(qn("xml:space"), "preserve")
    text.text = f" {instruction} "
    instruction_run._r.append(text)
    paragraph.add_run()._r.append(_field_char("separate"))
    paragraph.add_run(shown)
    paragraph.add_run()._r.append(_field_char("end"))


def _field_char(kind: str) -> BaseOxmlElement:
    element = OxmlElement("w:fldChar")
    element.set(qn("w:fldCharType"), kind)
    return element


# -- title and table of contents ------------------------------------------------------


def add_title(document: DocxDocument, report: Report) -> None:
    title = document.add_paragraph(style="Title")
    add_spans(title, parse_inline(report.title or ""))
    if report.title_page:
        title.paragraph_format.space_before = Pt(160)
        title.alignment = WD_ALIGN_PARAGRAPH.CENTER
    if report.subtitle:
        subtitle = document.add_paragraph(style="Subtitle")
        add_spans(subtitle, parse_inline(report.subtitle))
        if report.title_page:
            subtitle.alignment = WD_ALIGN_PARAGRAPH.CENTER
    byline = " · ".join(part for part in (report.author, report.date) if part)
    if byline:
        line = document.add_paragraph()
        add_spans(line, parse_inline(byline))
        if report.title_page:
            line.alignment = WD_ALIGN_PARAGRAPH.CENTER
            line.paragraph_format.space_before = Pt(36)
    if report.title_page:
        document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)


def add_table_of_contents(document: DocxDocument, blocks: list[Block], chinese: bool) -> None:
    """A TOC field, pre-filled with the headings so it reads well even before Word updates it."""
    document.add_paragraph("目录" if chinese else "Contents", style="TOC Heading")
    entries = [b for b in blocks if isinstance(b, Heading) and b.level <= TOC_LEVELS and b.text]
    first = document.add_paragraph()
    first.add_run()._r.append(_field_char("begin"))
    instruction = OxmlElement("w:instrText")
    instruction.set(qn("xml:space"), "preserve")
    instruction.text = f' TOC \\o "1-{TOC_LEVELS}" \\h \\z \\u '
    first.add_run()._r.append(instruction)
    first.add_run()._r.append(_field_char("separate"))
    paragraph = first
    if not entries:
        placeholder = (
            "右键单击此处并选择“更新域”以生成目录。"
            if chinese
            else "Right-click here and choose Update Field to build the table of contents."
        )
        paragraph.add_run(placeholder)
    for number, heading in enumerate(entries):
        if number:
            paragraph = document.add_paragraph()
        paragraph.paragraph_format.left_indent = Cm(0.75 * (heading.level - 1))
        paragraph.paragraph_format.space_after = Pt(2)
        paragraph.add_run(plain_text(heading.text))
    paragraph.add_run()._r.append(_field_char("end"))
    document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
    ask_word_to_update_fields(document)


# -- blocks ---------------------------------------------------------------------------


def add_block(
    document: DocxDocument,
    block: Block,
    numbering: ListNumbering,
    fonts: Fonts,
    image_roots: list[Path],
    workspace: Path,
    summary: WriteSummary,
) -> None:
    if isinstance(block, Heading):
        if block.text.strip():
            add_spans(
                document.add_paragraph(style=f"Heading {block.level}"), parse_inline(block.text)
            )
            summary.headings += 1
    elif isinstance(block, Paragraph):
        add_spans(document.add_paragraph(), parse_inline(block.text), fonts)
        summary.paragraphs += 1
    elif isinstance(block, Quote):
        add_spans(document.add_paragraph(style="Quote"), parse_inline(block.text), fonts)
    elif isinstance(block, ListBlock):
        add_list(document, block, numbering, fonts)
        summary.lists += 1
    elif isinstance(block, Table):
        add_table(document, block, fonts)
        summary.tables += 1
    elif isinstance(block, CodeBlock):
        add_code(document, block, fonts)
    elif isinstance(block, Image):
        add_image(document, block, image_roots, workspace)
        summary.images += 1
    elif isinstance(block, Rule):
        add_rule(document)
    elif isinstance(block, PageBreak):
        document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)


def add_spans(paragraph: DocxParagraph, spans: list[Span], fonts: Fonts | None = None) -> None:
    for span in spans:
        if span.url:
            container = _hyperlink(paragraph, span.url)
            run = _run_in(container, paragraph)
            run.font.color.rgb = LINK_COLOR
            run.font.underline = True
        else:
            run = paragraph.add_run()
        lines = span.text.split("\n")
        for number, line in enumerate(lines):
            if number:
                run.add_break()
            if line:
                run.add_text(line)
        run.bold = span.bold or None
        run.italic = span.italic or None
        run.font.strike = span.strike or None
        if span.code:
            run.font.name = CODE_FONT
            name_fonts(
                run._r.get_or_add_rPr().get_or_add_rFonts(),
                CODE_FONT,
                fonts.cjk if fonts else Fonts().cjk,
            )


def _hyperlink(paragraph: DocxParagraph, url: str) -> BaseOxmlElement:
    relation = paragraph.part.relate_to(url, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), relation)
    paragraph._p.append(link)
    return link


def _run_in(container: BaseOxmlElement, paragraph: DocxParagraph) -> Run:
    element = OxmlElement("w:r")
    container.append(element)
    return Run(element, paragraph)


class ListNumbering:
    """Word numbering for lists: one bullet definition, and a fresh numbered instance per list.

    Every numbered list gets its own w:num with start overrides, so each list counts from its
    own start instead of continuing the previous list's numbers.
    """

    BULLETS = ("•", "◦", "▪")
    NUMBER_FORMATS = ("decimal", "lowerLetter", "lowerRoman")

    def __init__(self, document: DocxDocument) -> None:
        self.numbering = document.part.numbering_part.element
        ids = [
            int(n.get(qn("w:abstractNumId"))) for n in self.numbering.findall(qn("w:abstractNum"))
        ]
        next_id = max(ids, default=0) + 1
        self.bullet_abstract = self._abstract(next_id, ordered=False)
        self.number_abstract = self._abstract(next_id + 1, ordered=True)
        self.bullet_num = self._instance(self.bullet_abstract, start=None)

    def new_list(self, ordered: bool, start: int) -> int:
        return self._instance(self.number_abstract, start=start) if ordered else self.bullet_num

    def _abstract(self, abstract_id: int, *, ordered: bool) -> int:
        abstract = OxmlElement("w:abstractNum")
        abstract.set(qn("w:abstractNumId"), str(abstract_id))
        kind = OxmlElement("w:multiLevelType")
        kind.set(qn("w:val"), "hybridMultilevel")
        abstract.append(kind)
        for level in range(9):
            lvl = OxmlElement("w:lvl")
            lvl.set(qn("w:ilvl"), str(level))
            fmt = self.NUMBER_FORMATS[level % 3] if ordered else "bullet"
            text = f"%{level + 1}." if ordered else self.BULLETS[level % 3]
            for tag, value in (
                ("w:start", "1"),
                ("w:numFmt", fmt),
                ("w:lvlText", text),
                ("w:lvlJc", "left"),
            ):
                child = OxmlElement(tag)
                child.set(qn("w:val"), value)
                lvl.append(child)
            paragraph = OxmlElement("w:pPr")
            indent = OxmlElement("w:ind")
            indent.set(qn("w:left"), str(360 * (level + 1) + 360))
            indent.set(qn("w:hanging"), "360")
            paragraph.append(indent)
            lvl.append(paragraph)
            abstract.append(lvl)
        first_instance = self.numbering.find(qn("w:num"))
        if first_instance is not None:
            first_instance.addprevious(abstract)
        else:
            self.numbering.append(abstract)
        return abstract_id

    def _instance(self, abstract_id: int, *, start: int | None) -> int:
        ids = [int(n.get(qn("w:numId"))) for n in self.numbering.findall(qn("w:num"))]
        num_id = max(ids, default=0) + 1
        instance = OxmlElement("w:num")
        instance.set(qn("w:numId"), str(num_id))
        reference = OxmlElement("w:abstractNumId")
        reference.set(qn("w:val"), str(abstract_id))
        instance.append(reference)
        if start is not None:
            for level in range(9):
                override = OxmlElement("w:lvlOverride")
                override.set(qn("w:ilvl"), str(level))
                start_override = OxmlElement("w:startOverride")
                start_override.set(qn("w:val"), str(start if level == 0 else 1))
                override.append(start_override)
                instance.append(override)
        self.numbering.append(instance)
        return num_id


def add_list(
    document: DocxDocument, block: ListBlock, numbering: ListNumbering, fonts: Fonts
) -> None:
    current: dict[int, tuple[bool, int]] = {}
    for item in block.items:
        for level in [lvl for lvl in current if lvl > item.level]:
            del current[level]
        kind = current.get(item.level)
        if kind is None or kind[0] != item.ordered:
            current[item.level] = (item.ordered, numbering.new_list(item.ordered, item.start))
        num_id = current[item.level][1]
        paragraph = document.add_paragraph(style="List Paragraph")
        properties = paragraph._p.get_or_add_pPr()
        numbering_properties = OxmlElement("w:numPr")
        for tag, value in (("w:ilvl", item.level), ("w:numId", num_id)):
            child = OxmlElement(tag)
            child.set(qn("w:val"), str(value))
            numbering_properties.append(child)
        # The schema puts w:numPr right after w:pStyle in a paragraph's properties.
        properties.pStyle.addnext(numbering_properties)
        paragraph.paragraph_format.space_after = Pt(3)
        add_spans(paragraph, parse_inline(item.text), fonts)


def add_table(document: DocxDocument, block: Table, fonts: Fonts) -> None:
    width = len(block.header)
    table = document.add_table(rows=1 + len(block.rows), cols=width)
    table.style = document.styles["Table Grid"]
    table.alignment = WD_TABLE_ALIGNMENT.CENTER
    for row_number, cells in enumerate([block.header, *block.rows]):
        row = table.rows[row_number]
        for column, text in enumerate(cells):
            cell = row.cells[column]
            paragraph = cell.paragraphs[0]
            paragraph.paragraph_format.space_after = Pt(0)
            if block.align[column]:
                paragraph.alignment = _ALIGN[block.align[column]]
            spans = parse_inline(text)
            if row_number == 0:
                spans = [Span(s.text, True, s.italic, s.strike, s.code, s.url) for s in spans]
                _shade(cell._tc.get_or_add_tcPr(), HEADER_FILL)
            add_spans(paragraph, spans, fonts)
    header_properties = table.rows[0]._tr.get_or_add_trPr()
    repeat = OxmlElement("w:tblHeader")
    repeat.set(qn("w:val"), "true")
    header_properties.append(repeat)
    document.add_paragraph().paragraph_format.space_after = Pt(0)


def _shade(properties: BaseOxmlElement, fill: str) -> None:
    shading = OxmlElement("w:shd")
    shading.set(qn("w:val"), "clear")
    shading.set(qn("w:color"), "auto")
    shading.set(qn("w:fill"), fill)
    properties.append(shading)


def code_style(document: DocxDocument, fonts: Fonts) -> str:
    if CODE_STYLE not in [style.name for style in document.styles]:
        style = document.styles.add_style(CODE_STYLE, WD_STYLE_TYPE.PARAGRAPH)
        style.base_style = document.styles["Normal"]
        style.font.size = Pt(9.5)
        name_fonts(style.element.get_or_add_rPr().get_or_add_rFonts(), CODE_FONT, fonts.cjk)
        style.paragraph_format.space_after = Pt(6)
        style.paragraph_format.line_spacing = 1.0
        _shade(style.element.get_or_add_pPr(), "F2F2F2")
    return CODE_STYLE


def add_code(document: DocxDocument, block: CodeBlock, fonts: Fonts) -> None:
    paragraph = document.add_paragraph(style=code_style(document, fonts))
    run = paragraph.add_run()
    for number, line in enumerate(block.text.split("\n")):
        if number:
            run.add_break()
        run.add_text(line)


def add_rule(document: DocxDocument) -> None:
    paragraph = document.add_paragraph()
    borders = OxmlElement("w:pBdr")
    bottom = OxmlElement("w:bottom")
    for name, value in (
        ("w:val", "single"),
        ("w:sz", "6"),
        ("w:space", "1"),
        ("w:color", "A6A6A6"),
    ):
        bottom.set(qn(name), value)
    borders.append(bottom)
    paragraph._p.get_or_add_pPr().append(borders)


def find_image(path: str, roots: list[Path], workspace: Path) -> Path:
    for root in roots:
        candidate = (root / path).resolve()
        if candidate.is_file():
            if workspace != candidate and workspace not in candidate.parents:
                raise ReportInputError(
                    f"image {path}: outside the workspace; copy it into uploads/."
                )
            return candidate
    raise ReportInputError(f"image {path}: no such file (paths are relative to the workspace).")


def add_image(document: DocxDocument, block: Image, roots: list[Path], workspace: Path) -> None:
    file = find_image(block.path, roots, workspace)
    paragraph = document.add_paragraph()
    paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
    try:
        picture = paragraph.add_run().add_picture(str(file))
    except UnrecognizedImageError as error:
        raise ReportInputError(
            f"image {block.path}: format not supported; use PNG, JPEG, GIF, BMP or TIFF."
        ) from error
    wanted = Cm(block.width_cm) if block.width_cm else None
    limit = text_width(document)
    if wanted or picture.width > limit:
        ratio = (wanted or limit) / picture.width
        picture.width = int(picture.width * ratio)
        picture.height = int(picture.height * ratio)
    if block.caption:
        caption = document.add_paragraph(style="Caption")
        caption.alignment = WD_ALIGN_PARAGRAPH.CENTER
        add_spans(caption, parse_inline(block.caption))
