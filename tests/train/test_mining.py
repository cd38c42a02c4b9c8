"""Answer-aware positive mining: what is searched, what becomes a positive or a negative, what is excluded."""

from __future__ import annotations

import json

from medground.llm.base import ChatRequest, ChatResult, LLMSettings, TokenLogprob
from medground.schema import Chunk, Passage, Question
from medground.train.feedback import FeedbackSettings, collect, load_feedback
from medground.train.mining import (
    MinedItem,
    MinedJudgeSource,
    evaluated_ids,
    judged_passages,
    load_mined,
    mined_label_counts,
    mined_positives,
    mined_triplets,
    near_duplicates,
    question_key,
    reader_labels,
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
    from medground.cli.train import app

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


def test_fold_of_is_stable_balanced_and_independent_of_the_holdout_hash():
    from medground.train.feedback import fold_of, heldout

    keys = [f"s/q{i}" for i in range(2000)]
    folds = [fold_of(k, 2) for k in keys]
    assert folds == [fold_of(k, 2) for k in keys] and 900 < folds.count(0) < 1100
    assert folds != [fold_of(k, 2, seed=1) for k in keys]
    held = [heldout(k, 0.5) for k in keys]
    assert 0.4 < sum(f == 0 and h for f, h in zip(folds, held)) / max(1, folds.count(0)) < 0.6


def test_crossfit_training_leaves_out_the_fold_and_near_duplicates_from_every_set(monkeypatch):
    from medground.eval import datasets
    from medground.train.feedback import fold_of
    from medground.train.mining import CrossFit, crossfit_questions, crossfit_training

    # distinct wording per question (word-set Jaccard 0 between any two), so only the copy is a near-duplicate
    medqa = [_q(f"m{i}", " ".join(f"w{i}x{j}" for j in range(6)), dataset="medqa") for i in range(40)]
    monkeypatch.setattr(datasets, "load_dataset", lambda name: {"medqa": medqa}[name])
    by_fold = crossfit_questions(["medqa"], 2)
    assert sorted(question_key(q) for f in by_fold.values() for q in f) == sorted(question_key(q) for q in medqa)
    assert all(fold_of(question_key(q), 2) == f for f, qs in by_fold.items() for q in qs)
    in_fold = by_fold[0][0]
    copy = _q("c1", in_fold.question + " today", dataset="other")  # a fold-0 question reworded in another set
    unrelated = _q("u1", "How long is tuberculosis treated?", dataset="other")
    items = [MinedItem(q, [], []) for q in [*medqa, copy, unrelated]]
    kept, info = crossfit_training(items, CrossFit(("medqa",), fold=0))
    kept_keys = {question_key(it.question) for it in kept}
    assert kept_keys == {question_key(q) for q in by_fold[1]} | {"other/u1"}
    assert info["dropped_in_fold"] == len(by_fold[0]) and info["dropped_near_duplicates"] == 1
    assert info["evaluated_questions"] == len(by_fold[0])


def test_crossfit_rejects_a_fold_outside_the_split():
    import pytest

    from medground.train.mining import CrossFit

    with pytest.raises(ValueError, match="0 <= fold < folds"):
        CrossFit(("medqa",), fold=2, folds=2)


class PreventsLLM:
    """Answers A (the gold Pyridoxine) when its context says "prevents the", else B; records contexts."""

    name = "fake:prevents"
    fingerprint = "fake"

    def __init__(self):
        self.settings = LLMSettings(backend="openai", model="fake", cache=False)
        self.users: list[str] = []

    def complete(self, request: ChatRequest) -> ChatResult:
        user = request.messages[-1]["content"]
        self.users.append(user)
        top = [("A", -0.1), ("B", -2.5)] if "prevents the" in user else [("B", -0.2), ("A", -1.8)]
        return ChatResult(text=top[0][0], logprobs=[TokenLogprob(top[0][0], top[0][1], top)], completion_tokens=1)

    def chat(self, messages, **kw) -> ChatResult:
        return self.complete(ChatRequest(messages=messages, **{k: v for k, v in kw.items() if v is not None}))


def test_reader_feedback_on_mined_labels_keeps_only_what_helped_the_reader(tmp_path):
    own = [_p("n1", "Isoniazid is hepatotoxic; it prevents the cure."), _p("n2", "Tuberculosis needs six months."),
           _p("n3", "Never judged.")]
    mined = [_p("m1", "Pyridoxine prevents the neuropathy."), _p("m2", "Pyridoxine 10 mg daily.")]
    item = MinedItem(_q(), own, mined)
    unusable = MinedItem(_q("q2", question="All prevent neuropathy EXCEPT:"), own, mined)
    # the reader judges exactly the triplets' passages: each positive and its paired negative
    assert [p.chunk.chunk_id for p in judged_passages(item)] == ["m1", "m2", "n1", "n2"]
    assert judged_passages(unusable) == []
    source = MinedJudgeSource([item, unusable])
    assert [q.qid for q in source.questions] == ["q1"]

    llm, out = PreventsLLM(), tmp_path / "judged.jsonl"
    report = collect(llm, source, source.questions, out, FeedbackSettings(passages=4, rule="gain"))
    assert (report.questions, report.judgements) == (1, 4)
    assert sum("Pyridoxine 10 mg daily." in u for u in llm.users) == 1  # each passage read once, as context
    label = reader_labels(load_feedback(out), "gain", 0.1)
    assert [label(_q(), p) for p in [*mined, *own]] == [1, 0, 1, 0, None]
    assert label(_q("q9"), mined[0]) is None  # the same text under another id was not judged
    # m2 did not help the reader; n1 helped it, so it is no negative either: one triplet is left
    q = _q().question
    assert mined_triplets([item], reader_label=label) == [
        (q, "Pyridoxine prevents the neuropathy.", "Tuberculosis needs six months.")]
    assert len(mined_triplets([item])) == 2  # without the reader's feedback both stand
