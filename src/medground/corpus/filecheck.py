"""Cheap checks that a data file is really there and readable before a reader parses it.

Catches the usual ways a data checkout goes wrong: Git LFS pointers instead of content, empty
or truncated files, wrong encodings.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from medground.corpus.base import BadInputError

LFS_PREFIX = b"version https://git-lfs"
TEXT_SUFFIXES = frozenset(
    {".xml", ".cnxml", ".json", ".jsonl", ".csv", ".tsv", ".txt", ".md", ".markdown", ".yaml",
     ".yml", ".html"}
)
_TAIL_BYTES = 4096


@dataclass(slots=True)
class FileProblem:
    path: str
    problem: str


def check_file(path: str | Path) -> None:
    """Raise BadInputError if ``path`` is missing, empty, an LFS pointer, not UTF-8 (text
    formats) or visibly truncated (XML without a closing root tag, JSON not closed)."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise BadInputError(p, "file", "a readable file", exc.strerror or str(exc)) from None
    if size == 0:
        raise BadInputError(p, "file", "content", "an empty file")
    suffix = p.suffix.lower()
    with open(p, "rb") as fh:
        head = fh.read(len(LFS_PREFIX))
        if head.startswith(LFS_PREFIX):
            raise BadInputError(
                p, "line 1", "file content",
                "a Git LFS pointer (run `git lfs pull` in the data checkout)",
            )
        if suffix not in TEXT_SUFFIXES:
            return
        fh.seek(0)
        start = fh.read(4096)
        fh.seek(max(0, size - _TAIL_BYTES))
        tail = fh.read()
    _check_utf8(p, size)
    _check_started(p, suffix, start)
    _check_terminated(p, suffix, tail)


def _check_started(p: Path, suffix: str, start: bytes) -> None:
    """A file that does not even begin like its format is not 'truncated': say what it is."""
    first = start.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if suffix in (".xml", ".cnxml") and first != b"<":
        raise BadInputError(p, "line 1", "XML (a document starting with '<')", f"text starting {_preview(start)}")
    if suffix in (".json", ".jsonl") and first not in (b"{", b"["):
        raise BadInputError(p, "line 1", "JSON (starting with '{' or '[')", f"text starting {_preview(start)}")


def _preview(start: bytes) -> str:
    text = start.decode("utf-8", "replace").strip().splitlines()[0] if start.strip() else ""
    return repr(text[:40])


def _check_utf8(p: Path, size: int) -> None:
    # Decode incrementally: data files can be tens of MB and need not be held twice.
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    line = 1
    with open(p, "rb") as fh:
        while chunk := fh.read(1 << 20):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                line += chunk.count(b"\n", 0, exc.start)
                raise BadInputError(
                    p, f"line {line} (byte {offset + exc.start})", "UTF-8 text",
                    f"byte 0x{chunk[exc.start]:02x}",
                ) from None
            line += chunk.count(b"\n")
            offset += len(chunk)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise BadInputError(p, f"byte {size}", "UTF-8 text", "a cut-off character") from None


def _check_terminated(p: Path, suffix: str, tail: bytes) -> None:
    end = tail.rstrip()
    if suffix in (".xml", ".cnxml") and not end.endswith(b">"):
        raise BadInputError(p, "end of file", "a closing XML tag", "truncated content")
    if suffix == ".json" and not end.endswith((b"}", b"]")):
        raise BadInputError(p, "end of file", "a closing '}' or ']'", "truncated JSON")
    if suffix == ".jsonl":
        last = end.rsplit(b"\n", 1)[-1]
        if last and not last.endswith((b"}", b"]")):
            raise BadInputError(p, "last line", "a complete JSON record", "truncated line")


def verify_tree(root: str | Path) -> list[FileProblem]:
    """Check every data file under ``root`` (hidden files and SOURCE/LICENSE notes skipped)."""
    problems: list[FileProblem] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(dirpath) / name
            try:
                check_file(path)
            except BadInputError as exc:
                problems.append(FileProblem(str(path), str(exc)))
    return problems
