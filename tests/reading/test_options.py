from __future__ import annotations

from medground.reading.options import mentions, option_queries, options_covered
from medground.schema import Citation

OPTIONS = {"A": "Hyperkalemia", "B": "Hypokalemia", "C": "Hypernatremia", "D": "Hypercalcemia"}


def test_option_queries_ask_the_question_alone_first_then_once_per_option():
    qs = option_queries("Which electrolyte  disturbance raises digoxin toxicity?", {**OPTIONS, "E": "Hypokalemia"})
    assert [q.kind for q in qs] == ["original", "option", "option", "option", "option"]  # E repeats B
    assert qs[0].text == "Which electrolyte disturbance raises digoxin toxicity?"
    assert qs[2].text == "Which electrolyte disturbance raises digoxin toxicity? Hypokalemia"


def test_mentions_keeps_polarity_apart_and_ignores_stop_word_options():
    text = "Contraindications include hypokalemia, which increases the risk of digoxin toxicity."
    assert mentions(text, "Hypokalemia") and mentions(text, "risk of toxicity")
    assert not mentions(text, "Hyperkalemia")
    assert not mentions(text, "None of the above")  # nothing to look for is not "present"


def test_options_covered_names_the_citations_per_letter():
    def cite(number: int, text: str) -> Citation:
        return Citation(number=number, chunk_id=str(number), book="Book", chapter="Drugs", section="", title="",
                        text=text, score=1.0)

    cites = [cite(1, "Hypokalemia raises digoxin toxicity."),
             cite(3, "Loop diuretics cause hypokalemia and hypercalcemia is rare.")]
    assert options_covered(cites, OPTIONS) == {"A": [], "B": [1, 3], "C": [], "D": [3]}


def test_opposite_polarity_options_are_twins():
    from medground.reading.options import polarity_twins

    opts = {"A": "Hyperkalemia", "B": "Hypokalemia", "C": "Hypernatremia", "D": "Hypercalcemia"}
    assert polarity_twins(opts) == [("A", "B")]
    assert polarity_twins({"A": "Increased heart rate", "B": "Decreased heart rate", "C": "No change"}) == [("A", "B")]
    assert polarity_twins({"A": "Hyperkalemia", "B": "Hyponatremia"}) == []  # two different ions


def test_of_two_twins_the_one_the_evidence_names_ranks_first():
    from medground.llm.scoring import OptionScores
    from medground.reading.options import evidence_decides_twins

    opts = {"A": "Hyperkalemia", "B": "Hypokalemia", "C": "Hypernatremia", "D": "Hypercalcemia"}
    read = OptionScores("answered", "A", {"A": 0.56, "B": 0.33, "C": 0.07, "D": 0.04}, text="A")
    out = evidence_decides_twins(read, opts, {"A": [], "B": [4], "C": [], "D": []})
    assert out.choice == "B" and out.text == "B" and out.probs == {"A": 0.33, "B": 0.56, "C": 0.07, "D": 0.04}
    assert out.parts["letters_before_twins"] == read.probs
    # both named, or neither, or the named one already first: the read stands
    assert evidence_decides_twins(read, opts, {"A": [1], "B": [4]}) is read
    assert evidence_decides_twins(read, opts, {}) is read
    assert evidence_decides_twins(read, opts, {"A": [2], "B": []}) is read
