"""schema.py's answer details: typed, and written into Answer.metadata under the keys the API has
always sent (None leaves a key out), with a clash between the two ways refused."""

from dataclasses import replace

import pytest

from medground.schema import (
    Answer,
    ChoiceDetail,
    ClaimJudgement,
    FollowUp,
    FreeTextDetail,
    Vote,
)


def test_only_the_set_fields_become_metadata_keys():
    d = ChoiceDetail(scoring="logprob", evidence_tokens=0, voted=False, votes=[Vote("B", 7.0, "c1", {"B": 7.0})],
                     history=[FollowUp("q?", "a.")])
    assert d.to_metadata() == {"history": [{"query": "q?", "answer": "a."}], "scoring": "logprob",
                               "evidence_tokens": 0, "voted": False,
                               "votes": [{"chunk_id": "c1", "choice": "B", "confidence": 7.0, "scores": {"B": 7.0}}]}
    assert ChoiceDetail().to_metadata() == {}


def test_free_text_names_its_supporting_passage_whenever_the_support_pass_ran():
    assert FreeTextDetail(support=0.2).to_metadata() == {"support": 0.2, "supporting_passage": None}
    assert FreeTextDetail(passages_shown=3).to_metadata() == {"passages_shown": 3}
    judged = FreeTextDetail(first_claim_judged=ClaimJudgement(p=None, supported=False, lexical=True))
    assert judged.to_metadata() == {"first_claim_judged": {"p": None, "supported": False, "lexical": True}}


def test_the_answer_writes_its_detail_into_metadata_and_refuses_a_clash():
    a = Answer(outcome="answered", text="x", detail=FreeTextDetail(extractive=True, quoted="q"),
               metadata={"retrievers_left_out": {"dense": "not built"}})
    assert a.metadata == {"extractive": True, "quoted": "q", "retrievers_left_out": {"dense": "not built"}}
    assert replace(a, text="y").metadata == a.metadata  # the same values given both ways agree
    with pytest.raises(ValueError, match="metadata key 'support' is a field of FreeTextDetail: set it there"):
        Answer(outcome="answered", metadata={"support": 0.9}, detail=FreeTextDetail())
    with pytest.raises(ValueError, match="'quoted'"):
        Answer(outcome="answered", metadata={"quoted": "other"}, detail=FreeTextDetail(quoted="q"))
    assert Answer(outcome="answered", metadata={"support": 0.9}).metadata == {"support": 0.9}  # untyped: as given


def test_a_stored_vote_is_checked():
    assert Vote.from_dict({"choice": "A"}) == Vote("A", 1.0, "", {}, None)
    for bad, why in (({"choice": 1}, "choice and failure"), ({"choice": "A", "chunk_id": 3}, "chunk_id"),
                     ({"choice": "A", "confidence": "9"}, "confidence"),
                     ({"choice": "A", "why": "x"}, "unknown key 'why'")):
        with pytest.raises(ValueError, match=why):
            Vote.from_dict(bad)
