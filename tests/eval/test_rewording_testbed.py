"""The rewording test bed's loaders (medground.eval.rewording_testbed), read from the shipped data."""

from pathlib import Path

from medground.eval.rewording_testbed import load_free, load_testbed, reordered, with_twin

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"


def test_a_base_item_and_its_rewordings_share_one_split():
    dev, test = load_testbed(DATA, "dev"), load_testbed(DATA, "test")
    assert {i["base"] for _, i in dev}.isdisjoint({i["base"] for _, i in test})
    assert {i["set"] for _, i in dev} == {"original", "reworded", "new", "devfresh"}
    assert {i["set"] for _, i in test} == {"original", "reworded", "new", "fresh"}
    assert len(load_testbed(DATA, None)) == len(dev) + len(test)


def test_reordering_moves_the_answer_and_a_twin_makes_five_options():
    item = {"qid": "q1", "options": {"A": "Hyperkalemia", "B": "Hypokalemia", "C": "Hypernatremia"}, "answer": "B"}
    options, answer = reordered(item)
    assert answer != "B" and options[answer] == "Hypokalemia" and sorted(options.values()) == sorted(item["options"].values())
    assert reordered(item) == (options, answer)  # seeded by the item
    five, gold = with_twin({**item, "options": {**item["options"], "D": "Hypercalcemia"}}, "Hyperkalemia twin")
    assert len(five) == 5 and five[gold] == "Hypokalemia"


def test_free_text_questions_carry_what_states_the_answer():
    dev = load_free(DATA, "dev")
    assert {i["set"] for _, i in dev} == {"new", "pair_answerable", "pair_nearmiss", "owndev", "devfresh"}
    assert all(i["accept"] for _, i in dev if i["set"] != "pair_nearmiss")
    assert all(not i["accept"] for _, i in dev if i["set"] == "pair_nearmiss")
    assert all(not q.options for q, _ in dev)
