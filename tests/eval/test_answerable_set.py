"""The answerable set: every question's evidence is verbatim in the textbook page and section it names."""

import json
from collections import Counter
from pathlib import Path

import pytest

SET = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "answerable_textbooks.jsonl"


def rows() -> list[dict]:
    return [json.loads(line) for line in SET.read_text().splitlines() if line.strip()]


def test_shape():
    data = rows()
    assert len(data) >= 30
    assert len({d["qid"] for d in data}) == len(data)
    for d in data:
        assert sorted(d["options"]) == ["A", "B", "C", "D"] and d["answer"] in d["options"]
        assert len(set(d["options"].values())) == 4
        assert 40 <= len(d["evidence"]) <= 300 and d["chunk_id"] and d["doc_id"]
    # The gold letter is balanced, so a letter-biased reader cannot look good.
    assert max(Counter(d["answer"] for d in data).values()) <= len(data) // 4 + 1


@pytest.mark.slow
def test_evidence_is_in_the_named_page_and_section(shared_data):
    from medground.corpus.openstax import OpenStaxReader

    data = rows()
    books = {d["doc_id"].split("/")[0] for d in data}
    reader = OpenStaxReader()
    pages = {}
    for book in books:
        for doc in reader.read(shared_data / "corpora" / "openstax" / book):
            pages[doc.doc_id] = doc
    for d in data:
        doc = pages[d["doc_id"]]
        section = [b.text for b in doc.blocks if list(b.section_path) == d["section_path"]]
        # Blocks are paragraphs; a chunk can join several, so look in the section's text.
        assert any(d["evidence"] in t for t in section) or d["evidence"] in "\n\n".join(section), d["qid"]
