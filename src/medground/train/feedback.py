"""Relevance labels from LLM feedback (LLM-AMT's retriever fine-tuning signal).

For a multiple-choice question with a gold answer, the reader scores the options closed book,
then once with each retrieved passage as context. A passage is *positive* when it turns a
wrong closed-book answer right (rule ``flip``, LLM-AMT); every other retrieved passage is a
*hard negative* (retrieved, yet no help). Rule ``gain`` labels by how much the passage raises
the probability of the gold letter instead, which also yields positives for questions the
model already gets right; rule ``verified`` keeps only ``gain`` positives that also state the
gold option's text (``mark_answers``), and a passage that states it is never a hard negative.
Both probabilities are kept, so the rule can be changed afterwards without calling the LLM again.

Judgements go to a JSONL file, one line per question (all its passages), appended and fsync'd:
an interrupted collection resumes at the first question without a complete line, and nothing
written before is lost.

Retrieval and judging can run apart: ``write_candidates`` stores each question's retrieved
passages (cheap, needs the indexes), and ``CandidateSet`` serves them back to ``collect`` in
place of the retrieval engine, so the LLM half runs where the GPU is, with no index there.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from medground.eval.records import lock_for_writing
from medground.llm.base import LLM
from medground.llm.scoring import mcq_messages, score_options
from medground.retrieve.pack import citation_for
from medground.schema import Chunk, Evidence, Passage, Question

if TYPE_CHECKING:
    from medground.retrieve.engine import RetrievalEngine


class FeedbackSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    passages: int = Field(8, ge=1, description="retrieved passages judged per question")
    rule: Literal["flip", "gain"] = "flip"
    margin: float = Field(0.1, gt=0, le=1, description="rule gain: rise in P(gold) that makes a positive")


@dataclass(slots=True)
class Judgement:
    qid: str
    query: str  # what the retriever was asked (the question stem)
    chunk_id: str
    passage: str
    rank: int  # 1-based rank in the first-stage list
    base_correct: bool  # closed book
    with_correct: bool  # with this passage as context
    base_gold_prob: float
    with_gold_prob: float
    parse_failure: bool = False  # the reader put no mass on any letter: not a usable judgement
    # Whether the gold option's text is in the passage (whole words; ``mark_answers``); None = not checked.
    answer_in_passage: bool | None = None

    def label(self, rule: str = "flip", margin: float = 0.1) -> int:
        if self.parse_failure:
            return 0
        if rule == "flip":
            return int(not self.base_correct and self.with_correct)
        gain = self.with_gold_prob - self.base_gold_prob >= margin
        if rule == "verified":
            if self.answer_in_passage is None:
                raise ValueError("rule 'verified' needs the gold answers marked (mark_answers / --answers DATASET)")
            return int(gain and self.answer_in_passage)
        return int(gain)

    @property
    def may_be_negative(self) -> bool:
        """A passage that holds the gold answer's text is never used as a hard negative: the small
        reader failing to profit from it says more about the reader than the passage."""
        return self.answer_in_passage is not True


@dataclass(slots=True)
class FeedbackReport:
    questions: int  # judged in this call
    resumed: int  # already in the file, skipped
    skipped: int  # not usable (no options or no gold letter)
    judgements: int
    positives: int
    parse_failures: int
    seconds: float = 0.0  # wall time of this call's judging
    questions_with_positive: int = 0


def _complete_lines(path: Path, what: str, parse):
    """``parse(row)`` of every complete JSONL line, and the byte length they span: bytes after the
    last newline are a torn write (killed mid-line) and are left out. A bad complete line is an
    error naming the file and line."""
    if not path.is_file():
        return [], 0
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    out = []
    for i, line in enumerate(data[:end].decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(parse(json.loads(line)))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{i}: not a {what} line ({type(exc).__name__}: {exc})") from exc
    return out, end


def _appendable(path: Path, end: int) -> None:
    """Drop a torn last line so appends start on a clean line."""
    if path.is_file() and path.stat().st_size > end:
        os.truncate(path, end)


class PassageSource(Protocol):
    """What ``judge`` retrieves from: a RetrievalEngine or a CandidateSet."""

    def retrieve(self, queries: str, k: int | None = None) -> list[Passage]: ...


def question_key(question: Question) -> str:
    """qids repeat across datasets (MedQA's are "0000" …), so a stored question is named by both."""
    return f"{question.dataset}/{question.qid}"


def stored_passages(passages: Iterable[Passage]) -> list[dict]:
    return [{"chunk_id": p.chunk.chunk_id, "text": p.chunk.text, "score": p.score, "source": p.source}
            for p in passages]


def write_candidates(engine: RetrievalEngine, questions: Iterable[Question], out: str | Path, k: int,
                     *, progress: bool = False, extra: Callable[[Question], dict] | None = None,
                     desc: str = "retrieving candidates") -> int:
    """Append each question's top ``k`` passages to ``out`` (JSONL, fsync'd; questions already
    there are skipped), plus the fields ``extra(question)`` returns (``train mine``'s mined
    passages). Returns the number of questions written."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows, end = _complete_lines(out, "candidates", _candidate)
    _appendable(out, end)
    done = {question_key(q) for q, _ in rows}
    todo = [q for q in questions if question_key(q) not in done]
    if progress:
        from tqdm import tqdm

        todo = tqdm(todo, desc=desc, unit="q")
    n = 0
    with out.open("a", encoding="utf-8") as f:
        for q in todo:
            row = {"qid": q.qid, "dataset": q.dataset, "question": q.question, "options": q.options,
                   "answer": q.answer, "passages": stored_passages(engine.retrieve(q.question, k=k)),
                   **(extra(q) if extra else {})}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
            n += 1
    return n


def _candidate(row: dict) -> tuple[Question, list[Passage]]:
    q = Question(qid=row["qid"], dataset=row.get("dataset", ""), question=row["question"],
                 options=row["options"], answer=row["answer"])
    passages = [Passage(Chunk(chunk_id=p["chunk_id"], doc_id="", corpus="", source_path="", text=p["text"], title=""),
                        float(p.get("score", 0.0)), p.get("source", "stored"), rank)
                for rank, p in enumerate(row["passages"], start=1)]
    return q, passages


def load_candidates(path: str | Path) -> list[tuple[Question, list[Passage]]]:
    """(question, its stored passages in rank order) per complete line of a candidates file."""
    return _complete_lines(Path(path), "candidates", _candidate)[0]


class CandidateSet:
    """Stored retrievals served by question text (a PassageSource for ``collect``)."""

    def __init__(self, path: str | Path):
        self.items = load_candidates(path)
        self._by_text = {q.question: ps for q, ps in self.items}

    @property
    def questions(self) -> list[Question]:
        return [q for q, _ in self.items]

    def retrieve(self, queries: str, k: int | None = None) -> list[Passage]:
        try:
            passages = self._by_text[queries]
        except KeyError:
            raise KeyError(f"no stored candidates for question {queries[:80]!r}") from None
        if k is not None and k > len(passages):
            raise ValueError(f"{k} passages asked for, {len(passages)} stored for {queries[:60]!r}")
        return passages[:k]


def _gold_prob(probs: dict[str, float], gold: str) -> float:
    return float(probs.get(gold, 0.0))


def judge(llm: LLM, engine: PassageSource, question: Question, settings: FeedbackSettings) -> list[Judgement]:
    """Closed-book and per-passage letter scores for one question (1 + ``passages`` forward passes)."""
    letters = list(question.options)
    gold = question.answer or ""
    # the reader's own prompt, the passage shown as the reader shows evidence ("[1] (Book / …) text")
    base = score_options(llm, mcq_messages(question.question, question.options), letters)
    base_ok = base.outcome == "answered" and base.choice == gold
    out = []
    for rank, p in enumerate(engine.retrieve(question.question, k=settings.passages), start=1):
        shown = Evidence([citation_for(1, p)], token_count=0, budget=0).render()
        with_p = score_options(llm, mcq_messages(question.question, question.options, context=shown), letters)
        out.append(Judgement(
            qid=question.qid, query=question.question, chunk_id=p.chunk.chunk_id, passage=p.chunk.text, rank=rank,
            base_correct=base_ok, with_correct=with_p.outcome == "answered" and with_p.choice == gold,
            base_gold_prob=_gold_prob(base.probs, gold), with_gold_prob=_gold_prob(with_p.probs, gold),
            parse_failure=with_p.outcome != "answered" or base.outcome != "answered"))
    return out


def load_feedback(path: str | Path) -> list[Judgement]:
    """Judgements from a feedback file; a torn last line (killed mid-write) is ignored."""
    return [j for _, js in _questions(Path(path))[0] for j in js]


def _questions(path: Path) -> tuple[list[tuple[str, list[Judgement]]], int]:
    """Complete lines as (qid, judgements), and the byte length they span (a torn tail excluded)."""
    return _complete_lines(path, "feedback", lambda row: (row["qid"], [Judgement(**j) for j in row["judgements"]]))


def collect(llm: LLM, engine: PassageSource, questions: Iterable[Question], out: str | Path,
            settings: FeedbackSettings | None = None, *, progress: bool = False) -> FeedbackReport:
    """Judge ``questions`` into ``out`` (JSONL), skipping those already there."""
    settings = settings or FeedbackSettings()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as f:
        lock_for_writing(f, out, FeedbackLockedError, " (`train feedback` or `train judge-mined`): wait for it, "
                                                      "or write to another --out")
        return _collect_locked(llm, engine, questions, out, f, settings, progress)


class FeedbackLockedError(RuntimeError):
    """Another process is collecting into the same feedback file."""


def _collect_locked(llm: LLM, engine: PassageSource, questions: Iterable[Question], out: Path, f,
                    settings: FeedbackSettings, progress: bool) -> FeedbackReport:
    rows, end = _questions(out)
    done = {qid for qid, _ in rows}
    _appendable(out, end)
    todo, skipped = [], 0
    for q in questions:
        if q.qid in done:
            continue
        if not q.options or (q.answer or "") not in q.options:
            skipped += 1
            continue
        todo.append(q)
    if progress:
        from tqdm import tqdm

        todo = tqdm(todo, desc="LLM feedback", unit="q")
    judged = positives = failures = n_q = with_positive = 0
    started = time.perf_counter()
    for q in todo:
        js = judge(llm, engine, q, settings)
        f.write(json.dumps({"qid": q.qid, "judgements": [asdict(j) for j in js]}, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
        n_q += 1
        judged += len(js)
        labels = [j.label(settings.rule, settings.margin) for j in js]
        positives += sum(labels)
        with_positive += any(labels)
        failures += sum(j.parse_failure for j in js)
    return FeedbackReport(questions=n_q, resumed=len(done), skipped=skipped, judgements=judged,
                          positives=positives, parse_failures=failures, seconds=round(time.perf_counter() - started, 2),
                          questions_with_positive=with_positive)


def mark_answers(judgements: Sequence[Judgement], answers: Mapping[str, str]) -> list[Judgement]:
    """Copies with ``answer_in_passage`` set from each question's gold option text (``answers``:
    qid -> text). Rule ``verified`` then takes as positive only a passage that both raised P(gold)
    and states the answer: with a near-chance reader most ``gain`` positives hold no answer at all."""
    from medground.eval.retrieval_metrics import contains_answer

    missing = sorted({j.qid for j in judgements} - set(answers))
    if missing:
        raise ValueError(f"no gold answer for {len(missing)} judged question(s), e.g. {missing[0]!r}: "
                         "--answers must name the dataset the feedback was collected on")
    return [replace(j, answer_in_passage=contains_answer(j.passage, answers[j.qid])) for j in judgements]


def gold_answers(dataset: str) -> dict[str, str]:
    """qid -> the gold option's text, for every question of a multiple-choice dataset with a gold letter."""
    from medground.eval.datasets import load_dataset

    return {q.qid: q.options[q.answer] for q in load_dataset(dataset) if q.answer and q.answer in q.options}


