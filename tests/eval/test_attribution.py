from __future__ import annotations

import pytest

from medground.eval.attribution import Attribution, attribute, split_claims
from medground.reading.claims import LexicalClaimJudge

P1 = "Paracetamol / Dosage: Adults should not exceed 4 grams of acetaminophen in 24 hours."
P2 = "Hepatotoxicity: Overdose of acetaminophen causes liver failure; acetylcysteine is the antidote."


class TableJudge:
    """P(supported) = 1 when every listed word of the claim is in the passage."""

    name = "table"

    def __init__(self, needs: dict[str, list[str]]):
        self.needs, self.calls = needs, []

    def p_supported(self, claim: str, passage: str) -> float:
        self.calls.append((claim, passage))
        return float(all(w in passage.lower() for w in self.needs[claim]))


def test_split_claims_keeps_citations_drops_quotes_and_lends_bare_citations_back():
    answer = ("Adults may take up to 4 grams a day [1]. Overdose injures the liver. [2] "
              "Paracetamol / Dosage: \u201cAdults should not exceed 4 grams.\u201d [1]")
    claims = split_claims(answer)
    assert [(c.text, c.cited) for c in claims] == [("Adults may take up to 4 grams a day.", [1]),
                                                   ("Overdose injures the liver.", [2])]


def test_recall_and_precision_follow_alce():
    judge = TableJudge({"The limit is 4 grams a day.": ["4 grams"],
                        "Overdose injures the liver, and acetylcysteine treats it.": ["liver", "acetylcysteine"],
                        "It is safe in any dose.": ["any dose"]})
    answer = ("The limit is 4 grams a day [1][2]. Overdose injures the liver, and acetylcysteine treats it [2]. "
              "It is safe in any dose [1].")
    got = attribute(answer, {1: P1, 2: P2}, judge, 0.5)
    assert [c.supported for c in got.claims] == [True, True, False]
    assert got.recall == pytest.approx(2 / 3)
    # pairs: (c1, 1) states it alone; (c1, 2) neither alone nor needed; (c2, 2) yes; (c3, 1) no
    assert got.claims[0].relevant == {1: True, 2: False}
    assert got.precision == pytest.approx(2 / 4)


def test_a_claim_citing_nothing_is_unsupported_and_no_claims_give_no_figures():
    got = attribute("Acetaminophen is safe.", {1: P1}, LexicalClaimJudge(), 0.7)
    assert got.claims[0].supported is False and got.recall == 0.0 and got.precision is None
    assert Attribution([]).recall is None


def test_the_lexical_judge_does_not_excuse_the_questions_own_words():
    # the reader's support check ignores the question's words; a claim built from them must fail here
    p = LexicalClaimJudge().p_supported("Adults can safely take 40 grams of acetaminophen every day.", P1)
    assert p < 0.7


def test_a_closest_passage_reply_makes_no_claim_of_its_own():
    from medground.reading.reply import closest_passage

    assert split_claims(closest_passage("Book / Ch", 1, "Adults should not exceed 4 grams.")) == []
    assert split_claims(closest_passage("Book / Ch", 1, "Adults should not exceed 4 grams.", judged_answering=True)) == []
