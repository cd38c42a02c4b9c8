from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from medground.corpus.base import BadInputError, ErrorPolicy, Reader
from medground.registry import create, names
from medground.schema import Block

F = Path(__file__).parent / "fixtures" / "readers"
NAMES = ["fda_labels", "jsonl", "markdown", "medlineplus", "medqa_textbooks", "medquad",
         "medrag_jsonl", "openstax", "pubmedqa", "text"]


def read_all(name: str, root: Path, policy: ErrorPolicy | None = None):
    reader = create("reader", name)
    return [d for u in reader.discover(root) for d in reader.read(u, policy)]


def test_all_registered_as_readers():
    assert set(NAMES) <= set(names("reader"))
    for name in NAMES:
        reader = create("reader", name)
        assert isinstance(reader, Reader) and reader.name == name


def test_medquad_both_schemas():
    gard, ninds = read_all("medquad", F / "medquad")
    assert (gard.doc_id, gard.title, gard.book) == ("2_GARD_QA/0000001", "Fabry disease", "GARD")
    assert gard.blocks == [Block(
        "qa",
        "Question: What is (are) Fabry disease?\nAnswer: Fabry disease is an inherited disorder.\n"
        "It results from the buildup of a fat called globotriaosylceramide.",
        ("information",),
    )]
    assert gard.metadata["empty_answers"] == 1 and gard.metadata["qtypes"] == ["information"]
    assert (ninds.title, ninds.book) == ("Holmes-Adie", "NINDS")
    assert ninds.blocks[0].text.startswith("Question: what is holmes-adie syndrome?\nAnswer: ")


def test_fda_labels_one_document_per_label():
    docs = read_all("fda_labels", F / "fda.json")
    assert [d.doc_id for d in docs] == ["ZEPHYRA", "ALPHADROL"]
    assert docs[0].blocks == [
        Block("paragraph", "6 ADVERSE REACTIONS\nThe most common adverse reactions are headache "
              "[see Warnings and Precautions (5.1)].\n* Nausea", ("adverse reactions",)),
        Block("paragraph", "WARNING: HEPATOTOXICITY", ("boxed warnings",)),
    ]


def test_medlineplus_rows():
    docs = read_all("medlineplus", F / "medline.csv")
    assert [(d.doc_id, d.title) for d in docs] == [("6308", "A1C"), ("3061", "Abdominal Pain")]
    assert docs[0].blocks[0].text == ("A1C is a blood test for type 2 diabetes and prediabetes. "
                                      "It measures your average blood glucose.")
    assert docs[0].metadata == {"topic_id": "6308", "also_called": ["Glycohemoglobin", "HbA1C"]}
    assert "http" not in repr(docs)


def test_pubmedqa_never_uses_the_question():
    (doc,) = read_all("pubmedqa", F / "pqal.json")
    assert (doc.doc_id, doc.title) == ("21645374", "PubMed 21645374")
    assert [b.section_path for b in doc.blocks] == [("Background",), ("Results",)]
    assert doc.metadata["meshes"] == ["Apoptosis", "Mitochondria"]
    assert "mitochondria play" not in repr(doc).lower() and "Mitochondria matter" not in repr(doc)


def test_medqa_textbooks_and_text():
    gray, katzung = read_all("medqa_textbooks", F)
    assert (gray.book, len(gray.blocks)) == ("Anatomy_Gray", 3)  # no blank lines: line = paragraph
    assert [b.text for b in katzung.blocks] == [
        "Pharmacology is the study of drugs. It is old.", "Doses are given in mg."
    ]
    assert [d.doc_id for d in read_all("text", F / "textbooks")] == ["Anatomy_Gray",
                                                                      "Pharmacology_Katzung"]


def test_medrag_jsonl_groups_by_title():
    aspirin, warfarin = read_all("medrag_jsonl", F / "statpearls.jsonl")
    assert (aspirin.title, aspirin.book) == ("Aspirin", "statpearls")
    assert [b.text for b in aspirin.blocks] == ["Aspirin inhibits cyclooxygenase.",
                                                "It is used for pain and fever."]
    assert aspirin.metadata["chunk_ids"] == ["article-1_0", "article-1_1"]
    assert warfarin.metadata["chunk_ids"] == ["article-2_0"]


def test_generic_jsonl_sections_and_metadata(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"doc_id": "d1", "title": "Asthma", "text": "Airway inflammation.", '
        '"section": "Overview > Cause", "lang": "en"}\n\n'
        '{"doc_id": "d1", "text": "Inhaled steroids.", "section": ["Treatment"]}\n'
    )
    (doc,) = read_all("jsonl", path)
    assert (doc.doc_id, doc.title, doc.metadata["lang"]) == ("c/d1", "Asthma", "en")
    assert doc.blocks == [Block("paragraph", "Airway inflammation.", ("Overview", "Cause")),
                          Block("paragraph", "Inhaled steroids.", ("Treatment",))]