def by_question(judgements: Sequence[Judgement]) -> dict[str, list[Judgement]]:
    """Usable judgements (the reader answered) per question, in first-stage rank order."""
    out: dict[str, list[Judgement]] = {}
    for j in judgements:
        if not j.parse_failure:
            out.setdefault(j.qid, []).append(j)
    return {qid: sorted(js, key=lambda j: j.rank) for qid, js in out.items()}


def _stable_hash(purpose: str, seed: int, qid: str) -> int:
    """32 bits of sha256 over purpose, seed and question id: the same on every machine and run,
    independent of file order, and different per purpose (a fold is no held-out share)."""
    return int(hashlib.sha256(f"{purpose}\x1f{seed}\x1f{qid}".encode()).hexdigest()[:8], 16)


def heldout(qid: str, share: float, seed: int = 0) -> bool:
    """A stable train / held-out split by question id (independent of file order)."""
    return _stable_hash("holdout", seed, qid) / 0xFFFFFFFF < share


def fold_of(qid: str, folds: int, seed: int = 0) -> int:
    """A stable fold (0 .. folds-1) by question id, for cross-fitting."""
    return _stable_hash("fold", seed, qid) % folds


def question_fold(question: Question, folds: int, seed: int = 0) -> int:
    """A question's cross-fit fold: training (``mining.crossfit_questions``) and evaluation
    (a dataset spec's ``crossfit``) must split by this one function, or a fold's model would be
    read on questions it trained on."""
    return fold_of(question_key(question), folds, seed)


def training_pairs(judgements: Sequence[Judgement], rule: str = "flip", margin: float = 0.1,
                   *, only_questions_with_positive: bool = True,
                   max_negatives: int | None = None) -> list[tuple[str, str, int]]:
    """(query, passage, label) rows; by default only questions that have a positive, so every
    negative is a hard negative against a passage that did help. ``max_negatives`` keeps, per
    question, only the negatives that left the gold answer least likely (a smaller, harder set)."""
    rows = []
    for js in by_question(judgements).values():
        labels = [j.label(rule, margin) for j in js]
        if only_questions_with_positive and not any(labels):
            continue
        keep = {id(j) for j, y in zip(js, labels) if y}
        negatives = sorted((j for j, y in zip(js, labels) if not y and j.may_be_negative),
                           key=lambda j: j.with_gold_prob)
        keep |= {id(j) for j in negatives[:max_negatives]} if max_negatives is not None else {id(j) for j in negatives}
        rows += [(j.query, j.passage, y) for j, y in zip(js, labels) if id(j) in keep]
    return rows
