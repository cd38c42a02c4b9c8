"""The written question bank for the consultation typer: its loader, what training reads of it,
and the shipped file's shape."""

import json
from collections import Counter
from pathlib import Path

import pytest

from medground.train.typer_bank import LABELS, load_bank, training_pairs

BANK = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "typer_bank.jsonl"


def test_a_bad_line_is_named_with_its_file_and_line(tmp_path):
    path = tmp_path / "bank.jsonl"
    path.write_text('{"id": "a", "text": "what is it for?", "label": "indications"}\n{"id": "b", "text": "x"}\n')
    with pytest.raises(ValueError, match=r"bank.jsonl:2: expected a JSON object with id, text and label"):
        load_bank(path)
    path.write_text('{"id": "a", "text": "what is it for?", "label": "uses"}\n')
    with pytest.raises(ValueError, match=r"bank.jsonl:1: label 'uses' is none of"):
        load_bank(path)


def test_drug_names_read_this_medicine_and_special_populations_are_dropped_or_renamed(tmp_path):
    path = tmp_path / "bank.jsonl"
    rows = [{"id": "1", "text": "Can I take Advil with my Lisinopril?", "label": "interactions"},
            {"id": "2", "text": "Is lisinopril safe while breastfeeding?", "label": "special_populations"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    items = load_bank(path)
    texts, labels = training_pairs(items, ["lisinopril", "advil", "it"])
    assert texts == ["Can I take this medicine with my this medicine?"] and labels == ["interactions"]
    texts, labels = training_pairs(items, ["lisinopril"], special_as="contraindications")
    assert labels == ["interactions", "contraindications"]
    assert texts[1] == "Is this medicine safe while breastfeeding?"


def test_the_shipped_bank_holds_every_class_evenly():
    items = load_bank(BANK)
    assert len({i.item_id for i in items}) == len(items) == 600
    counts = Counter(i.label for i in items)
    assert set(counts) == LABELS - {"boxed_warning"} and set(counts.values()) == {50}


def test_a_shipped_typer_is_named_by_its_file_name(tmp_path):
    from medground.reading.consult_typer import MODEL_PATH, model_path

    assert model_path(None) == MODEL_PATH
    assert model_path("consult_typer_s28.npz") == MODEL_PATH.parent / "consult_typer_s28.npz"
    assert model_path(str(tmp_path / "mine.npz")) == tmp_path / "mine.npz"


def test_the_second_bank_holds_every_class_but_special_populations_evenly():
    items = load_bank(BANK.with_name("typer_bank2.jsonl"))
    assert len({i.item_id for i in items}) == len(items) == 550
    counts = Counter(i.label for i in items)
    assert set(counts) == LABELS - {"boxed_warning", "special_populations"} and set(counts.values()) == {50}


def test_the_third_bank_holds_every_class_but_special_populations_evenly():
    items = load_bank(BANK.with_name("typer_bank3.jsonl"))
    assert len({i.item_id for i in items}) == len(items) == 660
    assert len({i.text for i in items}) == 660
    counts = Counter(i.label for i in items)
    assert set(counts) == LABELS - {"boxed_warning", "special_populations"} and set(counts.values()) == {60}


def test_a_relabelling_file_changes_only_the_labels_it_names(tmp_path):
    from medground.train.typer_bank import load_relabels

    bank = tmp_path / "bank.jsonl"
    bank.write_text('{"id": "a", "text": "I missed a dose, double up?", "label": "dosage"}\n'
                    '{"id": "b", "text": "How much do I take?", "label": "dosage"}\n')
    table = tmp_path / "relabels.json"
    table.write_text('{"why": "no entry advises on a missed dose", "relabels": {"a": "none"}}')
    items = load_bank(bank, load_relabels(table))
    assert [(i.item_id, i.label) for i in items] == [("a", "none"), ("b", "dosage")]
    assert [i.label for i in load_bank(bank)] == ["dosage", "dosage"]  # the writer's file as written
    table.write_text('{"relabels": {"a": "uses"}}')
    with pytest.raises(ValueError, match="relabels.json: labels \\['uses'\\] are none of"):
        load_relabels(table)
    table.write_text('{"a": "none"}')
    with pytest.raises(ValueError, match="expected a JSON object with a 'relabels' object"):
        load_relabels(table)
