from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from medground import registry
from medground.corpus.chunking import (
    ChunkerSettings,
    FixedTokenChunker,
    SentenceUnitChunker,
    StructureChunker,
    make_chunker,
    sections_of,
)
from medground.corpus.sentences import split_spans
from medground.corpus.tokens import get_token_counter
from medground.schema import Block, Document, make_chunk_id


@pytest.fixture(scope="module")
def counter():
    return get_token_counter()


def doc(*blocks: tuple[str, tuple[str, ...]], doc_id: str = "book/m1") -> Document:
    return Document(
        doc_id=doc_id,
        corpus="openstax",
        source_path="/data/book/m1/index.cnxml",
        title="Heart",
        blocks=[Block("paragraph", t, p) for t, p in blocks],
        book="Anatomy",
        chapter="Ch 19",
    )


def test_counter_uses_the_embedder_tokenizer_without_special_tokens(counter):
    # WordPiece of all-MiniLM-L6-v2: hello | 2 | . | 5 | mg
    assert counter.count("Hello 2.5 mg") == 5
    assert counter.count_batch(["Hello 2.5 mg", "", "a b"]) == [5, 0, 2]
    assert counter.count("word " * 300) == 300  # no truncation at the model's 128
    assert counter.additive


def test_counter_accepts_a_model_dir_and_rejects_nonsense(tmp_path, counter):
    from medground.corpus.tokens import TokenCounter, TokenizerNotFoundError

    assert TokenCounter(counter.path.parent).count("Hello 2.5 mg") == 5
    with pytest.raises(TokenizerNotFoundError, match="tokenizer.json"):
        TokenCounter(tmp_path)


def test_settings_forbid_unknown_keys_and_bad_bounds():
    with pytest.raises(ValidationError, match="max_token"):
        ChunkerSettings(max_token=10)
    with pytest.raises(ValidationError, match="min_tokens"):
        ChunkerSettings(max_tokens=32, min_tokens=32)


def test_registered_under_three_names():
    assert {"structure", "sentence", "fixed"} <= set(registry.names("chunker"))
    assert isinstance(make_chunker(ChunkerSettings(mode="fixed")), FixedTokenChunker)
    assert isinstance(registry.create("chunker", "sentence"), SentenceUnitChunker)


def test_sections_join_blocks_of_one_path():
    d = doc(("A one.", ("S",)), ("B two.", ("T",)), ("A three.", ("S",)))
    secs = sections_of(d)
    assert [(s.path, s.text) for s in secs] == [
        (("S",), "A one.\n\nA three."),
        (("T",), "B two."),
    ]


def test_structure_packs_sentences_and_keeps_fields(counter):
    s1 = "The heart has four chambers."
    s2 = "Blood enters the right atrium from the venae cavae."
    d = doc((f"{s1} {s2}", ("Heart", "Anatomy")), ("Tiny.", ("Heart", "Valves")))
    chunks = StructureChunker(max_tokens=64, min_tokens=4).chunk(d)
    assert [c.text for c in chunks] == [f"{s1} {s2}", "Tiny."]
    first = chunks[0]
    assert first.token_count == counter.count(first.text)
    assert (first.char_start, first.char_end) == (0, len(s1) + 1 + len(s2))
    assert first.chunk_id == make_chunk_id(
        d.source_path, ("Heart", "Anatomy"), first.text, 0
    )
    assert (first.doc_id, first.book, first.chapter, first.title) == (
        "book/m1",
        "Anatomy",
        "Ch 19",
        "Heart",
    )
    assert (
        first.metadata["chunker"] == "structure"
        and first.metadata["settings"]["max_tokens"] == 64
    )
    # A section smaller than min_tokens on its own is kept, flagged, never merged elsewhere.
    assert (
        chunks[1].section_path == ("Heart", "Valves")
        and chunks[1].metadata["short"] is True
    )


def test_window_closes_at_last_full_sentence(counter):
    sentences = [
        f"Sentence number {w} is about the heart."
        for w in ("one", "two", "three", "four", "five")
    ]
    n = counter.count(sentences[0])  # each sentence has the same count
    d = doc((" ".join(sentences), ("S",)))
    chunks = StructureChunker(max_tokens=2 * n + 1, min_tokens=1).chunk(d)
    assert [c.text for c in chunks] == [
        " ".join(sentences[0:2]),
        " ".join(sentences[2:4]),
        sentences[4],
    ]
    assert all(c.token_count <= 2 * n + 1 for c in chunks)


def test_a_heading_that_would_end_a_window_opens_the_next(counter):
    body = "Sodium intake raises blood pressure in many adults."
    n = counter.count(body)
    heading = "Salt Substitutes"
    after = "Salt substitutes replace sodium chloride with potassium chloride."
    d = doc((f"{body}\n\n{body}\n\n{heading}\n\n{after}", ("S",)))
    # the first window has room for both paragraphs and the heading, not for what follows
    limit = 2 * n + counter.count(heading) + 1
    assert counter.count(after) + counter.count(heading) <= limit
    chunks = StructureChunker(max_tokens=limit, min_tokens=1).chunk(d)
    assert [c.text for c in chunks] == [f"{body}\n\n{body}", f"{heading}\n\n{after}"]
    # the old behaviour, kept behind the setting, ends the first chunk on the heading
    old = StructureChunker(max_tokens=limit, min_tokens=1, carry_headings=False).chunk(d)
    assert old[0].text.endswith(heading) and old[1].text == after


def test_a_line_that_a_colon_introduces_is_not_carried(counter):
    lead = "The overall reaction can be written:"
    formula = "C6H12O6 plus O2 gives CO2 and ATP"
    rest = "This reaction releases energy in small steps inside the cell."
    text = f"{lead}\n\n{formula}\n\n{rest}"
    limit = counter.count(lead) + counter.count(formula) + 1
    chunks = StructureChunker(max_tokens=limit, min_tokens=1).chunk(doc((text, ("S",))))
    assert chunks[0].text == f"{lead}\n\n{formula}"


