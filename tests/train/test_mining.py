"""Answer-aware positive mining: what is searched, what becomes a positive or a negative, what is excluded."""

from __future__ import annotations

import json

from medground.schema import Chunk, Passage, Question
from medground.train.mining import (
    MinedItem,
    evaluated_ids,
    load_mined,
    mined_label_counts,
    mined_positives,
    mined_triplets,
    near_duplicates,
    question_key,
    write_mined,
)

OPTIONS = {"A": "Pyridoxine", "B": "Thiamine", "C": "Folate", "D": "Niacin"}


def _q(qid="q1", question="Which vitamin prevents isoniazid neuropathy?", answer="A", dataset="t"):
    return Question(qid=qid, dataset=dataset, question=question, options=OPTIONS, answer=answer)


def _p(cid, text):
    return Passage(Chunk(chunk_id=cid, doc_id="", corpus="", source_path="", text=text, title=""), 1.0, "stored")


class FakeEngine:
    """Answers with passages chosen by whether the query carries the gold option's text."""

    def __init__(self):
        self.queries = []

    def retrieve(self, query, k=None):
        self.queries.append(query)
        if query.endswith("Pyridoxine"):  # question + gold, or the gold text alone
            return [_p("m1", "Neuropathy from isoniazid is prevented with pyridoxine."), _p("n1", "Isoniazid is hepatotoxic.")][:k]
        return [_p("n1", "Isoniazid is hepatotoxic."), _p("n2", "Thiamine and niacin are B vitamins."),
                _p("n3", "Tuberculosis is treated for six months.")][:k]


def test_mining_searches_the_question_and_question_plus_gold_and_resumes(tmp_path):
    out = tmp_path / "mined.jsonl"
    engine = FakeEngine()
    assert write_mined(engine, [_q()], out, k=3, mined_k=2) == 1
    assert engine.queries == [_q().question, f"{_q().question} Pyridoxine", "Pyridoxine"]
    assert write_mined(engine, [_q(), _q("q2")], out, k=3, mined_k=2) == 1  # q1 is already there
    with out.open("a") as f:
        f.write('{"qid": "torn')  # a killed run's half line is dropped, not an error
    items = load_mined(out)
    assert [question_key(it.question) for it in items] == ["t/q1", "t/q2"]
    assert [p.chunk.chunk_id for p in items[0].mined] == ["m1", "n1"]
    assert json.loads(out.read_text().splitlines()[0])["passages"][0]["chunk_id"] == "n1"


def test_positives_come_from_own_ranking_first_then_mined_once_each():
    own = [_p("a", "Unrelated."), _p("b", "Give pyridoxine.")]
    mined = [_p("b", "Give pyridoxine."), _p("c", "Pyridoxine and thiamine."), _p("d", "Pyridoxine daily.")]
    item = MinedItem(_q(), own, mined)
    assert [p.chunk.chunk_id for p in mined_positives(item, 5)] == ["b", "d"]  # c is ambiguous (thiamine too)
    assert [p.chunk.chunk_id for p in mined_positives(item, 1)] == ["b"]
    negated = MinedItem(_q(question="All prevent neuropathy EXCEPT:"), own, mined)
    assert mined_positives(negated, 5) == []


def test_triplets_take_hard_negatives_only_from_the_questions_own_ranking():
    own = [_p("n1", "Isoniazid is hepatotoxic."), _p("n2", "Tuberculosis needs six months.")]
    mined = [_p("m1", "Pyridoxine prevents the neuropathy."), _p("x", "Unrelated mined passage."),
             _p("m2", "Pyridoxine 10 mg daily.")]
    item = MinedItem(_q(), own, mined)
    q = _q().question
    assert mined_triplets([item]) == [(q, "Pyridoxine prevents the neuropathy.", "Isoniazid is hepatotoxic."),
                                      (q, "Pyridoxine 10 mg daily.", "Tuberculosis needs six months.")]
    # a positive without a negative left to pair is not used
    assert len(mined_triplets([MinedItem(_q(), own[:1], mined)])) == 1
    in_own = MinedItem(_q("q2"), [_p("p", "Pyridoxine."), *own], [])
    counts = mined_label_counts([item, in_own, MinedItem(_q("q3"), own, [])])
    assert counts == {"questions": 3, "usable_answer": 3, "positive_in_own_top_k": 1, "positive_only_mined": 1}


def test_near_duplicates_of_evaluated_questions_are_found_by_word_overlap():
    evaluated = [_q("e1", "A 45-year-old man on isoniazid develops numbness. Which vitamin was deficient?")]
    reworded = _q("t1", "A 45-year-old woman on isoniazid develops numbness. Which vitamin was deficient?")
    other = _q("t2", "Which drug reverses heparin?")
    assert near_duplicates([reworded, other], evaluated, 0.6) == {"t/t1"}
    assert near_duplicates([reworded, other], evaluated, 0.95) == set()


def test_evaluated_ids_are_each_sets_seeded_subset(monkeypatch):
    from medground.eval import datasets

    sets = {"a": [_q(f"{i:04d}", dataset="a") for i in range(10)], "b": [_q(f"{i:04d}", dataset="b") for i in range(10)]}
    monkeypatch.setattr(datasets, "load_dataset", lambda name: sets[name])
    keys, questions = evaluated_ids(["a", "b"], 3, seed=0)
    expected = {question_key(q) for name in sets for q in datasets.subset(sets[name], 3, seed=0)}
    assert keys == expected and len(keys) == 6 and len(questions) == 6  # same qids in two sets stay apart


def test_train_mine_never_mines_an_evaluated_question_or_its_near_duplicate(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from medground.eval import datasets
    from medground.pipelines import factory
    from medground.train.commands import app

    train = [_q(f"t{i}", f"Which vitamin number {i} prevents neuropathy?", dataset="tr") for i in range(8)]
    evaluated = [_q(f"e{i}", f"Which enzyme number {i} is inhibited by warfarin?", dataset="ev") for i in range(8)]
    copy = _q("copy", evaluated[0].question + " now", dataset="tr")  # an evaluated question, reworded
    sets = {"tr": [*train, copy], "ev": evaluated}
    monkeypatch.setattr(datasets, "load_dataset", lambda name: sets[name])
    monkeypatch.setattr(factory, "shared_engine", lambda settings: FakeEngine())
    out = tmp_path / "mined.jsonl"
    result = CliRunner().invoke(app, ["mine", "--out", str(out), "--dataset", "tr", "--evaluated", "ev",
                                      "--exclude-n", "8", "--config", "configs/pipelines/feedback.yaml"])
    assert result.exit_code == 0, result.output
    assert {question_key(it.question) for it in load_mined(out)} == {f"tr/t{i}" for i in range(8)}
