"""CNXML rendering primitives: inline text, tables, lists (used by the OpenStax reader).

Source whitespace is collapsed as it is read; only ``<newline/>`` makes a line break, so the
lines of a table cell ("Drug Class" / "Integrase inhibitor") survive intact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from medground.corpus.readers_text import REF, REF_END, URL_RE, clean_text

CNXML_NS = "http://cnx.rice.edu/cnxml"
MD_NS = "http://cnx.rice.edu/mdml"
COLLXML_NS = "http://cnx.rice.edu/collxml"

# Elements whose content never belongs in the text: pictures, citations, footnotes, embeds.
SKIP_INLINE = frozenset(
    {"media", "figure", "subfigure", "footnote", "iframe", "cite", "image", "video", "audio",
     "object", "download", "flash"}
)
_WS = re.compile(r"\s+")


def local(el: etree._Element) -> str:
    tag = el.tag
    if not isinstance(tag, str):
        return ""  # comment or processing instruction
    return tag.rpartition("}")[2]


def _ws(s: str | None) -> str:
    return _WS.sub(" ", s) if s else ""


def render_inline(el: etree._Element, out: list[str]) -> None:
    """Append the text of ``el``'s content (not its tail) to ``out``."""
    if el.text:
        out.append(_ws(el.text))
    for child in el:
        name = local(child)
        if name and name not in SKIP_INLINE:
            if name == "newline":
                out.append("\n" * _count(child))
            elif name == "space":
                out.append(" " * _count(child))
            elif name == "link":
                _render_link(child, out)
            elif name == "list":
                out.append("\n")
                out.extend(f"- {item}\n" for item in list_items(child))
            elif name in ("para", "title"):  # block inside an inline context (table cells)
                out.append("\n")
                render_inline(child, out)
                out.append("\n")
            elif name == "math":
                out.append("".join(t.strip() for t in child.itertext()))
            else:
                render_inline(child, out)
        if child.tail:
            out.append(_ws(child.tail))


def _count(el: etree._Element) -> int:
    try:
        return max(1, min(3, int(el.get("count", "1"))))
    except ValueError:
        return 1


def _render_link(el: etree._Element, out: list[str]) -> None:
    inner: list[str] = []
    render_inline(el, inner)
    text = "".join(inner).strip()
    if not text:
        if el.get("target-id"):
            out.append(f"{REF}{el.get('target-id')}{REF_END}")
        return
    if el.get("url") and URL_RE.fullmatch(text):
        return  # the visible text is the URL itself
    out.append(text)


def inline_text(
    el: etree._Element, *, multiline: bool = False, refs: dict[str, str] | None = None
) -> str:
    """Clean text of an element: URLs, dangling references and stray whitespace removed.
    ``refs`` maps element ids to their kind ("figure", "table") to name empty links."""
    parts: list[str] = []
    render_inline(el, parts)
    return clean_text("".join(parts), multiline=multiline, refs=refs)


def list_items(el: etree._Element, *, refs: dict[str, str] | None = None) -> list[str]:
    items = []
    for item in el:
        if local(item) == "item":
            text = inline_text(item, refs=refs)
            if text:
                items.append(text)
    return items


# --- tables -----------------------------------------------------------------------------


@dataclass
class CnxmlTable:
    """A CNXML table as text cells. Cell lines (``<newline/>``) are kept as "\\n"."""

    module_id: str
    caption: str
    title: str
    header: list[str]
    rows: list[list[str]]
    table_id: str = ""
    classes: list[str] = field(default_factory=list)

    def render(self) -> str:
        """Readable text: the title/caption line, then one line per row, "Header: value; ..."."""
        heading = " — ".join(t for t in (self.title, self.caption) if t and t != "")
        if self.title and self.caption and self.caption.startswith(self.title):
            heading = self.caption
        lines = [f"Table: {heading}"] if heading else []
        for row in self.rows:
            cells = []
            for i, cell in enumerate(row):
                value = flatten_cell(cell, headings=not self.header)
                if not value:
                    continue
                head = self.header[i] if i < len(self.header) else ""
                cells.append(f"{head}: {value}" if head and head != value else value)
            if cells:
                lines.append("; ".join(cells))
        return "\n".join(lines)


def flatten_cell(cell: str, *, headings: bool = False) -> str:
    """One line from a multi-line cell. With ``headings`` (tables without a header row, like
    the drug prototype tables) a short first line of a paragraph group labels the rest:
    "Drug Class\\nIntegrase inhibitor" → "Drug Class: Integrase inhibitor"."""
    groups = [g for g in cell.split("\n\n") if g.strip()]
    rendered = []
    for group in groups:
        lines = [ln for ln in group.split("\n") if ln]
        if headings and len(lines) > 1 and _is_heading(lines[0]):
            head = lines[0].rstrip(":")
            rendered.append(f"{head}: {_join_lines(lines[1:])}")
        else:
            rendered.append(_join_lines(lines))
    return "; ".join(rendered)


