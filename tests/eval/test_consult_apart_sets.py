"""The consultation sets written apart (benchmarks/data/consult_written.md): their shape, and each
answering item is in the source the writer cites, verbatim."""

import json
import re
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
ATTRIBUTES = {"indications", "dosage", "adverse_reactions", "interactions", "contraindications", "mechanism",
              "drug_class", "special_populations", "warnings", "storage", "therapeutic_effects"}


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("name,n", [("consult_apart.jsonl", 40), ("consult_apart2.jsonl", 48),
                                    ("consult_apart3.jsonl", 60), ("consult_apart4.jsonl", 50),
                                    ("consult_apart5.jsonl", 60), ("consult_apart6.jsonl", 60),
                                    ("consult_apart7.jsonl", 60), ("consult_apart8.jsonl", 60)])
def test_shape(name, n):
    data = rows(name)
    assert len(data) == n and len({d["id"] for d in data}) == n
    for d in data:
        assert d["turns"] and d["turns"][-1]["role"] == "patient"  # the question is the patient's last turn
        assert all(t["role"] in {"patient", "pharmacist"} and t["text"].strip() for t in d["turns"])
        assert d["subject"] and (d["attribute"] is None or d["attribute"] in ATTRIBUTES)
        assert (d["answer_item"] is None) == (d["attribute"] is None) or d["kind"] == "other"


@pytest.mark.parametrize("name", ["consult_apart2.jsonl", "consult_apart3.jsonl", "consult_apart4.jsonl",
                                  "consult_apart5.jsonl", "consult_apart6.jsonl",
                                  "consult_apart7.jsonl", "consult_apart8.jsonl"])
def test_every_answer_item_is_in_its_cited_source(shared_data, name):
    for d in rows(name):
        if not d["answer_item"]:
            continue
        path = shared_data / d["source"].split(" — ")[0].strip()
        raw = path.read_text(encoding="utf-8").lower()
        item = " ".join(d["answer_item"].lower().split())  # a line break inside an item
        # markup inside an item ("<emphasis>Week 2:</emphasis> 1 tablet …") is not the item's words
        assert item in " ".join(raw.split()) or item in " ".join(re.sub(r"<[^>]+>", " ", raw).split()), d["id"]
