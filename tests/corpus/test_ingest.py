from __future__ import annotations

import json
from pathlib import Path

import pytest

from medground.corpus.base import BadInputError
from medground.corpus.chunking import ChunkerSettings
from medground.corpus.ingest import (
    SourceSpec,
    hash_unit,
    ingest,
    parse_sources,
    source_set,
)
from medground.store.chunks import ChunkStore


def write_jsonl(path: Path, records: list[dict | str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def rec(doc: str, text: str, section: str = "Intro") -> dict:
    return {
        "doc_id": doc,
        "title": doc.title(),
        "text": text,
        "section": section,
        "book": "Demo",
    }


@pytest.fixture
def corpus_dir(tmp_path) -> Path:
    root = tmp_path / "src"
    write_jsonl(
        root / "a.jsonl",
        [
            rec("heart", "The heart has four chambers. It pumps blood."),
            rec("heart", "Valves stop backflow.", "Valves"),
        ],
    )
    write_jsonl(
        root / "b.jsonl", [rec("liver", "The liver makes bile. It stores glycogen.")]
    )
    return root


@pytest.fixture
def store(tmp_path):
    with ChunkStore(tmp_path / "store.sqlite") as s:
        yield s


SMALL = ChunkerSettings(max_tokens=64, min_tokens=4)


def test_hash_unit_is_order_independent_and_content_sensitive(tmp_path):
    d = tmp_path / "d"
    (d / "sub").mkdir(parents=True)
    (d / "x.txt").write_text("one")
    (d / "sub" / "y.txt").write_text("two")
    (d / ".hidden").write_text("ignored")
    sha, n = hash_unit(d)
    assert n == 2
    (d / ".hidden").write_text("still ignored")
    assert hash_unit(d) == (sha, 2)
    (d / "sub" / "y.txt").write_text("changed")
    assert hash_unit(d)[0] != sha
    import hashlib

    assert hash_unit(d / "x.txt") == (hashlib.sha256(b"one").hexdigest(), 1)


def test_ingest_then_noop_then_replace(store, corpus_dir):
    specs = [SourceSpec(reader="jsonl", path=str(corpus_dir))]
    first = ingest(store, specs, SMALL, progress=False)
    assert (first.ingested, first.unchanged, first.failed) == (2, 0, 0)
    texts = sorted(c.text for c in store.iter_chunks())
    assert texts == [
        "The heart has four chambers. It pumps blood.",
        "The liver makes bile. It stores glycogen.",
        "Valves stop backflow.",
    ]
    fp = store.fingerprint()

    again = ingest(
        store, specs + specs, SMALL, progress=False
    )  # named twice, read once
    assert (again.ingested, again.unchanged) == (0, 2)
    assert store.fingerprint() == fp and store.count() == 3

    write_jsonl(corpus_dir / "b.jsonl", [rec("liver", "The liver detoxifies drugs.")])
    changed = ingest(store, specs, SMALL, progress=False)
    assert (changed.ingested, changed.unchanged) == (1, 1)
    assert sorted(c.text for c in store.iter_chunks(["jsonl"])) == [
        "The heart has four chambers. It pumps blood.",
        "The liver detoxifies drugs.",
        "Valves stop backflow.",
    ]
    assert store.fingerprint() != fp

    # Other chunker settings re-chunk every unit.
    rechunked = ingest(
        store,
        specs,
        ChunkerSettings(max_tokens=64, min_tokens=4, mode="sentence"),
        progress=False,
    )
    assert rechunked.ingested == 2 and store.count() == 3
    assert {c.metadata["chunker"] for c in store.iter_chunks()} == {"sentence"}


def test_corpus_name_override(store, corpus_dir):
    ingest(
        store,
        [SourceSpec(reader="jsonl", path=str(corpus_dir / "a.jsonl"), corpus="demo")],
        SMALL,
        progress=False,
    )
    assert store.corpora() == ["demo"] and [d.corpus for d in store.documents()] == [
        "demo"
    ]


def test_bad_input_raises_and_keeps_stored_unit(store, corpus_dir):
    specs = [SourceSpec(reader="jsonl", path=str(corpus_dir))]
    ingest(store, specs, SMALL, progress=False)
    before = list(store.iter_chunks())
    bad = corpus_dir / "b.jsonl"
    write_jsonl(bad, [rec("liver", "New text."), "{not json", rec("kidney", "More.")])
    with pytest.raises(BadInputError) as err:
        ingest(store, specs, SMALL, progress=False)
    assert "b.jsonl" in str(err.value) and "line 2" in str(err.value)
    assert (
        list(store.iter_chunks()) == before
    )  # nothing stored was lost or half-replaced


def test_skip_bad_ingests_the_rest_and_lists_bad_records(store, corpus_dir):
    write_jsonl(
        corpus_dir / "b.jsonl",
        [rec("liver", "Good record."), "{not json", rec("kidney", "Also good.")],
    )
    report = ingest(
        store,
        [SourceSpec(reader="jsonl", path=str(corpus_dir))],
        SMALL,
        skip_bad=True,
        progress=False,
    )
    assert report.failed == 0 and report.ingested == 2
    assert len(report.bad_records) == 1 and "line 2" in report.bad_records[0].where
    assert {c.text for c in store.iter_chunks()} >= {"Good record.", "Also good."}


def test_skip_bad_does_not_call_a_file_of_only_bad_records_ingested(store, corpus_dir):
    write_jsonl(corpus_dir / "good.jsonl", [rec("liver", "Good record.")])
    write_jsonl(corpus_dir / "bad.jsonl", ["{not json", "{also not json"])
    report = ingest(store, [SourceSpec(reader="jsonl", path=str(corpus_dir))], SMALL, skip_bad=True, progress=False)
    status = {u.unit.rsplit("/", 1)[-1]: u.status for u in report.units}
    assert status["good.jsonl"] == "ingested" and status["bad.jsonl"] == "skipped"
    assert report.to_dict()["skipped"] == 1


def test_missing_path_is_an_error_unless_skipping(store, tmp_path):
    specs = [SourceSpec(reader="jsonl", path=str(tmp_path / "nowhere"))]
    with pytest.raises(BadInputError, match="nowhere"):
        ingest(store, specs, SMALL, progress=False)
    assert (
        len(ingest(store, specs, SMALL, skip_bad=True, progress=False).bad_records) == 1
    )


def test_source_sets_and_parsing(tmp_path):
    data = tmp_path
    (data / "x.jsonl").write_text("{}")
    assert source_set("textbooks", data)[0].path.endswith(
        "corpora/openstax/anatomy-physiology-2e"
    )
    assert len(source_set("textbooks", data)) == 6
    assert {s.reader for s in source_set("all", data)} == {
        "openstax",
        "medquad",
        "medlineplus",
        "fda_labels",
        "pubmedqa",
    }
    specs = parse_sources(["jsonl:x.jsonl", "text:/abs/dir"], data)
    assert specs[0] == SourceSpec(reader="jsonl", path=str(data / "x.jsonl"))
    assert specs[1].path == "/abs/dir"
    with pytest.raises(ValueError, match="READER:PATH"):
        parse_sources(["bogus"], data)


def test_one_real_book(shared_data, store):
    """Nutrition for Nurses: every chunk fits, stays in its section, and ingest is incremental."""
    spec = [
        SourceSpec(
            reader="openstax",
            path=str(shared_data / "corpora/openstax/nutrition-for-nurses"),
        )
    ]
    report = ingest(store, spec, ChunkerSettings(), progress=False)
    assert report.ingested == 1 and report.units[0].documents == 93
    chunks = list(store.iter_chunks())
    assert len(chunks) > 500
    assert max(c.token_count for c in chunks) <= 256
    assert all(c.book == chunks[0].book and c.book for c in chunks)
    assert ingest(store, spec, ChunkerSettings(), progress=False).unchanged == 1


def test_real_chunks_point_into_their_section_text(shared_data):
    """On real pages: each chunk is exactly its span of the section text it came from."""
    from itertools import islice

    from medground.corpus.chunking import make_chunker, sections_of
    from medground.registry import create

    reader = create("reader", "openstax")
    chunker = make_chunker(ChunkerSettings())
    book = shared_data / "corpora/openstax/pharmacology-for-nurses"
    n = 0
    for doc in islice(reader.read(book), 25):
        sections = {s.path: s.text for s in sections_of(doc)}
        for c in chunker.chunk(doc):
            assert c.text == sections[c.section_path][c.char_start : c.char_end]
            assert 0 < c.token_count <= 256
            n += 1
    assert n > 100
