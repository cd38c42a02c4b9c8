"""Opening data files for the readers: every file is checked first (filecheck), and a syntax
error becomes a BadInputError naming the file and the line (and column)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lxml import etree

from medground.corpus.base import BadInputError, ErrorPolicy
from medground.corpus.filecheck import check_file

_XML_PARSER = etree.XMLParser(remove_comments=True, resolve_entities=False, no_network=True)


def parse_xml(path: Path) -> etree._Element:
    """Parse an XML file; malformed XML → BadInputError with the line number."""
    check_file(path)
    try:
        return etree.parse(str(path), _XML_PARSER).getroot()
    except etree.XMLSyntaxError as exc:
        line = exc.lineno or (exc.position[0] if exc.position else 0)
        raise BadInputError(path, f"line {line}", "well-formed XML", exc.msg) from None


def load_json(path: Path) -> Any:
    """Load a JSON file; a syntax error names the line and column."""
    check_file(path)
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise BadInputError(
            path, f"line {exc.lineno} column {exc.colno}", "valid JSON", exc.msg
        ) from None


def iter_jsonl(path: Path, policy: ErrorPolicy) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for each non-blank line holding a JSON object."""
    check_file(path)
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line.strip())
                if not isinstance(record, dict):
                    raise BadInputError(path, f"line {lineno}", "a JSON object",
                                        type(record).__name__)
            except json.JSONDecodeError as exc:
                policy.handle(BadInputError(path, f"line {lineno} column {exc.colno}",
                                            "a JSON object", exc.msg))
                continue
            except BadInputError as err:
                policy.handle(err)
                continue
            yield lineno, record
