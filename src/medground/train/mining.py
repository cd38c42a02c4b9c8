"""Answer-aware positive mining: training questions whose answer-stating passage the question alone
does not retrieve.

Stored candidates (``train candidates``) can only label what the question's own top k holds, and
for textbook corpora that is rarely an answer-stating passage (8 % of MedMCQA dev questions in a
hybrid top 20). Mining also searches with the question *and its gold option's text*, and with
that text alone: a passage found that way which states the gold option (and no other) is a
positive the retriever should have ranked high for the question alone (DPR and RocketQA found
positives with the answer the same way). Hard negatives stay what the question alone ranks highest without the answer.

Questions that are evaluated are never mined: ``evaluated_ids`` names the seeded subsets the
benchmarks use, and ``near_duplicates`` drops training questions worded almost like one of them.
Rows are the candidates format plus a ``mined`` list, so ``load_candidates`` still reads them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from medground.schema import Passage, Question
from medground.train.biencoder import answer_labels
from medground.train.feedback import _candidate, _complete_lines, question_key, stored_passages, write_candidates


@dataclass(slots=True)
class MinedItem:
    question: Question
    passages: list[Passage]  # the question's own ranking (negatives come from here)
    mined: list[Passage]  # found with the gold option's text (``_mined_passages``; positives only)


def _mined_item(row: dict) -> MinedItem:
    question, passages = _candidate(row)
    _, mined = _candidate({**row, "passages": row["mined"]})
    return MinedItem(question, passages, mined)


def load_mined(path: str | Path) -> list[MinedItem]:
    """Every complete line of a mined-candidates file (a torn last line is left out)."""
    return _complete_lines(Path(path), "mined candidates", _mined_item)[0]


def mining_query(question: Question) -> str:
    """The question followed by its gold option's text."""
    return f"{question.question} {question.options[question.answer or '']}"


def _mined_passages(engine, question: Question, k: int) -> list[Passage]:
    """The top ``k`` for question + gold text, then the top ``k`` for the gold text alone (each chunk
    once): a long vignette drowns the few answer words in the first query, and a passage about
    the answer that none of the vignette's words find is what the retriever most needs to learn."""
    out, seen = [], set()
    for query in (mining_query(question), question.options[question.answer or ""]):
        for p in engine.retrieve(query, k=k):
            if p.chunk.chunk_id not in seen:
                seen.add(p.chunk.chunk_id)
                out.append(p)
    return out


def write_mined(engine, questions: Iterable[Question], out: str | Path, k: int, mined_k: int,
                *, progress: bool = False) -> int:
    """Append, per question, its own top ``k`` and the mined passages (``_mined_passages``)
    (JSONL, fsync'd; resumes: questions already in ``out`` are skipped). Returns questions written."""
    answered = [q for q in questions if (q.answer or "") in q.options]
    return write_candidates(engine, answered, out, k, progress=progress, desc="mining",
                            extra=lambda q: {"mined": stored_passages(_mined_passages(engine, q, mined_k))})


def mined_positives(item: MinedItem, max_positives: int) -> list[Passage]:
    """Answer-stating passages (``answer_labels`` == 1): the question's own first, then the mined
    ones, each chunk once; [] when the question cannot be labelled."""
    own = answer_labels(item.question, item.passages)
    found = answer_labels(item.question, item.mined)
    if own is None or found is None:
        return []
    out, seen = [], set()
    for p, y in [*zip(item.passages, own), *zip(item.mined, found)]:
        if y == 1 and p.chunk.chunk_id not in seen:
            seen.add(p.chunk.chunk_id)
            out.append(p)
    return out[:max_positives]


ReaderLabel = Callable[[Question, Passage], "int | None"]  # 1 helped, 0 did not, None not judged


def mined_triplets(items: Sequence[MinedItem], max_positives: int = 2,
                   reader_label: ReaderLabel | None = None) -> list[tuple[str, str, str]]:
    """(question, answer-stating passage, the question's highest-ranked passage not stating it),
    one hard negative per positive, in rank order. With ``reader_label`` (the reader's feedback
    on ``judged_passages``) a positive must also have helped the reader, and a negative must
    have been judged and not helped: the answer-stating labels verified by the LLM itself."""
    out = []
    for item in items:
        positives, negatives = _paired(item, max_positives)
        if reader_label is not None:
            negatives = [p for p in negatives if reader_label(item.question, p) == 0]
            positives = [p for p in positives if reader_label(item.question, p) == 1]
        for pos, neg in zip(positives, negatives):
            out.append((item.question.question, pos.chunk.text, neg.chunk.text))
    return out


def _paired(item: MinedItem, max_positives: int) -> tuple[list[Passage], list[Passage]]:
    """The answer-stating positives and, as many, the question's highest-ranked passages not
    stating the answer (their hard negatives); ([], []) when the item cannot be labelled."""
    labels = answer_labels(item.question, item.passages)
    if labels is None:
        return [], []
    negatives = [p for p, y in zip(item.passages, labels) if y == 0]
    positives = mined_positives(item, max_positives)
    n = min(len(positives), len(negatives))
    return positives[:n], negatives[:n]


def judged_passages(item: MinedItem, max_positives: int = 2) -> list[Passage]:
    """What the reader judges for a mined item: exactly the passages ``mined_triplets`` pairs,
    positives first; [] when the item yields no triplet."""
    positives, negatives = _paired(item, max_positives)
    return positives + negatives


