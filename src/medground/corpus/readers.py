"""Readers for the shared corpora besides OpenStax: MedQuAD, FDA label sections, MedlinePlus
health topics and the PubMedQA abstracts. Generic user formats live in readers_formats.py.

Every reader checks its files (filecheck.check_file) and reports malformed input as a
BadInputError naming the file and the line / record, or skips it under ErrorPolicy(skip=True).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medground.corpus.base import BadInputError, ErrorPolicy
from medground.corpus.filecheck import check_file
from medground.corpus.readers_io import load_json, parse_xml
from medground.corpus.readers_text import clean_text
from medground.registry import register
from medground.schema import Block, Document


def _files(root: Path, pattern: str) -> list[Path]:
    root = Path(root)
    return [root] if root.is_file() else sorted(root.rglob(pattern))


# --- MedQuAD ------------------------------------------------------------------------------

_MEDQUAD_SOURCES = {"MPlusHealthTopics": "MedlinePlus"}
# Most files use <Document>; four NINDS files an older lowercase schema.
_MEDQUAD_SCHEMAS = {
    "Document": {"focus": "Focus", "pairs": "QAPairs/QAPair", "question": "Question",
                 "answer": "Answer", "source": "source"},
    "doc": {"focus": "doctitle-focus", "pairs": "qaPairs/pair", "question": "question",
            "answer": "answer", "source": "corpus"},
}
_MEDQUAD_SCHEMAS["DiseaseFile"] = _MEDQUAD_SCHEMAS["Document"]  # one CDC file


@register("reader", "medquad")
class MedQuADReader:
    """``<n>_<source>/*.xml``: one Document per file (a focus: disease, gene, drug...), one
    "qa" block per answered question, section_path (qtype,)."""

    name = "medquad"

    def discover(self, root: Path) -> list[Path]:
        return _files(root, "*.xml")

    def read(self, unit: Path, policy: ErrorPolicy | None = None) -> Iterator[Document]:
        policy = policy or ErrorPolicy()
        try:
            root = parse_xml(Path(unit))
            schema = _MEDQUAD_SCHEMAS.get(root.tag)
            if schema is None:
                raise BadInputError(unit, f"line {root.sourceline}", "a <Document> root",
                                    f"<{root.tag}>")
        except BadInputError as err:
            policy.handle(err)
            return
        focus = clean_text(root.findtext(schema["focus"]) or "")
        blocks: list[Block] = []
        qtypes: list[str] = []
        empty = 0
        for pair in root.iterfind(schema["pairs"]):
            q_el = pair.find(schema["question"])
            question = clean_text(q_el.text or "") if q_el is not None else ""
            answer = clean_text(pair.findtext(schema["answer"]) or "", multiline=True)
            qtype = q_el.get("qtype", "") if q_el is not None else ""
            if not question or not answer:
                empty += 1
                continue
            qtypes.append(qtype)
            blocks.append(Block("qa", f"Question: {question}\nAnswer: {answer}", (qtype,)))
        source = root.get(schema["source"], "") or Path(unit).parent.name
        yield Document(
            doc_id=f"{Path(unit).parent.name}/{Path(unit).stem}",
            corpus=self.name,
            source_path=str(unit),
            title=focus or Path(unit).stem,
            blocks=blocks,
            book=_MEDQUAD_SOURCES.get(source, source),
            metadata={"focus": focus, "source": source, "qtypes": qtypes,
                      "empty_answers": empty, "collection": Path(unit).parent.name},
        )


# --- FDA label sections (TAC 2017 ADR) ----------------------------------------------------


@register("reader", "fda_labels")
class FdaLabelsReader:
    """JSON list of ``{label_id, section_name, section_text}``: one Document per drug label,
    one block per section in file order, section_path (section_name,)."""

    name = "fda_labels"

    def discover(self, root: Path) -> list[Path]:
        return _files(root, "*.json")

    def read(self, unit: Path, policy: ErrorPolicy | None = None) -> Iterator[Document]:
        policy = policy or ErrorPolicy()
        try:
            records = load_json(Path(unit))
            if not isinstance(records, list):
                raise BadInputError(unit, "top level", "a JSON list of label sections",
                                    type(records).__name__)
        except BadInputError as err:
            policy.handle(err)
            return
        labels: dict[str, list[Block]] = {}
        for i, rec in enumerate(records):
            missing = [k for k in ("label_id", "section_name", "section_text")
                       if not isinstance(rec, dict) or not isinstance(rec.get(k), str)]
            if missing:
                policy.handle(BadInputError(unit, f"record {i}", "string fields label_id, "
                                            "section_name, section_text",
                                            f"missing or not text: {', '.join(missing)}"))
                continue
            text = clean_text(rec["section_text"], multiline=True).replace("\n\n", "\n")
            if text:
                section = rec["section_name"].strip()
                labels.setdefault(rec["label_id"].strip(), []).append(
                    Block("paragraph", text, (section,))
                )
        for label_id, blocks in labels.items():
            yield Document(
                doc_id=label_id,
                corpus=self.name,
                source_path=str(unit),
                title=label_id,
                blocks=blocks,
                book="FDA drug labels",
                metadata={"label_id": label_id,
                          "sections": [b.section_path[0] for b in blocks]},
            )


# --- MedlinePlus health topics ------------------------------------------------------------


@register("reader", "medlineplus")
class MedlinePlusReader:
    """CSV ``id,title,also_called,summary,url``: one Document per topic (URL dropped)."""

    name = "medlineplus"
    required = ("id", "title", "summary")

    def discover(self, root: Path) -> list[Path]:
        return _files(root, "*.csv")

    def read(self, unit: Path, policy: ErrorPolicy | None = None) -> Iterator[Document]:
        policy = policy or ErrorPolicy()
        try:
            check_file(unit)
        except BadInputError as err:
            policy.handle(err)
            return
        with open(unit, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in self.required if c not in (reader.fieldnames or [])]
            if missing:
                policy.handle(BadInputError(unit, "line 1 (header)",
                                            f"columns {', '.join(self.required)}",
                                            f"columns {reader.fieldnames}"))
                return
            while True:
                try:
                    row = next(reader)
                except StopIteration:
                    return
                except csv.Error as exc:
                    policy.handle(BadInputError(unit, f"line {reader.line_num}", "valid CSV",
                                                str(exc)))
                    continue
                doc = self._document(unit, row, reader.line_num, policy)
                if doc is not None:
                    yield doc

    def _document(self, unit: Path, row: dict[str, Any], line: int,
                  policy: ErrorPolicy) -> Document | None:
        title = clean_text(row.get("title") or "")
        summary = clean_text(row.get("summary") or "")
        if not row.get("id") or not title or not summary:
            policy.handle(BadInputError(unit, f"line {line}", "id, title and summary",
                                        "an empty field"))
            return None
        also = [a.strip() for a in (row.get("also_called") or "").split(",") if a.strip()]
        return Document(
            doc_id=row["id"].strip(),
            corpus=self.name,
            source_path=str(unit),
            title=title,
            blocks=[Block("paragraph", summary, ())],
            book="MedlinePlus",
            metadata={"topic_id": row["id"].strip(), "also_called": also},
        )


# --- PubMedQA abstracts --------------------------------------------------------------------


@register("reader", "pubmedqa")
class PubMedQAReader:
    """``ori_pqal.json``: one Document per PMID, one block per abstract part labelled by its
    section (BACKGROUND, METHODS...). The question is never used as the title: it would leak
    the query into the index."""

    name = "pubmedqa"

    def discover(self, root: Path) -> list[Path]:
        root = Path(root)
        if root.is_file():
            return [root]
        return sorted(root.rglob("ori_pqal.json"))

    def read(self, unit: Path, policy: ErrorPolicy | None = None) -> Iterator[Document]:
        policy = policy or ErrorPolicy()
        try:
            data = load_json(Path(unit))
            if not isinstance(data, dict):
                raise BadInputError(unit, "top level", "an object keyed by PMID",
                                    type(data).__name__)
        except BadInputError as err:
            policy.handle(err)
            return
        for pmid, item in data.items():
            contexts = item.get("CONTEXTS") if isinstance(item, dict) else None
            if not isinstance(contexts, list) or not contexts:
                policy.handle(BadInputError(unit, f"PMID {pmid}", "a non-empty CONTEXTS list",
                                            repr(contexts)[:40]))
                continue
            labels = item.get("LABELS") or []
            blocks = [
                Block("paragraph", text, (str(labels[i]).title(),) if i < len(labels) else ())
                for i, ctx in enumerate(contexts)
                if (text := clean_text(str(ctx)))
            ]
            yield Document(
                doc_id=str(pmid),
                corpus=self.name,
                source_path=str(unit),
                title=f"PubMed {pmid}",
                blocks=blocks,
                book="PubMed",
                metadata={"pmid": str(pmid), "meshes": list(item.get("MESHES") or []),
                          "year": item.get("YEAR", "")},
            )


# The generic formats register themselves on import.
from medground.corpus import readers_formats as _formats  # noqa: F401
