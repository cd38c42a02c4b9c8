"""Parsers from benchmark file formats into ``schema.Question``.

Each parser takes a path, a dataset name and an ``ErrorPolicy``: a bad record raises a
``BadInputError`` naming file and line (or record index), or is listed and skipped.
Gold answers are always option letters for multiple choice, never option text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medground.corpus.base import BadInputError, ErrorPolicy
from medground.schema import Question

LETTERS = "ABCDEFGHIJ"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInputError(path, "file", "an existing file", "nothing") from None
    except json.JSONDecodeError as exc:
        raise BadInputError(path, f"line {exc.lineno}", "valid JSON", exc.msg) from None


def _iter_jsonl(path: Path, policy: ErrorPolicy) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line number, object) per non-empty line; a JSON *list* file is accepted too."""
    if not path.is_file():
        raise BadInputError(path, "file", "an existing file", "nothing")
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        for i, obj in enumerate(_read_json(path)):
            yield i + 1, obj
        return
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            policy.handle(BadInputError(path, f"line {lineno}", "one JSON object per line", exc.msg))
            continue
        yield lineno, obj


def _check_mc(path: Path, where: str, question: Any, options: Any, answer: Any) -> None:
    if not isinstance(question, str) or not question.strip():
        raise BadInputError(path, where, "a non-empty 'question' string", repr(question)[:60])
    if not isinstance(options, dict) or len(options) < 2:
        raise BadInputError(path, where, "'options' as a mapping of at least two letters", repr(options)[:60])
    if answer not in options:
        raise BadInputError(path, where, f"a gold letter among {sorted(options)}", repr(answer))


def _dedupe_ids(path: Path, questions: list[Question]) -> list[Question]:
    seen: set[str] = set()
    for q in questions:
        if q.qid in seen:
            raise BadInputError(path, f"question {q.qid}", "unique question ids", "a duplicate")
        seen.add(q.qid)
    return questions


def load_mirage(path: Path, dataset: str, policy: ErrorPolicy, *, sub: str) -> list[Question]:
    """MIRAGE ``benchmark.json``: {sub-dataset: {qid: {question, options, answer}}}."""
    data = _read_json(path)
    if not isinstance(data, dict) or sub not in data:
        found = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise BadInputError(path, "top level", f"a mapping holding sub-dataset {sub!r}", str(found))
    out = []
    for qid, item in data[sub].items():
        where = f"{sub}/{qid}"
        try:
            if not isinstance(item, dict):
                raise BadInputError(path, where, "an object", type(item).__name__)
            _check_mc(path, where, item.get("question"), item.get("options"), item.get("answer"))
        except BadInputError as err:
            policy.handle(err)
            continue
        out.append(Question(qid=str(qid), dataset=dataset, question=item["question"],
                            options=dict(item["options"]), answer=item["answer"]))
    return _dedupe_ids(path, out)


def load_medqa_jsonl(path: Path, dataset: str, policy: ErrorPolicy, *, split_context: bool = False) -> list[Question]:
    """MedQA-US / MedAgents JSONL: {question, options{A..}, answer_idx[, meta_info, subject, realidx]}.

    ``split_context``: the last line of ``question`` is the question, the lines before it its
    context (MedAgents' PubMedQA puts the abstract in front of the question).
    """
    out = []
    for lineno, obj in _iter_jsonl(path, policy):
        where = f"line {lineno}"
        try:
            if not isinstance(obj, dict):
                raise BadInputError(path, where, "a JSON object", type(obj).__name__)
            _check_mc(path, where, obj.get("question"), obj.get("options"), obj.get("answer_idx"))
        except BadInputError as err:
            policy.handle(err)
            continue
        text, context = obj["question"].strip(), ""
        if split_context and "\n" in text:
            context, text = text.rsplit("\n", 1)
        meta = {k: obj[k] for k in ("meta_info", "subject", "answer_rationale") if k in obj}
        if "answer" in obj:
            meta["answer_text"] = obj["answer"]
        qid = str(obj["realidx"]) if "realidx" in obj else f"{lineno - 1:04d}"
        out.append(Question(qid=qid, dataset=dataset, question=text, options=dict(obj["options"]),
                            answer=obj["answer_idx"], context=context, metadata=meta))
    return _dedupe_ids(path, out)


