from __future__ import annotations

import pytest

from medground.retrieve.pack import PackSettings, default_token_counter, pack, pack_with
from medground.schema import Passage, Query

from ._fakes import chunk


def words(text: str) -> int:
    return len(text.split())


def P(cid, text, score, **kw) -> Passage:
    return Passage(chunk(cid, text, **kw), score, "rrf")


# The rendered label "[n] (Book / Ch 1 / Sec)" is 7 whitespace words: a citation costs 7 + len(text).


def test_order_numbers_and_label_cost_by_hand():
    ev = pack([P("b", "two words", 0.5), P("a", "a b c", 0.9)], budget_tokens=100, count_tokens=words,
              queries=[Query("q")])
    assert [(c.number, c.chunk_id) for c in ev.citations] == [(1, "a"), (2, "b")]
    assert ev.token_count == (7 + 3) + (7 + 2)
    assert ev.budget == 100 and ev.dropped == 0 and ev.queries[0].text == "q"
    assert ev.citations[0].label == "Book / Ch 1 / Sec"
    assert ev.render() == "[1] (Book / Ch 1 / Sec) a b c\n\n[2] (Book / Ch 1 / Sec) two words"


def test_skip_what_does_not_fit_and_try_the_next():
    ps = [P("p1", "a b c", 3.0), P("p2", " ".join(["w"] * 10), 2.0), P("p3", "x y", 1.0)]
    ev = pack(ps, budget_tokens=20, count_tokens=words)
    # p1 costs 10 (fits), p2 costs 17 (10 + 17 > 20: skipped), p3 costs 9 (19 <= 20) → [2]
    assert [(c.number, c.chunk_id) for c in ev.citations] == [(1, "p1"), (2, "p3")]
    assert ev.token_count == 19 and ev.dropped == 1


def test_truncate_at_a_sentence_boundary():
    text = "One two three. Four five six. Seven eight nine ten."
    ps = [P("p1", "a b c", 3.0), P("p2", text, 2.0, start=100, end=100 + len(text))]
    ev = pack(ps, budget_tokens=20, count_tokens=words, overflow="truncate", min_tokens=1)
    # room after p1 = 10: "[2] (...) One two three." = 7 + 3 = 10 fits; adding the next sentence = 13
    cut = ev.citations[1]
    assert cut.text == "One two three."
    assert (cut.char_start, cut.char_end) == (100, 114)
    assert ev.token_count == 20 and ev.dropped == 0
    # a piece shorter than min_tokens is dropped instead
    ev = pack(ps, budget_tokens=20, count_tokens=words, overflow="truncate", min_tokens=4)
    assert [c.chunk_id for c in ev.citations] == ["p1"] and ev.dropped == 1


def test_dedupe_same_id_and_overlapping_spans():
    ps = [
        P("x", "low copy", 0.1),
        P("x", "high copy", 0.9),  # same id: the higher score is kept
        P("s1", "window one", 0.8, doc="d", section=("A",), start=0, end=100),
        P("s2", "window two", 0.7, doc="d", section=("A",), start=80, end=180),  # overlaps s1 → dropped
        P("s3", "adjacent", 0.6, doc="d", section=("A",), start=100, end=200),  # touches s1 (no overlap); s2 was dropped → kept
        P("s4", "other section", 0.5, doc="d", section=("B",), start=0, end=100),
        P("s5", "other doc", 0.4, doc="e", section=("A",), start=0, end=100),
        P("s6", "no span known", 0.3, doc="d", section=("A",)),
    ]
    ev = pack(ps, budget_tokens=1000, count_tokens=words)
    assert [c.chunk_id for c in ev.citations] == ["x", "s1", "s3", "s4", "s5", "s6"]
    assert ev.citations[0].text == "high copy"
    assert ev.dropped == 2


def test_max_passages_and_settings():
    ps = [P(f"c{i}", "t", 1.0 - i / 10) for i in range(5)]
    ev = pack_with(PackSettings(budget_tokens=1000, max_passages=2), ps, count_tokens=words)
    assert [c.chunk_id for c in ev.citations] == ["c0", "c1"]
    with pytest.raises(Exception, match="extra"):
        PackSettings(budget=5)


def test_default_counter_is_minilm_wordpieces():
    count = default_token_counter()
    assert count("") == 0
    assert count("insulin") >= 1
    # no [CLS]/[SEP]: two words that are whole vocabulary entries cost exactly 2
    assert count("the heart") == 2
    ev = pack([P("a", "the heart", 1.0)], budget_tokens=100)
    assert ev.token_count == count("[1] (Book / Ch 1 / Sec) the heart")
