"""Readers for public formats users bring: MedQA textbooks, MedRAG chunk JSONL, generic JSONL,
Markdown and plain text. (Imported by readers.py, which registers them.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medground.corpus.base import BadInputError, ErrorPolicy
from medground.corpus.filecheck import check_file
from medground.corpus.readers_io import iter_jsonl
from medground.corpus.readers_text import clean_text
from medground.registry import register
from medground.schema import Block, BlockKind, Document

_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def _read_text(path: Path, policy: ErrorPolicy) -> str | None:
    try:
        check_file(path)
        return Path(path).read_text(encoding="utf-8")
    except BadInputError as err:
        policy.handle(err)
        return None


def split_paragraphs(text: str) -> list[str]:
    """Paragraphs separated by blank lines (hard-wrapped lines joined). A file without any
    blank line holds one paragraph per line, as the MedQA textbooks do."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    parts = _BLANK_LINE.split(text) if _BLANK_LINE.search(text) else text.split("\n")
    return [p for part in parts if (p := clean_text(part))]


def _files(root: Path, *patterns: str) -> list[Path]:
    root = Path(root)
    if root.is_file():
        return [root]
    return sorted({p for pat in patterns for p in root.rglob(pat)})


class _TextFileReader:
    """One Document per text file, one paragraph block per blank-line-separated paragraph."""

    name = "text"
    patterns: tuple[str, ...] = ("*.txt",)

    def discover(self, root: Path) -> list[Path]:
        return _files(root, *self.patterns)

    def read(self, unit: Path, policy: ErrorPolicy | None = None) -> Iterator[Document]:
        policy = policy or ErrorPolicy()
        text = _read_text(Path(unit), policy)
        if text is None:
            return
        unit = Path(unit)
        yield Document(
            doc_id=unit.stem,
            corpus=self.name,
            source_path=str(unit),
            title=unit.stem,
            blocks=[Block("paragraph", p) for p in split_paragraphs(text)],
            book=self.book_of(unit),
        )

    def book_of(self, unit: Path) -> str:
        return ""


@register("reader", "text")
class TextReader(_TextFileReader):
    name = "text"


@register("reader", "medqa_textbooks")
class MedQATextbooksReader(_TextFileReader):
    """MedQA ``textbooks/en/*.txt`` (e.g. Harrison's): book = file stem."""

    name = "medqa_textbooks"

    def discover(self, root: Path) -> list[Path]:
        root = Path(root)
        for sub in (root / "textbooks" / "en", root / "en", root):
            if sub.is_dir() and any(sub.glob("*.txt")):
                return sorted(sub.glob("*.txt"))
        return [root] if root.is_file() else []

    def book_of(self, unit: Path) -> str:
        return unit.stem


# --- JSONL ----------------------------------------------------------------------------------


def _text_field(record: dict[str, Any], path: Path, lineno: int) -> str:
    for key in ("text", "content", "contents"):
        if isinstance(record.get(key), str):
            return record[key]
    raise BadInputError(path, f"line {lineno}", "a string field 'text' or 'content'",
                        f"keys {sorted(record)}")


def _section_path(value: Any) -> tuple[str, ...]:
    if isinstance(value, list | tuple):
        return tuple(str(v).strip() for v in value if str(v).strip())
    if isinstance(value, str) and value.strip():
        return tuple(s.strip() for s in value.split(" > ") if s.strip())
    return ()


@register("reader", "jsonl")
class JsonlReader:
    """Generic JSONL: ``{id?, doc_id?, title?, text|content, section?, book?, chapter?, ...}``.
    Records sharing ``doc_id`` (else ``title``) form one Document, one block per record; a
    ``section`` (string "A > B" or list) becomes the block's section path; other fields go to
    metadata."""

    name = "jsonl"
    _known = frozenset({"id", "doc_id", "title", "text", "content", "contents", "section",
                        "book", "chapter"})

    def discover(self, root: Path) -> list[Path]:
        return _files(root, "*.jsonl")

    def read(self, unit: Path, policy: ErrorPolicy | None = None) -> Iterator[Document]:
        policy = policy or ErrorPolicy()
        unit = Path(unit)
        docs: dict[str, Document] = {}
        try:
            records = list(iter_jsonl(unit, policy))
        except BadInputError as err:
            policy.handle(err)
            return
        for lineno, rec in records:
            try:
                text = clean_text(_text_field(rec, unit, lineno), multiline=True)
            except BadInputError as err:
                policy.handle(err)
                continue
            key = str(rec.get("doc_id") or rec.get("title") or rec.get("id") or lineno)
            doc = docs.get(key)
            if doc is None:
                doc = docs[key] = self._new_doc(unit, key, rec)
            doc.metadata.setdefault("record_ids", []).append(rec.get("id", lineno))
            if text:
                doc.blocks.append(Block("paragraph", text, _section_path(rec.get("section"))))
        yield from docs.values()

    def _new_doc(self, unit: Path, key: str, rec: dict[str, Any]) -> Document:
        extra = {k: v for k, v in rec.items() if k not in self._known}
        return Document(
            doc_id=f"{unit.stem}/{key}",
            corpus=self.name,
            source_path=str(unit),
            title=str(rec.get("title") or key),
            blocks=[],
            book=str(rec.get("book") or ""),
            chapter=str(rec.get("chapter") or ""),
            metadata=extra,
        )


