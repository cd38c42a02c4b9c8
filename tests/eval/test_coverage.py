"""The coverage diagnostic: the gold option's text in the top k, per query mode, with a CI."""

import pytest

from medground.eval.coverage import contains_option, coverage, query_for
from medground.schema import Chunk, Passage, Question


def _p(text: str, rank: int) -> Passage:
    return Passage(Chunk(chunk_id=f"c{rank}", doc_id="d", corpus="t", source_path="x", text=text, title="T"), 1.0, "bm25", rank)


def test_contains_option_matches_whole_words_case_and_punctuation_free():
    assert contains_option("Hypokalemia increases digoxin toxicity.", "hypokalemia")
    assert not contains_option("Hyperkalemia is rare.", "Hypokalemia")
    assert contains_option("Give vitamin B6 (pyridoxine).", "Vitamin B6")
    assert not contains_option("Give vitamin B60.", "Vitamin B6")
    assert not contains_option("anything", "  ")


def test_coverage_counts_ranks_per_mode():
    qs = [Question(qid="1", dataset="t", question="digoxin toxicity electrolyte?",
                   options={"A": "Hyperkalemia", "B": "Hypokalemia"}, answer="B"),
          Question(qid="2", dataset="t", question="isoniazid neuropathy vitamin?",
                   options={"A": "Vitamin C", "B": "Vitamin B6"}, answer="B"),
          Question(qid="3", dataset="t", question="free text, skipped")]

    def retrieve(query: str, k: int):
        if "Hypokalemia" in query:  # only the options reach the digoxin passage
            return [_p("nothing", 1), _p("Hypokalemia raises digoxin toxicity", 2)][:k]
        return [_p("Vitamin B6 prevents isoniazid neuropathy", 1)][:k]

    out = coverage(qs, retrieve, ks=(1, 5))
    rows = {(r["query"], r["k"]): r for r in out["rows"]}
    assert out["n"] == 2 and out["skipped"] == 1
    assert rows[("question", 1)]["covered"] == 1 and rows[("question", 5)]["covered"] == 1
    assert rows[("question+options", 1)]["covered"] == 1 and rows[("question+options", 5)]["covered"] == 2
    assert rows[("question+options", 5)]["ci95"][0] < 1.0
    assert query_for(qs[0], "question+options").endswith("Hyperkalemia Hypokalemia")
    with pytest.raises(ValueError, match="query mode"):
        query_for(qs[0], "options")


def test_holds_sentence_ignores_case_and_spacing_but_not_punctuation():
    from types import SimpleNamespace

    from medground.eval.coverage import holds_sentence

    cited = [SimpleNamespace(text="Malaria is  transmitted\nthrough the bite of Anopheles mosquitoes.")]
    assert holds_sentence(cited, "transmitted through the BITE of anopheles")
    assert not holds_sentence(cited, "transmitted, through the bite")
    assert not holds_sentence([], "anything")
