"""OpenStax CNXML books: ``<book>/collection.xml`` + ``modules/mNNNNN/index.cnxml``.

Public helpers for other components: :class:`CnxmlTable` and :func:`iter_module_tables`
(the medicine database reads the Pharmacology "Drug Prototype Table"s through them).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from medground.corpus.base import BadInputError, ErrorPolicy
from medground.corpus.readers_cnxml import (
    CNXML_NS,
    COLLXML_NS,
    MD_NS,
    SKIP_INLINE,
    CnxmlTable,
    inline_text,
    list_items,
    local,
    parse_table,
)
from medground.corpus.readers_io import parse_xml
from medground.registry import register
from medground.schema import Block, BlockKind, Document, GlossaryTerm, ReviewQuestion

__all__ = ["CnxmlTable", "OpenStaxReader", "iter_module_tables", "parse_cnxml", "read_collection"]

def parse_cnxml(path: Path) -> etree._Element:
    """Parse one CNXML/collection file; malformed XML → BadInputError with the line."""
    return parse_xml(path)


def module_id_of(root: etree._Element, path: Path) -> str:
    found = root.find(f"{{{CNXML_NS}}}metadata/{{{MD_NS}}}content-id")
    if found is not None and found.text and found.text.strip():
        return found.text.strip()
    return path.parent.name


def iter_module_tables(cnxml_path: Path) -> Iterator[CnxmlTable]:
    """Every table of one module, in document order (captions without their source URL)."""
    cnxml_path = Path(cnxml_path)
    root = parse_cnxml(cnxml_path)
    module_id = module_id_of(root, cnxml_path)
    for el in root.iter(f"{{{CNXML_NS}}}table"):
        yield parse_table(el, module_id)


# --- the reader ---------------------------------------------------------------------------

# Section / note classes holding questions: kept as review_questions, never as body text.
QUESTION_CLASSES = frozenset(
    {"review-questions", "critical-thinking", "check-your-understanding", "multiple-choice",
     "free-response", "fill-in-the-blank", "short-answer", "true-false", "matching",
     "personal-application", "interactive-exercise", "practice-problems"}
)
# Bibliography and credits: not body text, not questions.
DROPPED_CLASSES = frozenset({"references", "suggested-reading", "contrib-auth", "sr-contrib-auth"})
_REF_KINDS = {"figure": "figure", "subfigure": "figure", "media": "figure", "table": "table"}


@dataclass(slots=True)
class TocEntry:
    """Where a module sits in the book: the subcollection titles above it, outermost first."""

    module_id: str
    path: tuple[str, ...]

    @property
    def chapter(self) -> str:
        return self.path[-1] if self.path else ""

    @property
    def unit(self) -> str:
        return " > ".join(self.path[:-1])


@dataclass(slots=True)
class BookInfo:
    title: str
    license: str
    toc: list[TocEntry]


def read_collection(path: Path) -> BookInfo:
    """Title, license and module order of one book from its collection.xml."""
    root = parse_cnxml(path)
    meta = root.find(f"{{{COLLXML_NS}}}metadata")
    title = meta.findtext(f"{{{MD_NS}}}title", "").strip() if meta is not None else ""
    lic = meta.find(f"{{{MD_NS}}}license") if meta is not None else None
    license_url = lic.get("url", "") if lic is not None else ""
    content = root.find(f"{{{COLLXML_NS}}}content")
    if content is None:
        raise BadInputError(path, "<collection>", "a <col:content> element", "none")
    toc: list[TocEntry] = []
    _walk_toc(content, (), toc, path)
    return BookInfo(title, license_url, toc)


def _walk_toc(content: etree._Element, path: tuple[str, ...], toc: list[TocEntry], src: Path):
    for child in content:
        name = local(child)
        if name == "module":
            doc = child.get("document")
            if not doc:
                raise BadInputError(src, f"line {child.sourceline}", "<module document=...>", "none")
            toc.append(TocEntry(doc, path))
        elif name == "subcollection":
            title = (child.findtext(f"{{{MD_NS}}}title") or "").strip()
            inner = child.find(f"{{{COLLXML_NS}}}content")
            if inner is not None:
                _walk_toc(inner, (*path, title), toc, src)


@register("reader", "openstax")
class OpenStaxReader:
    """One unit = one book directory; one Document per module (page), in table-of-contents
    order, with book/unit/chapter from collection.xml and the page's sections on each block."""

    name = "openstax"

    def discover(self, root: Path) -> list[Path]:
        root = Path(root)
        if (root / "collection.xml").is_file():
            return [root]
        return sorted(p.parent for p in root.glob("*/collection.xml"))

    def read(self, unit: Path, policy: ErrorPolicy | None = None) -> Iterator[Document]:
        policy = policy or ErrorPolicy()
        unit = Path(unit)
        try:
            book = read_collection(unit / "collection.xml")
        except BadInputError as err:
            policy.handle(err)
            return
        for entry in book.toc:
            path = unit / "modules" / entry.module_id / "index.cnxml"
            try:
                if not path.is_file():
                    raise BadInputError(
                        unit / "collection.xml", f"module {entry.module_id}",
                        f"the page file {path}", "no such file",
                    )
                yield read_module(path, book, entry, unit.name)
            except BadInputError as err:
                policy.handle(err)


