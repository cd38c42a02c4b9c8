"""The consultation typer's labelled questions (reading/consult_typer.py): Medication QA's, and
written consumer questions as extra training text.

Medication QA's 491 development questions bound the typer: they are single sentences, mostly
well formed, with 9 contraindications questions and no pregnancy class. The banks
(benchmarks/data/typer_bank.jsonl, typer_bank2.jsonl and typer_bank3.jsonl, by three writers; how each was written is in
benchmarks/data/consult_written.md) hold questions labelled by what their last question asks, in the voices Medication QA lacks:
context before the question, lay and misspelt wording, carers, comparisons that name a second drug.

Its labels are the typer's classes (attribute type values and ``none``). A class the medicine
database never fills (``special_populations``: no source section is stored under it) is dropped,
or read as another class (``special_as``), because the typer can only send a question to an
entry the database holds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from medground.drug_schema import AttributeType
from medground.reading.consult_typer import NONE, mask_names

LABELS = frozenset({*(t.value for t in AttributeType), NONE})


@dataclass(frozen=True, slots=True)
class BankItem:
    item_id: str
    text: str
    label: str
    style: str


def load_relabels(path: Path) -> dict[str, str]:
    """A bank relabelling file: ``{"why": …, "relabels": {item id: new label}}``. The writers'
    files stay as written; a label the project changed afterwards, and why, is kept here."""
    try:
        table = json.loads(Path(path).read_text(encoding="utf-8"))["relabels"]
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: expected a JSON object with a 'relabels' object of id -> label ({err})") from err
    bad = {k: v for k, v in table.items() if v not in LABELS}
    if bad:
        raise ValueError(f"{path}: labels {sorted(set(bad.values()))} are none of {sorted(LABELS)}")
    return dict(table)


def load_bank(path: Path, relabels: dict[str, str] | None = None) -> list[BankItem]:
    """Every line a JSON object with ``id``, ``text``, ``label`` (a typer class) and ``style``;
    a bad line is reported with its file and line number. ``relabels``: item id → the label to
    train on instead of the writer's (:func:`load_relabels`)."""
    items: list[BankItem] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            item = BankItem(str(row["id"]), str(row["text"]).strip(), str(row["label"]), str(row.get("style", "")))
        except (json.JSONDecodeError, KeyError, TypeError) as err:
            raise ValueError(f"{path}:{number}: expected a JSON object with id, text and label ({err})") from err
        if item.label not in LABELS:
            raise ValueError(f"{path}:{number}: label {item.label!r} is none of {sorted(LABELS)}")
        if not item.text:
            raise ValueError(f"{path}:{number}: empty text")
        if relabels and item.item_id in relabels:
            item = BankItem(item.item_id, item.text, relabels[item.item_id], item.style)
        items.append(item)
    return items


def training_pairs(items: Sequence[BankItem], drug_names: Sequence[str], *, special_as: str | None = None
                   ) -> tuple[list[str], list[str]]:
    """(texts, labels) to train on: each drug name of the database in a text read "this medicine",
    as the typer reads a consultation; ``special_populations`` dropped or read as ``special_as``."""
    names = [n for n in drug_names if len(n) > 2]
    texts, labels = [], []
    for item in items:
        label = item.label
        if label == AttributeType.SPECIAL_POPULATIONS.value:
            if special_as is None:
                continue
            label = special_as
        lowered = item.text.lower()
        texts.append(mask_names(item.text, [n for n in names if n.lower() in lowered]))
        labels.append(label)
    return texts, labels


def medication_qa_questions(split: str) -> tuple[list[str], list[str], list[str]]:
    """Medication QA's labelled questions of one split (reading/splits.py): as asked, with the focus
    drug (and each word of its name) read "this medicine", and their typer labels."""
    from medground.eval.datasets import load_dataset
    from medground.reading.consult_typer import label_of
    from medground.reading.splits import medication_qa_split

    plain, masked, labels = [], [], []
    for q in load_dataset("medication-qa"):
        label = label_of(q.metadata["question_type"])
        if label is None or medication_qa_split(q.qid) != split:
            continue
        focus = q.metadata.get("focus_drug") or ""
        plain.append(q.question)
        masked.append(mask_names(q.question, [focus, *focus.split()]))
        labels.append(label)
    return plain, masked, labels
