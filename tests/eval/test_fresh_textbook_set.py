"""The fresh textbook set (session 28, all held out): its shape, and every evidence sentence is in
the module it names, so a reader shown that module's text can answer."""

import json
import re
from collections import Counter
from pathlib import Path

import pytest

SET = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "fresh_textbooks.jsonl"
BOOKS = {"anatomy-physiology-2e", "microbiology", "psychology-2e", "pharmacology-for-nurses",
         "nutrition-for-nurses", "population-health-for-nurses"}


def rows() -> list[dict]:
    return [json.loads(line) for line in SET.read_text().splitlines() if line.strip()]


def test_shape():
    data = rows()
    assert len(data) == 36 and len({d["id"] for d in data}) == 36
    for d in data:
        assert sorted(d["options"]) == ["A", "B", "C", "D"] and d["answer"] in d["options"]
        assert len(set(d["options"].values())) == 4
        assert d["book"] in BOOKS and re.fullmatch(r"m\d+", d["module"])
        assert d["style"] in {"vignette", "lay"} and d["trap"] in {"polarity", "belief", "none"}
    assert set(Counter(d["answer"] for d in data).values()) == {9}  # no letter bias can look good


@pytest.mark.slow
def test_evidence_is_in_the_named_module(shared_data):
    from medground.corpus.openstax import OpenStaxReader

    def plain(text: str) -> str:
        return " ".join(text.split())

    reader = OpenStaxReader()
    for book in sorted({d["book"] for d in rows()}):
        pages = {doc.doc_id: plain(" ".join(b.text for b in doc.blocks))
                 for doc in reader.read(shared_data / "corpora" / "openstax" / book)}
        for d in (d for d in rows() if d["book"] == book):
            page = pages[f"{book}/{d['module']}"]
            assert plain(d["evidence"]) in page, d["id"]