def _is_heading(line: str) -> bool:
    return len(line.split()) <= 6 and not line.endswith((".", ",", ";")) and line[:1].isupper()


def _join_lines(lines: list[str]) -> str:
    out = lines[0] if lines else ""
    for ln in lines[1:]:
        sep = " " if out.endswith((".", ":", ";", ",")) or ln.startswith("(") else ", "
        out += sep + ln
    return out


def parse_table(
    el: etree._Element, module_id: str, *, refs: dict[str, str] | None = None
) -> CnxmlTable:
    title_el = next((c for c in el if local(c) == "title"), None)
    caption_el = next((c for c in el if local(c) == "caption"), None)
    title = inline_text(title_el, refs=refs) if title_el is not None else ""
    caption = inline_text(caption_el, refs=refs) if caption_el is not None else ""
    header: list[str] = []
    rows: list[list[str]] = []
    for tgroup in (c for c in el if local(c) == "tgroup"):
        ncols, colnames = _columns(tgroup)
        head_rows: list[list[str]] = []
        for part in tgroup:
            name = local(part)
            if name in ("thead", "tbody", "tfoot"):
                grid = _grid(part, ncols, colnames, fill_span=name == "thead", refs=refs)
                (head_rows if name == "thead" else rows).extend(grid)
        # A first header row that is one cell across the whole table is the table's title.
        if head_rows and ncols > 1 and _single_spanning(head_rows[0]):
            if not title:
                title = head_rows[0][0].replace("\n", " ")
            head_rows = head_rows[1:]
        if head_rows and not header:
            header = _merge_header(head_rows)
    return CnxmlTable(module_id, caption, title, header, rows, el.get("id", ""),
                      (el.get("class") or "").split())


def _columns(tgroup: etree._Element) -> tuple[int, dict[str, int]]:
    colnames: dict[str, int] = {}
    specs = [c for c in tgroup if local(c) == "colspec"]
    for i, spec in enumerate(specs):
        try:
            num = int(spec.get("colnum", i + 1)) - 1
        except ValueError:
            num = i
        if spec.get("colname"):
            colnames[spec.get("colname")] = num
    try:
        ncols = int(tgroup.get("cols", len(specs) or 1))
    except ValueError:
        ncols = len(specs) or 1
    return max(ncols, len(specs), 1), colnames


def _grid(
    part: etree._Element,
    ncols: int,
    colnames: dict[str, int],
    *,
    fill_span: bool = False,
    refs: dict[str, str] | None = None,
) -> list[list[str]]:
    """Rows as full-width lists; a cell spanning rows (morerows) is repeated in each row, one
    spanning columns only in a header (``fill_span``: "Dose" over "Adult", "Child")."""
    grid: list[list[str]] = []
    carry: dict[int, tuple[str, int]] = {}  # column → (text, rows still to fill)
    for row in (r for r in part if local(r) == "row"):
        cells: list[str | None] = [None] * ncols
        for col, (text, left) in list(carry.items()):
            if col < ncols:
                cells[col] = text
            carry[col] = (text, left - 1)
            if left - 1 <= 0:
                del carry[col]
        col = 0
        for entry in (e for e in row if local(e) in ("entry", "entrytbl")):
            if entry.get("namest") in colnames:
                col = colnames[entry.get("namest")]
            elif entry.get("colname") in colnames:
                col = colnames[entry.get("colname")]
            while col < ncols and cells[col] is not None:
                col += 1
            if col >= ncols:
                cells.append(None)  # more entries than declared columns: keep the text
                ncols += 1
            end = colnames.get(entry.get("nameend", ""), col)
            text = inline_text(entry, multiline=True, refs=refs)
            cells[col] = text
            for span_col in range(col + 1, min(max(end, col) + 1, ncols)):
                cells[span_col] = text if fill_span else ""
            try:
                more = int(entry.get("morerows", "0"))
            except ValueError:
                more = 0
            if more > 0:
                carry[col] = (text, more)
            col = max(end, col) + 1
        grid.append([c or "" for c in cells])
    return grid


def _single_spanning(row: list[str]) -> bool:
    return bool(row[0]) and all(c in ("", row[0]) for c in row[1:])


def _merge_header(head_rows: list[list[str]]) -> list[str]:
    width = max(len(r) for r in head_rows)
    header = []
    for i in range(width):
        parts: list[str] = []
        for r in head_rows:
            value = r[i].replace("\n", " ") if i < len(r) else ""
            if value and value not in parts:
                parts.append(value)
        header.append(" – ".join(parts))
    return header