class MinedJudgeSource:
    """Each mined item's ``judged_passages``, served by question text: the PassageSource
    ``feedback.collect`` judges from, so the reader's feedback on mined labels is collected,
    resumed and stored like any other feedback (one JSONL line per question)."""

    def __init__(self, items: Sequence[MinedItem], max_positives: int = 2):
        self._by_text: dict[str, list[Passage]] = {}
        self.questions: list[Question] = []
        for item in items:
            passages = judged_passages(item, max_positives)
            if passages and item.question.question not in self._by_text:
                self._by_text[item.question.question] = passages
                self.questions.append(item.question)

    def retrieve(self, queries: str, k: int | None = None) -> list[Passage]:
        try:
            passages = self._by_text[queries]
        except KeyError:
            raise KeyError(f"no mined item for question {queries[:80]!r}") from None
        return passages[:k]


def reader_labels(judgements: Iterable, rule: str = "gain", margin: float = 0.1) -> ReaderLabel:
    """``mined_triplets``' ``reader_label`` from feedback judgements (``feedback.Judgement``), looked
    up by question id, question text and chunk id (qids repeat across sets, and a text can repeat
    within one with other options: ``MinedJudgeSource`` judges the first); a parse failure counts
    as not judged."""
    table = {(j.qid, j.query, j.chunk_id): j.label(rule, margin) for j in judgements if not j.parse_failure}
    return lambda question, passage: table.get((question.qid, question.question, passage.chunk.chunk_id))


def mined_label_counts(items: Sequence[MinedItem]) -> dict[str, int]:
    """Questions, how many can be labelled, and how many have a positive in their own top k vs only
    through mining (what mining adds)."""
    counts = {"questions": len(items), "usable_answer": 0, "positive_in_own_top_k": 0, "positive_only_mined": 0}
    for item in items:
        own = answer_labels(item.question, item.passages)
        if own is None:
            continue
        counts["usable_answer"] += 1
        if 1 in own:
            counts["positive_in_own_top_k"] += 1
        elif mined_positives(item, 1):
            counts["positive_only_mined"] += 1
    return counts


_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def near_duplicates(questions: Sequence[Question], evaluated: Sequence[Question], threshold: float = 0.6
                    ) -> set[str]:
    """Keys (``question_key``) of ``questions`` whose word set has Jaccard similarity >= ``threshold`` with any
    evaluated question's (the same question reworded or copied between sets)."""
    ev = [_words(q.question) for q in evaluated]
    out = set()
    for q in questions:
        w = _words(q.question)
        if any(len(w & e) >= threshold * len(w | e) for e in ev if w or e):
            out.add(question_key(q))
    return out


def evaluated_ids(datasets: Sequence[str], n: int, seed: int) -> tuple[set[str], list[Question]]:
    """The keys (``question_key``) and questions of each dataset's seeded ``n``-question subset:
    what the benchmarks evaluate and training must never see."""
    from medground.eval.datasets import load_dataset, subset

    questions = [q for ds in datasets for q in subset(load_dataset(ds), n, seed=seed)]
    return {question_key(q) for q in questions}, questions


@dataclass(frozen=True, slots=True)
class CrossFit:
    """Cross-fitting: the questions of ``sets`` fall into ``folds`` stable folds (``fold_of`` their
    key); the model for ``fold`` trains on everything else and is evaluated on that fold, so every
    question of the sets is judged by a model that never saw it (or a near-duplicate of it)."""
    sets: tuple[str, ...]
    fold: int
    folds: int = 2
    seed: int = 0
    near_duplicate: float = 0.6

    def __post_init__(self) -> None:
        if self.folds < 2 or not 0 <= self.fold < self.folds:
            raise ValueError(f"cross-fit fold {self.fold} of {self.folds}: expected folds >= 2 and 0 <= fold < folds")
        if not self.sets:
            raise ValueError("cross-fitting needs at least one multiple-choice set")


def crossfit_questions(sets: Sequence[str], folds: int, seed: int = 0) -> dict[int, list[Question]]:
    """Every answerable question of ``sets``, by fold."""
    from medground.eval.datasets import load_dataset
    from medground.train.feedback import question_fold

    out: dict[int, list[Question]] = {f: [] for f in range(folds)}
    for ds in sets:
        for q in load_dataset(ds):
            if q.options and (q.answer or "") in q.options:
                out[question_fold(q, folds, seed)].append(q)
    return out


def crossfit_training(items: Sequence[MinedItem], crossfit: CrossFit) -> tuple[list[MinedItem], dict]:
    """The mined items fold ``crossfit.fold``'s model may train on: not in that fold, and not worded
    almost like one of its questions (any set, MedMCQA included); with counts of what was dropped."""
    evaluated = crossfit_questions(crossfit.sets, crossfit.folds, crossfit.seed)[crossfit.fold]
    keys = {question_key(q) for q in evaluated}
    outside = [it for it in items if question_key(it.question) not in keys]
    duplicates = near_duplicates([it.question for it in outside], evaluated, crossfit.near_duplicate)
    kept = [it for it in outside if question_key(it.question) not in duplicates]
    return kept, {"sets": list(crossfit.sets), "fold": crossfit.fold, "folds": crossfit.folds, "seed": crossfit.seed,
                  "evaluated_questions": len(evaluated), "dropped_in_fold": len(items) - len(outside),
                  "dropped_near_duplicates": len(outside) - len(kept), "near_duplicate": crossfit.near_duplicate}