def test_small_tail_merges_into_previous_chunk_of_same_section(counter):
    long = "The myocardium is the muscular middle layer of the heart wall. " * 3
    d = doc((long + "Ok.", ("S",)))
    chunks = StructureChunker(max_tokens=200, min_tokens=10).chunk(d)
    assert len(chunks) == 1 and chunks[0].text.endswith("Ok.")
    # When the merge would exceed the limit, the tail stays alone and is flagged short.
    limit = counter.count(long.strip())
    chunks = StructureChunker(max_tokens=limit, min_tokens=10).chunk(d)
    assert chunks[-1].text == "Ok." and chunks[-1].metadata["short"]


def test_oversized_sentence_is_cut_at_the_limit_and_flagged(counter):
    sentence = " ".join(f"Word{i}" for i in range(120)) + "."
    d = doc((f"Short start. {sentence} Short end.", ("S",)))
    chunks = StructureChunker(max_tokens=40, min_tokens=1).chunk(d)
    over = [c for c in chunks if c.metadata["oversized_sentence"]]
    assert len(over) >= 2 and all(c.token_count <= 40 for c in chunks)
    assert chunks[0].text == "Short start." and chunks[-1].text == "Short end."
    assert " ".join(c.text for c in over) == sentence


def test_sentence_overlap_repeats_last_sentence(counter):
    s = [f"Fact {w} about the kidney." for w in ("one", "two", "three", "four")]
    n = counter.count(s[0])
    chunks = StructureChunker(
        max_tokens=2 * n, min_tokens=1, overlap_sentences=1
    ).chunk(doc((" ".join(s), ("S",))))
    assert [c.text for c in chunks] == [
        " ".join(s[0:2]),
        " ".join(s[1:3]),
        " ".join(s[2:4]),
    ]


def test_sentence_mode_units_of_n_sentences():
    s = [f"Fact {i} about the liver." for i in range(7)]
    chunks = SentenceUnitChunker(sentences_per_unit=3, min_tokens=1).chunk(
        doc((" ".join(s), ("S",)))
    )
    assert [c.text for c in chunks] == [" ".join(s[0:3]), " ".join(s[3:6]), s[6]]
    assert all(c.metadata["chunker"] == "sentence" for c in chunks)


def test_fixed_mode_ignores_sentences(counter):
    text = "Alpha beta gamma. Delta epsilon zeta eta. Theta iota kappa lambda mu."
    chunks = FixedTokenChunker(max_tokens=8, min_tokens=1).chunk(doc((text, ("S",))))
    assert all(c.token_count <= 8 for c in chunks)
    assert chunks[0].text == text[: chunks[0].char_end] and not chunks[0].text.endswith(
        "."
    )
    assert sum(c.token_count for c in chunks) == counter.count(text)


# -- properties over random documents ------------------------------------------------------
_word = st.sampled_from(
    [
        "heart",
        "mg.",
        "Dr.",
        "e.g.",
        "2.5",
        "q.i.d.",
        "the",
        "Pulmonary",
        "antibiotics",
        "pneumonoultramicroscopicsilicovolcanoconiosis",
        "(see",
        "Fig.",
        "3).",
        "vs.",
        "é",
        "β-blocker",
    ]
)
_sentence = st.lists(_word, min_size=1, max_size=30).map(
    lambda ws: " ".join(ws) + st_end()
)


def st_end() -> str:
    return "."


_block_text = st.lists(_sentence, min_size=1, max_size=8).map(" ".join)
_path = st.sampled_from([(), ("A",), ("A", "x"), ("B",)])
_doc = st.lists(st.tuples(_block_text, _path), min_size=1, max_size=6).map(
    lambda bs: doc(*bs)
)
_modes = st.sampled_from(["structure", "sentence"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_doc, _modes, st.integers(16, 80), st.integers(0, 2))
def test_chunk_invariants(d, mode, max_tokens, overlap):
    cfg = ChunkerSettings(
        mode=mode, max_tokens=max_tokens, min_tokens=8, overlap_sentences=overlap
    )
    chunker = make_chunker(cfg)
    counter = chunker.counter
    sections = {s.path: s.text for s in sections_of(d)}
    chunks = chunker.chunk(d)
    covered: dict[tuple[str, ...], set[int]] = {p: set() for p in sections}
    for c in chunks:
        text = sections[
            c.section_path
        ]  # never crosses a section: one path, one section text
        assert c.text == text[c.char_start : c.char_end]
        assert c.token_count == counter.count(c.text) <= max_tokens
        ends = {e for _, e in split_spans(text)}
        if not c.metadata["oversized_sentence"]:
            assert c.char_end in ends  # ends at a sentence end
            assert c.char_start in {s for s, _ in split_spans(text)}
        covered[c.section_path].update(range(c.char_start, c.char_end))
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    for path, text in sections.items():  # no text is lost
        assert all(i in covered[path] for i, ch in enumerate(text) if not ch.isspace())


@settings(max_examples=40, deadline=None)
@given(_doc, st.integers(8, 40), st.integers(0, 6))
def test_fixed_invariants(d, max_tokens, overlap):
    chunker = FixedTokenChunker(
        max_tokens=max_tokens, min_tokens=1, overlap_tokens=min(overlap, max_tokens - 1)
    )
    sections = {s.path: s.text for s in sections_of(d)}
    for c in chunker.chunk(d):
        assert c.text == sections[c.section_path][c.char_start : c.char_end]
        assert c.token_count == chunker.counter.count(c.text) <= max_tokens