def read_module(path: Path, book: BookInfo, entry: TocEntry, book_slug: str) -> Document:
    root = parse_cnxml(path)
    module_id = module_id_of(root, path)
    page = _Page(_ref_map(root))
    content = root.find(f"{{{CNXML_NS}}}content")
    if content is None:
        raise BadInputError(path, "<document>", "a <content> element", "none")
    page.walk(content, ())
    glossary = [
        GlossaryTerm(term, meaning)
        for d in root.iterfind(f"{{{CNXML_NS}}}glossary/{{{CNXML_NS}}}definition")
        if (term := _child_text(d, "term")) and (meaning := _meanings(d))
    ]
    return Document(
        doc_id=f"{book_slug}/{module_id}",
        corpus="openstax",
        source_path=str(path),
        title=(root.findtext(f"{{{CNXML_NS}}}title") or "").strip() or module_id,
        blocks=page.blocks,
        book=book.title,
        unit=entry.unit,
        chapter=entry.chapter,
        glossary=glossary,
        review_questions=page.questions,
        metadata={"module_id": module_id, "book_slug": book_slug, "license": book.license,
                  "toc_path": list(entry.path)},
    )


def _ref_map(root: etree._Element) -> dict[str, str]:
    refs = {}
    for el in root.iter(*(f"{{{CNXML_NS}}}{n}" for n in _REF_KINDS)):
        if el.get("id"):
            refs[el.get("id")] = _REF_KINDS[local(el)]
    return refs


def _child_text(el: etree._Element, name: str) -> str:
    child = el.find(f"{{{CNXML_NS}}}{name}")
    return inline_text(child) if child is not None else ""


def _meanings(definition: etree._Element) -> str:
    return "; ".join(
        t for m in definition.iterfind(f"{{{CNXML_NS}}}meaning") if (t := inline_text(m))
    )


def _classes(el: etree._Element) -> set[str]:
    return set((el.get("class") or "").split())


class _Page:
    """Walks a module's <content>: body blocks with their section path, questions apart."""

    def __init__(self, refs: dict[str, str]):
        self.refs = refs
        self.blocks: list[Block] = []
        self.questions: list[ReviewQuestion] = []

    def text(self, el: etree._Element, *, multiline: bool = False) -> str:
        return inline_text(el, multiline=multiline, refs=self.refs)

    def add(self, kind: BlockKind, text: str, path: tuple[str, ...]) -> None:
        if text:
            self.blocks.append(Block(kind, text, path))

    def walk(self, container: etree._Element, path: tuple[str, ...]) -> None:
        for child in container:
            name = local(child)
            if name in SKIP_INLINE or name in ("title", "label", ""):
                continue
            classes = _classes(child)
            if classes & DROPPED_CLASSES:
                continue
            if classes & QUESTION_CLASSES:
                self.collect_questions(child)
            elif name == "section":
                title = _child_text(child, "title")
                self.walk(child, (*path, title) if title else path)
            elif name == "exercise":
                self.add_exercise(child)
            elif name == "para" or name in ("quote", "equation", "preformat", "code"):
                self.add("paragraph", self.text(child, multiline=True), path)
            elif name == "list":
                self.add("list", self.render_list(child), path)
            elif name == "table":
                self.add("table", parse_table(child, "", refs=self.refs).render(), path)
            elif name == "note":
                self.add_note(child, path)
            else:  # unknown wrapper (div, glossary inside content, ...): look inside
                self.walk(child, path)

    def render_list(self, el: etree._Element) -> str:
        title = _child_text(el, "title")
        lines = [title] if title else []
        lines.extend(f"- {item}" for item in list_items(el, refs=self.refs))
        return "\n".join(lines) if len(lines) > bool(title) else ""

    def add_note(self, note: etree._Element, path: tuple[str, ...]) -> None:
        """A box becomes one "note" block: its title (or label) line, then its content."""
        inner = _Page(self.refs)
        inner.walk(note, ())
        self.questions.extend(inner.questions)
        title = _child_text(note, "title") or _child_text(note, "label")
        parts = [title] if title else []
        parts.extend(b.text for b in inner.blocks)
        if len(parts) > bool(title):
            self.add("note", "\n".join(parts), path)

    def collect_questions(self, el: etree._Element) -> None:
        exercises = list(el.iter(f"{{{CNXML_NS}}}exercise"))
        for ex in exercises:
            self.add_exercise(ex)
        if not exercises:  # e.g. "Check Your Understanding": a plain list of questions
            for lst in el.iter(f"{{{CNXML_NS}}}list"):
                self.questions.extend(ReviewQuestion(q) for q in list_items(lst, refs=self.refs))

    def add_exercise(self, ex: etree._Element) -> None:
        problem = ex.find(f"{{{CNXML_NS}}}problem")
        if problem is None:
            return
        lines: list[str] = []
        options: list[str] = []
        for child in problem:
            name = local(child)
            if name == "list" and child.get("list-type") == "enumerated" and not options:
                options = list_items(child, refs=self.refs)
            elif name == "list":
                lines.append(self.render_list(child))
            elif name == "table":
                lines.append(parse_table(child, "", refs=self.refs).render())
            elif name and name not in SKIP_INLINE and name not in ("title", "label"):
                lines.append(self.text(child, multiline=True))
        question = "\n".join(ln for ln in lines if ln)
        answers = [
            t for sol in ex.iterfind(f"{{{CNXML_NS}}}solution")
            if (t := self.text(sol, multiline=True))
        ]
        if question:
            self.questions.append(ReviewQuestion(question, options, "\n".join(answers) or None))
