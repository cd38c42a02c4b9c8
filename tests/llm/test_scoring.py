from __future__ import annotations

import math

import pytest

from medground.llm.scoring import (
    ParseCounter,
    ParseFailure,
    calibrate,
    generate_and_parse,
    label_logprobs,
    mcq_messages,
    normalise,
    parse_choice,
    score_options,
    scores_from_result,
)

from ._fakes import FakeLLM, first_token

L4 = ["A", "B", "C", "D"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Answer: B", "B"),
        ("The answer is (C).", "C"),
        ("**Answer:** D", "D"),
        ("Final answer: A", "A"),
        ("The correct answer is option B because the drug blocks COX.", "B"),
        ("answer - C", "C"),
        ("B", "B"),
        ("(A)", "A"),
        ("  C.  ", "C"),
        ("[D]", "D"),
        ("A. Ibuprofen", "A"),
        ("C) Heparin is an anticoagulant", "C"),
        ("Option A is wrong since it is a vitamin. Option B is wrong too.\nAnswer: D", "D"),
        ("Let's think. The answer is A... no wait, the answer is C.", "C"),
        ("The patient has hypokalemia.\nThe best choice is (B)", "B"),
        ("Reasoning about each option.\nD", "D"),
        ("So the drug to give here is B.", "B"),
    ],
)
def test_parse_choice_accepts(text, expected):
    assert parse_choice(text, L4) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        ("I am not sure which one is correct.", "no option letter"),
        ("Answer: A or B", "ambiguous"),
        ("The answer is E", "no option letter"),  # not one of the options
        ("As an AI I cannot give medical advice. I", "no option letter"),
        ("It could be a", "no option letter"),
        ('{"answer": "Z"}', "no option letter"),
    ],
)
def test_parse_choice_rejects_with_reason(text, reason):
    out = parse_choice(text, L4)
    assert isinstance(out, ParseFailure)
    assert out.reason == reason
    assert out.text == text


def test_parse_choice_option_text_fallback_is_unambiguous_only():
    opts = {"A": "Aspirin", "B": "Ibuprofen", "C": "Heparin", "D": "Warfarin"}
    assert parse_choice("I would give heparin here", L4, options=opts) == "C"
    amb = parse_choice("heparin or warfarin", L4, options=opts)
    assert isinstance(amb, ParseFailure) and amb.reason == "ambiguous option text"


def test_parse_choice_five_options_and_bad_letters():
    assert parse_choice("Answer: E", list("ABCDE")) == "E"
    with pytest.raises(ValueError):
        parse_choice("A", ["A", "A"])


def test_label_logprobs_merges_token_variants_by_logsumexp():
    top = [("A", -1.0), (" A", -2.0), ("(B", -1.5), ("The", -0.5), ("a", -3.0), ("Ab", -0.1)]
    got = label_logprobs(top, L4)
    assert got["A"] == pytest.approx(math.log(math.exp(-1.0) + math.exp(-2.0)))
    assert got["B"] == pytest.approx(-1.5)
    assert set(got) == {"A", "B"}  # lowercase "a" and "Ab" are not option letters


def test_label_logprobs_case_insensitive_for_yes_no():
    got = label_logprobs([("Yes", -0.2), (" yes", -3.0), ("No", -2.0)], ["yes", "no"], case_sensitive=False)
    assert got["yes"] == pytest.approx(math.log(math.exp(-0.2) + math.exp(-3.0)))
    assert got["no"] == pytest.approx(-2.0)


def test_scores_from_result_normalises_and_fills_missing_with_floor():
    r = first_token([("B", -0.5), ("A", -1.5), ("The", -2.0), ("C", -4.0)])
    s = scores_from_result(r, L4)
    assert s.choice == "B" and s.missing == ["D"]
    assert s.logprobs["D"] == -4.0  # floor = lowest alternative seen
    assert sum(s.probs.values()) == pytest.approx(1.0)
    z = sum(math.exp(v) for v in (-1.5, -0.5, -4.0, -4.0))
    assert s.probs["B"] == pytest.approx(math.exp(-0.5) / z)
    assert s.letter_mass == pytest.approx(math.exp(-0.5) + math.exp(-1.5) + math.exp(-4.0))


def test_calibration_subtracts_letter_bias():
    r = first_token([("B", -0.5), ("A", -1.0), ("C", -3.0), ("D", -3.0)])
    s = scores_from_result(r, L4, calibration={"A": -2.0, "B": -0.2, "C": -2.0, "D": -2.0})
    assert s.choice == "A"  # B is the model's favourite letter everywhere: discounted
    assert s.logprobs["B"] == -0.5  # raw values kept
    assert normalise({"A": 0.0, "B": 0.0}) == {"A": 0.5, "B": 0.5}


