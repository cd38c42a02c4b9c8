"""reading/choice.py's Answer: the read's typed detail, and the metadata keys it has always had."""

from medground.llm.scoring import OptionScores, ParseFailure
from medground.reading.choice import choice_answer
from medground.schema import ChoiceDetail, FollowUp


def test_an_answered_read_fills_the_detail_and_keeps_the_metadata_keys():
    scores = OptionScores("answered", "B", probs={"A": 0.25, "B": 0.75}, logprobs={"A": -1.5, "B": -0.3},
                          blank_passes=1, parts={"letters": {"A": 0.4, "B": 0.6}, "check": {"A": 0.1, "B": 0.9}})
    ans = choice_answer(scores, [], ChoiceDetail(evidence_tokens=512, options_in_evidence={"A": [], "B": [2]}))
    assert ans.detail == ChoiceDetail(scoring="logprob", letter_logprobs={"A": -1.5, "B": -0.3}, blank_passes=1,
                                      score_parts={"letters": {"A": 0.4, "B": 0.6}, "check": {"A": 0.1, "B": 0.9}},
                                      evidence_tokens=512, options_in_evidence={"A": [], "B": [2]})
    assert ans.metadata == {"scoring": "logprob", "letter_logprobs": {"A": -1.5, "B": -0.3}, "blank_passes": 1,
                            "score_parts": {"letters": {"A": 0.4, "B": 0.6}, "check": {"A": 0.1, "B": 0.9}},
                            "evidence_tokens": 512, "options_in_evidence": {"A": [], "B": [2]}}
    assert (ans.choice, ans.option_scores, ans.rationale) == ("B", {"A": 0.25, "B": 0.75}, "")


def test_a_generated_read_without_logprobs_says_only_how_it_read():
    ans = choice_answer(OptionScores("answered", "A", probs={"A": 1.0}, method="generate", text="A."), [])
    assert ans.metadata == {"scoring": "generate"} and ans.rationale == "A."


def test_a_parse_failure_names_its_reason_and_keeps_the_pipelines_fields():
    failed = OptionScores("parse_failure", None, text="hmm", failure=ParseFailure("no option letter", "hmm"))
    ans = choice_answer(failed, [], ChoiceDetail(history=[FollowUp("q?", "a.")], query_failures=0))
    assert (ans.outcome, ans.choice, ans.text) == ("parse_failure", None, "hmm")
    assert ans.metadata == {"parse_failure": "no option letter", "history": [{"query": "q?", "answer": "a."}],
                            "query_failures": 0}
