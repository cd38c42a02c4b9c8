from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medground.corpus.sentences import split_sentences, split_spans

# (text, expected sentences) checked by hand.
CASES = [
    (
        "The patient received 5 mg. He improved quickly.",
        ["The patient received 5 mg.", "He improved quickly."],
    ),
    (
        "Give 2.5 mg q.i.d. with food. Monitor the INR.",
        ["Give 2.5 mg q.i.d. with food.", "Monitor the INR."],
    ),
    (
        "Common causes (e.g. viral infection) are listed. Others are rare.",
        ["Common causes (e.g. viral infection) are listed.", "Others are rare."],
    ),
    (
        "Dr. Smith saw the patient. He was fine.",
        ["Dr. Smith saw the patient.", "He was fine."],
    ),
    (
        "Compare drug A vs. drug B. Both work.",
        ["Compare drug A vs. drug B.", "Both work."],
    ),
    (
        "See Fig. 3.2 and Table 4. These show the data.",
        ["See Fig. 3.2 and Table 4.", "These show the data."],
    ),
    (
        "Blood pressure was approx. 120/80 mm Hg. That is normal.",
        ["Blood pressure was approx. 120/80 mm Hg.", "That is normal."],
    ),
    (
        "It is called No. 5 in the list. Next item.",
        ["It is called No. 5 in the list.", "Next item."],
    ),
    (
        "Take approx. 5 mg. per day, i.e. twice. Stop if dizzy.",
        ["Take approx. 5 mg. per day, i.e. twice.", "Stop if dizzy."],
    ),
    (
        "Values in Sect. 2 differ. See below.",
        ["Values in Sect. 2 differ.", "See below."],
    ),
    (
        "Use 0.5 mL/kg i.v. every 6 hr. Repeat as needed.",
        ["Use 0.5 mL/kg i.v. every 6 hr.", "Repeat as needed."],
    ),
    (
        "A. B. Jones wrote it. Then it was published.",
        ["A. B. Jones wrote it.", "Then it was published."],
    ),
    ("Is it safe? Yes! It is safe.", ["Is it safe?", "Yes!", "It is safe."]),
    (
        "Known as e.g. Smith in 1990. The end.",
        ["Known as e.g. Smith in 1990.", "The end."],
    ),
    (
        "The U.S. FDA approved it in 2001. It is widely used.",
        ["The U.S. FDA approved it in 2001.", "It is widely used."],
    ),
    # A line break (list item, table row) always ends a sentence.
    ("Row one: 5 mg\nRow two: 10 mg", ["Row one: 5 mg", "Row two: 10 mg"]),
    ("First block.\n\n  Second block", ["First block.", "Second block"]),
]


@pytest.mark.parametrize("text,expected", CASES)
def test_medical_abbreviations(text, expected):
    assert split_sentences(text) == expected


def test_spans_are_exact_offsets():
    text = "  Dr. Smith gave 2.5 mg.  He left.\n\nNext."
    spans = split_spans(text)
    assert spans == [(2, 24), (26, 34), (36, 41)]
    assert [text[s:e] for s, e in spans] == [
        "Dr. Smith gave 2.5 mg.",
        "He left.",
        "Next.",
    ]


def test_pysbd_backend_gives_spans_too():
    text = "Dr. Smith saw the patient. He was fine."
    assert split_sentences(text, "pysbd") == [
        "Dr. Smith saw the patient.",
        "He was fine.",
    ]


def test_unknown_splitter_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown sentence splitter 'nltk'"):
        split_spans("x.", "nltk")  # type: ignore[arg-type]


def test_empty_and_blank():
    assert split_spans("") == []
    assert split_spans(" \n\n \t") == []


_words = st.sampled_from(
    [
        "mg.",
        "Dr.",
        "e.g.",
        "the",
        "Heart",
        "2.5",
        "q.i.d.",
        "vs.",
        "(see",
        "Fig.",
        "3).",
        "pain.",
        "Why?",
        "No.",
        "\n",
        "\n\n",
        "  ",
        "é",
        "x",
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_words, max_size=40).map(" ".join))
def test_spans_cover_all_text_in_order(text):
    spans = split_spans(text)
    pos = 0
    covered = set()
    for s, e in spans:
        assert pos <= s < e <= len(text)
        piece = text[s:e]
        assert piece == piece.strip() and piece
        covered.update(range(s, e))
        pos = e
    # No character of content is lost between sentences.
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_heading_block_is_a_short_unpunctuated_block_that_titles_what_follows():
    from medground.corpus.sentences import is_heading_block

    text = "Intro sentence.\n\nSalt Substitutes\n\nThey hold potassium."
    s = text.index("Salt")
    assert is_heading_block(text, s, s + len("Salt Substitutes"))
    titled = "Intro sentence.\n\nSalt Substitutes\nThey hold potassium."  # a block's title line
    assert is_heading_block(titled, s, s + len("Salt Substitutes"))
    assert not is_heading_block(text, 0, len("Intro sentence."))  # closed by a full stop
    tail = "Intro sentence.\n\nNothing After"
    assert not is_heading_block(tail, tail.index("Nothing"), len(tail))  # titles nothing
    inline = "Intro sentence. Salt Substitutes\n\nThey hold potassium."
    assert not is_heading_block(inline, inline.index("Salt"), inline.index("\n"))  # not its own block
    intro = "It can be written:\n\nA plus B\n\nMore text."
    assert not is_heading_block(intro, intro.index("A plus"), intro.index("A plus") + 8)