def test_score_options_requests_one_token_with_logprobs():
    llm = FakeLLM(first_token([("C", -0.1), ("A", -3.0)]))
    s = score_options(llm, mcq_messages("q?", {"A": "x", "B": "y", "C": "z", "D": "w"}), L4)
    assert s.method == "logprob" and s.choice == "C"
    req = llm.requests[0]
    assert req.max_tokens == 1 and req.top_logprobs == 20 and req.temperature == 0.0


def test_score_options_falls_back_to_generation_then_counts_failure():
    no_letters = first_token([("The", -0.1), ("Patient", -1.0)])
    llm = FakeLLM(no_letters, "The answer is D.", no_letters, "I cannot answer that.")
    counter = ParseCounter()
    s1 = score_options(llm, [{"role": "user", "content": "q"}], L4)
    s2 = score_options(llm, [{"role": "user", "content": "q"}], L4)
    for s in (s1, s2):
        counter.add(s)
    assert (s1.method, s1.choice, s1.outcome) == ("generate", "D", "answered")
    assert (s2.outcome, s2.choice) == ("parse_failure", None)
    assert (counter.total, counter.failures, counter.reasons) == (2, 1, {"no option letter": 1})


def test_generate_and_parse_uses_option_text():
    llm = FakeLLM("Heparin")
    s = generate_and_parse(llm, [{"role": "user", "content": "q"}], ["A", "B"], options={"A": "Aspirin", "B": "Heparin"})
    assert s.choice == "B" and s.probs == {"A": 0.0, "B": 1.0}


def test_calibrate_averages_over_prompts():
    llm = FakeLLM(first_token([("A", -1.0), ("B", -2.0)]), first_token([("A", -3.0), ("B", -2.0)]))
    cal = calibrate(llm, ["A", "B"], prompts=[[{"role": "user", "content": "1"}], [{"role": "user", "content": "2"}]])
    assert cal == {"A": pytest.approx(-2.0), "B": pytest.approx(-2.0)}


def test_mcq_messages_is_the_readers_prompt():
    from medground.llm import prompts

    m = mcq_messages("Which?", {"A": "x", "B": "y"}, context="[1] (Book) text")
    assert m[0]["role"] == "system"
    block = prompts.fill("evidence_block", evidence="[1] (Book) text")
    # exactly what the reader sends with that evidence block (reading/choice.py)
    assert m == prompts.messages("mcq_zeroshot", evidence_block=block, question="Which?", options="A. x\nB. y")
    assert mcq_messages("Which?", {"A": "x"}, block="HISTORY\n") == prompts.messages(
        "mcq_zeroshot", evidence_block="HISTORY\n", question="Which?", options="A. x")
    assert "step by step" in mcq_messages("Which?", {"A": "x"}, prompt="mcq_cot")[1]["content"]


def test_weigh_prior_keeps_failures_and_mixes_log_linearly():
    from medground.llm.scoring import OptionScores, weigh_prior

    grounded = OptionScores("answered", "A", probs={"A": 0.6, "B": 0.4})
    closed = OptionScores("answered", "B", probs={"A": 0.2, "B": 0.8})
    assert weigh_prior(grounded, closed, 1.0).probs == pytest.approx(grounded.probs)
    assert weigh_prior(grounded, closed, 0.0).choice == "B"
    half = weigh_prior(grounded, closed, 0.5)
    assert half.choice == "B" and half.probs["B"] == pytest.approx((0.32 ** 0.5) / (0.32 ** 0.5 + 0.12 ** 0.5))
    failed = OptionScores("parse_failure", None)
    assert weigh_prior(failed, closed, 0.5) is failed  # never turned into a letter
    assert weigh_prior(grounded, failed, 0.5) is grounded


def test_weigh_prior_above_one_contrasts_the_evidence_with_the_prior():
    from medground.llm.scoring import OptionScores, weigh_prior

    # the evidence favours B a little; the model favoured A far more without it: the option the
    # evidence raised (B: 0.1 → 0.45) wins over the one it lowered (A: 0.8 → 0.5)
    grounded = OptionScores("answered", "A", probs={"A": 0.5, "B": 0.45, "C": 0.05})
    closed = OptionScores("answered", "A", probs={"A": 0.8, "B": 0.1, "C": 0.1})
    contrast = weigh_prior(grounded, closed, 1.5)
    assert contrast.choice == "B"
    raw = {k: grounded.probs[k] ** 1.5 * closed.probs[k] ** -0.5 for k in grounded.probs}
    assert contrast.probs["B"] == pytest.approx(raw["B"] / sum(raw.values()))