def test_markdown_headings_lists_tables():
    (doc,) = read_all("markdown", F / "notes.md")
    assert doc.title == "Hypertension Notes"
    assert doc.blocks == [
        Block("paragraph", "Hypertension is high blood pressure. See the guideline."),
        Block("list", "- Thiazide diuretics\n- ACE inhibitors such as lisinopril", ("Treatment",)),
        Block("table", "Drug: Lisinopril; Dose: 10 mg daily", ("Treatment", "Doses")),
        Block("paragraph", "Check potassium.", ("Monitoring",)),
    ]


# --- bad input ------------------------------------------------------------------------------


def test_bad_jsonl_line_raises_or_is_skipped(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"title": "A", "content": "ok"}\n{"title": "B", "content": \n'
                    '{"title": "C"}\n{"title": "D", "content": "fine"}\n')
    with pytest.raises(BadInputError) as exc:
        read_all("medrag_jsonl", path)
    assert exc.value.where == "line 2 column 26"
    policy = ErrorPolicy(skip=True)
    assert [d.title for d in read_all("medrag_jsonl", path, policy)] == ["A", "D"]
    assert [p.where for p in policy.problems] == ["line 2 column 26", "line 3"]


def test_bad_json_names_line_and_column(tmp_path):
    path = tmp_path / "labels.json"
    path.write_text('[\n {"label_id": "X",\n  "section_name": oops}\n]')
    with pytest.raises(BadInputError, match=r"labels\.json: line 3 column 19: expected valid JSON"):
        read_all("fda_labels", path)


def test_fda_record_missing_field(tmp_path):
    path = tmp_path / "labels.json"
    path.write_text('[{"label_id": "X", "section_name": "boxed warnings"}]')
    policy = ErrorPolicy(skip=True)
    assert read_all("fda_labels", path, policy) == []
    assert policy.problems[0].where == "record 0" and "section_text" in policy.problems[0].message


def test_bad_xml_and_lfs_pointer(tmp_path):
    coll = tmp_path / "1_X_QA"
    coll.mkdir()
    shutil.copy(F / "medquad" / "2_GARD_QA" / "0000001.xml", coll / "0000001.xml")
    (coll / "0000002.xml").write_text('<?xml version="1.0"?>\n<Document>\n<Focus>x</Fokus>\n'
                                      "</Document>\n")
    (coll / "0000003.xml").write_text("version https://git-lfs.github.com/spec/v1\noid x\n")
    with pytest.raises(BadInputError) as exc:
        read_all("medquad", tmp_path)
    assert exc.value.path.endswith("0000002.xml") and exc.value.where == "line 3"
    policy = ErrorPolicy(skip=True)
    assert [d.title for d in read_all("medquad", tmp_path, policy)] == ["Fabry disease"]
    assert [Path(p.path).name for p in policy.problems] == ["0000002.xml", "0000003.xml"]
    assert "Git LFS pointer" in policy.problems[1].message


def test_csv_missing_columns(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("id,name\n1,x\n")
    with pytest.raises(BadInputError, match="line 1 \\(header\\): expected columns id, title"):
        read_all("medlineplus", path)


def test_non_utf8_text(tmp_path):
    path = tmp_path / "book.txt"
    path.write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(BadInputError, match="expected UTF-8 text"):
        read_all("text", path)


# --- shared data ----------------------------------------------------------------------------


def test_shared_corpora_counts(shared_data):
    medquad = read_all("medquad", shared_data / "corpora" / "medquad")
    assert len(medquad) == 5497
    # DATA.md counts 16,407 answers in <Answer> tags; four NINDS files use <answer> (+16).
    assert sum(len(d.blocks) for d in medquad) == 16423
    assert sum(d.metadata["empty_answers"] for d in medquad) == 5
    labels = read_all("fda_labels", shared_data / "drugs" / "fda-labels-tac2017")
    assert len(labels) == 200 and sum(len(d.blocks) for d in labels) == 476
    assert len(read_all("medlineplus", shared_data / "corpora" / "medlineplus-topics")) == 1017
    pubmed = read_all("pubmedqa", shared_data / "benchmarks" / "pubmedqa")
    assert len(pubmed) == 1000 and all(d.title == f"PubMed {d.doc_id}" for d in pubmed)