def load_medmcqa(path: Path, dataset: str, policy: ErrorPolicy, *, cop_base: int = 1) -> list[Question]:
    """MedMCQA: {id, question, opa..opd, cop[, subject_name, topic_name, exp]}.

    The official release numbers ``cop`` 1..4; the Hugging Face export numbers it 0..3
    (``cop_base=0``). A cop outside the range is an error, never a guessed letter.
    """
    out = []
    for lineno, obj in _iter_jsonl(path, policy):
        where = f"line {lineno}"
        try:
            if not isinstance(obj, dict):
                raise BadInputError(path, where, "a JSON object", type(obj).__name__)
            options = {LETTERS[i]: obj.get(f"op{c}") for i, c in enumerate("abcd")}
            if not all(isinstance(v, str) for v in options.values()):
                raise BadInputError(path, where, "string options opa..opd", repr(options)[:80])
            cop = obj.get("cop")
            if not isinstance(cop, int) or not cop_base <= cop < cop_base + 4:
                hint = " (the official files are 1-based, the HF export 0-based: format medmcqa-hf)"
                raise BadInputError(path, where, f"'cop' an integer {cop_base}..{cop_base + 3}{hint}", repr(cop))
            _check_mc(path, where, obj.get("question"), options, LETTERS[cop - cop_base])
        except BadInputError as err:
            policy.handle(err)
            continue
        meta = {k: obj[k] for k in ("subject_name", "topic_name", "choice_type", "exp") if obj.get(k)}
        out.append(Question(qid=str(obj.get("id", lineno)), dataset=dataset, question=obj["question"],
                            options=options, answer=LETTERS[cop - cop_base], metadata=meta))
    return _dedupe_ids(path, out)


PUBMEDQA_OPTIONS = {"A": "yes", "B": "no", "C": "maybe"}


def load_pubmedqa_pqal(path: Path, dataset: str, split: str, policy: ErrorPolicy) -> list[Question]:
    """PubMedQA ``ori_pqal.json`` with abstracts as context; test ids from the file beside it.

    split: ``test`` (the official 500 in test_ground_truth.json), ``train`` (the other 500) or ``all``.
    """
    data = _read_json(path)
    test_ids: set[str] | None = None
    if split != "all":
        gt = path.with_name("test_ground_truth.json")
        test_ids = set(_read_json(gt))
    letter = {v: k for k, v in PUBMEDQA_OPTIONS.items()}
    out = []
    for pmid, item in data.items():
        if test_ids is not None and ((pmid in test_ids) != (split == "test")):
            continue
        where = f"record {pmid}"
        try:
            if not isinstance(item.get("CONTEXTS"), list) or item.get("final_decision") not in letter:
                raise BadInputError(path, where, "CONTEXTS (list) and final_decision yes/no/maybe",
                                    repr(item.get("final_decision")))
        except BadInputError as err:
            policy.handle(err)
            continue
        labels = item.get("LABELS") or [""] * len(item["CONTEXTS"])
        context = "\n".join(f"{lab.title()}: {txt}" if lab else txt for lab, txt in zip(labels, item["CONTEXTS"]))
        out.append(Question(qid=pmid, dataset=dataset, question=item["QUESTION"], options=dict(PUBMEDQA_OPTIONS),
                            answer=letter[item["final_decision"]], context=context,
                            metadata={"long_answer": item.get("LONG_ANSWER", ""), "meshes": item.get("MESHES", []),
                                      "year": item.get("YEAR")}))
    if test_ids is not None and split == "test" and len(out) != len(test_ids):
        missing = sorted(test_ids - {q.qid for q in out})[:5]
        policy.handle(BadInputError(path, "test split", "every id of test_ground_truth.json", f"missing {missing}"))
    return out


def load_cnmleqa(path: Path, dataset: str, policy: ErrorPolicy) -> list[Question]:
    """CNMLEQA: a JSON list of {id, question, opa..ope, answer: "opX", ...tags}."""
    data = _read_json(path)
    if not isinstance(data, list):
        raise BadInputError(path, "top level", "a JSON list", type(data).__name__)
    keys = ("opa", "opb", "opc", "opd", "ope")
    tags = ("year", "question_type", "source", "disease or diagnosis", "medication")
    out = []
    for i, obj in enumerate(data):
        where = f"record {i}"
        try:
            options = {LETTERS[j]: obj[k] for j, k in enumerate(keys) if obj.get(k) not in (None, "")}
            ans = obj.get("answer")
            gold = LETTERS[keys.index(ans)] if ans in keys else None
            _check_mc(path, where, obj.get("question"), options, gold)
        except BadInputError as err:
            policy.handle(err)
            continue
        out.append(Question(qid=str(obj.get("id", i)), dataset=dataset, question=obj["question"],
                            options=options, answer=gold, metadata={k: obj[k] for k in tags if k in obj}))
    return _dedupe_ids(path, out)