@register("reader", "medrag_jsonl")
class MedRAGJsonlReader(JsonlReader):
    """MedRAG corpus chunks ``{id, title, content}`` (StatPearls, textbooks, PubMed...):
    chunks with the same title form one Document; book = file stem; chunk ids in
    metadata["record_ids"], aligned with the blocks."""

    name = "medrag_jsonl"

    def _new_doc(self, unit: Path, key: str, rec: dict[str, Any]) -> Document:
        doc = super()._new_doc(unit, key, rec)
        doc.book = doc.book or unit.stem
        return doc

    def read(self, unit: Path, policy: ErrorPolicy | None = None) -> Iterator[Document]:
        for doc in super().read(unit, policy):
            doc.metadata["chunk_ids"] = doc.metadata.pop("record_ids", [])
            yield doc


# --- Markdown -------------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_MD_INLINE = re.compile(r"!\[[^\]]*\]\([^)]*\)|\[([^\]]*)\]\([^)]*\)|[*_`]{1,3}")


def _md_inline(s: str) -> str:
    """Markdown inline markup to text: images dropped, links to their text, emphasis off."""
    return clean_text(_MD_INLINE.sub(lambda m: m.group(1) or "", s))


@register("reader", "markdown")
class MarkdownReader:
    """Markdown files: the first ``#`` heading is the title, deeper headings the section path;
    paragraphs, "- item" lists and pipe tables ("Header: value; ...") become blocks."""

    name = "markdown"

    def discover(self, root: Path) -> list[Path]:
        return _files(root, "*.md", "*.markdown")

    def read(self, unit: Path, policy: ErrorPolicy | None = None) -> Iterator[Document]:
        policy = policy or ErrorPolicy()
        unit = Path(unit)
        text = _read_text(unit, policy)
        if text is None:
            return
        title, blocks = parse_markdown(text)
        yield Document(doc_id=unit.stem, corpus=self.name, source_path=str(unit),
                       title=title or unit.stem, blocks=blocks)


def parse_markdown(text: str) -> tuple[str, list[Block]]:
    title = ""
    path: list[tuple[int, str]] = []  # (heading level, title) from the top down
    blocks: list[Block] = []
    pending: list[str] = []
    in_fence = False

    def flush() -> None:
        if pending:
            _add_md_block(pending, tuple(t for _, t in path), blocks)
            pending.clear()

    for line in text.replace("\r\n", "\n").split("\n"):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        heading = None if in_fence else _HEADING.match(line)
        if heading:
            flush()
            level, name = len(heading.group(1)), _md_inline(heading.group(2))
            if level == 1 and not title and not blocks:
                title = name
                continue
            path = [(lv, t) for lv, t in path if lv < level] + [(level, name)]
        elif not line.strip():
            flush()
        else:
            pending.append(line)
    flush()
    return title, blocks


def _add_md_block(lines: list[str], path: tuple[str, ...], blocks: list[Block]) -> None:
    kind: BlockKind
    if len(lines) >= 2 and "|" in lines[0] and _TABLE_RULE.match(lines[1]):
        kind, text = "table", _md_table(lines)
    elif all(_LIST_ITEM.match(ln) or ln.startswith((" ", "\t")) for ln in lines) and \
            _LIST_ITEM.match(lines[0]):
        items: list[str] = []
        for ln in lines:
            m = _LIST_ITEM.match(ln)
            if m:
                items.append(_md_inline(m.group(1)))
            else:  # continuation of the previous item
                items[-1] = f"{items[-1]} {_md_inline(ln)}"
        kind, text = "list", "\n".join(f"- {i}" for i in items if i)
    else:
        kind, text = "paragraph", _md_inline(" ".join(lines))
    if text:
        blocks.append(Block(kind, text, path))


def _md_table(lines: list[str]) -> str:
    def cells(line: str) -> list[str]:
        return [_md_inline(c) for c in line.strip().strip("|").split("|")]

    header = cells(lines[0])
    out = []
    for line in lines[2:]:
        row = cells(line)
        parts = [f"{header[i]}: {v}" if i < len(header) and header[i] else v
                 for i, v in enumerate(row) if v]
        if parts:
            out.append("; ".join(parts))
    return "\n".join(out)