_DOC_START = re.compile(r"(?m)^\[(\d+)\]")


def parse_medicineqa_prompt(prompt: str) -> tuple[list[dict[str, Any]], str]:
    """Split a MedicineQA prompt into its gold drug documents and the dialogue.

    Documents look like ``[n]drug name\\nattribute:text`` between ``文档：`` and ``聊天记录:``.
    """
    start, chat = prompt.find("文档："), prompt.find("聊天记录")
    if start < 0 or chat < 0:
        raise ValueError("expected the sections '文档：' and '聊天记录:'")
    docs_text = prompt[start + 3:chat]
    dialogue = prompt[chat:].split("\n", 1)[1].strip() if "\n" in prompt[chat:] else ""
    docs = []
    marks = list(_DOC_START.finditer(docs_text))
    for m, nxt in zip(marks, marks[1:] + [None]):
        body = docs_text[m.end():nxt.start() if nxt else len(docs_text)].strip()
        drug, _, rest = body.partition("\n")
        attr_match = re.match(r"([^:：\n]{1,20})[:：]", rest)
        attribute = attr_match.group(1).strip() if attr_match else ""
        text = rest[attr_match.end():].strip() if attr_match else rest.strip()
        docs.append({"number": int(m.group(1)), "drug": drug.strip(), "attribute": attribute, "text": text})
    return docs, dialogue


def load_medicineqa(path: Path, dataset: str, policy: ErrorPolicy) -> list[Question]:
    """MedicineQA_RAG.jsonl: free-text consultation; gold drug documents go to metadata."""
    out = []
    for lineno, obj in _iter_jsonl(path, policy):
        try:
            docs, dialogue = parse_medicineqa_prompt(obj.get("question", ""))
            if not dialogue:
                raise ValueError("an empty dialogue")
        except ValueError as exc:
            policy.handle(BadInputError(path, f"line {lineno}", "a MedicineQA prompt", str(exc)))
            continue
        # The last user turn is the question; the whole dialogue is its context.
        turns = [t for t in dialogue.splitlines() if t.strip()]
        last_user = next((t for t in reversed(turns) if t.startswith("用户")), turns[-1])
        question = re.sub(r"^用户[:：]\s*", "", last_user)
        out.append(Question(
            qid=f"{lineno - 1:03d}", dataset=dataset, question=question, answer=obj.get("reference_answer") or None,
            context=dialogue,
            metadata={"gold_documents": docs, "gold_drugs": sorted({d["drug"] for d in docs}),
                      "gold_attributes": [list(p) for p in sorted({(d["drug"], d["attribute"]) for d in docs})]}))
    return out


def load_medication_qa(path: Path, dataset: str, policy: ErrorPolicy) -> list[Question]:
    """MedInfo2019 Medication QA xlsx: Question, Focus (Drug), Question Type, Answer, Section Title, URL."""
    import openpyxl

    if not path.is_file():
        raise BadInputError(path, "file", "an existing file", "nothing")
    wb = openpyxl.load_workbook(path, read_only=True)
    try:
        rows = list(wb.worksheets[0].iter_rows(values_only=True))
    finally:
        wb.close()
    want = ["Question", "Focus (Drug)", "Question Type", "Answer", "Section Title", "URL"]
    header = [str(c).strip() if c is not None else "" for c in rows[0]] if rows else []
    if header[: len(want)] != want:
        raise BadInputError(path, "row 1", f"the header {want}", str(header))
    out = []
    for rowno, row in enumerate(rows[1:], 2):
        question, focus, qtype, answer, section, url = (row + (None,) * 6)[:6]
        if not question or not str(question).strip():
            policy.handle(BadInputError(path, f"row {rowno}", "a non-empty Question", repr(question)))
            continue
        out.append(Question(qid=f"{rowno - 2:03d}", dataset=dataset, question=str(question).strip(),
                            answer=str(answer).strip() if answer else None,
                            metadata={"focus_drug": focus or "", "question_type": qtype or "",
                                      "section": section or "", "url": url or ""}))
    return out
