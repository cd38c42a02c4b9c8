"""The flows behind `medground train biencoder` and `train reranker`: load labels, split them by
question (stable), train on one side, check on the other, write heldout_eval.json beside the
model. Failures a user can fix (no triplets, a wrong --answers set, an unknown rule) raise
TrainInputError, which the CLI turns into a clean exit 2."""

from __future__ import annotations

import json
import logging
from dataclasses import asdict
from pathlib import Path

log = logging.getLogger(__name__)


class TrainInputError(ValueError):
    """A failure the user can fix by changing the command (no triplets, a wrong --answers set)."""


def fine_tune_on_answers(candidates_files: list[Path], out: Path, holdout: float, seed: int, max_positives: int,
                          settings, known: list[tuple[str, str]]) -> dict:
    """The bi-encoder on answer-containment labels from stored candidates, through the same
    split / train / check flow as the feedback labels."""
    from medground.train.biencoder import answer_label_counts, answer_triplets, rank_candidates, train_biencoder
    from medground.train.feedback import load_candidates

    def train(side: list) -> object:
        triplets = answer_triplets(side, max_positives)
        if not triplets:
            raise ValueError(f"no training triplets: none of the {len(side)} training questions has a stored passage "
                             "stating its gold option's text and one not stating it (store more passages per "
                             "question with `train candidates --passages`)")
        return train_biencoder(triplets, out, settings, known_items=known)

    items = [it for f in candidates_files for it in load_candidates(f)]
    return train_and_check(items, lambda it: it[0].qid, out, holdout, seed, train=train,
                    check=lambda side: {"base": rank_candidates(side, settings.base_model),
                                        "fine_tuned": rank_candidates(side, out)},
                    describe=lambda tr, te: {"rule": "answer", "max_positives": max_positives,
                                             "labels": {"train": answer_label_counts(tr),
                                                        "heldout": answer_label_counts(te)}})


def fine_tune_on_mined(mined_files: list[Path], out: Path, holdout: float, seed: int, max_positives: int,
                        settings, known: list[tuple[str, str]], crossfit=None, judged=None) -> dict:
    """The bi-encoder on answer-aware mined labels; the held-out check orders each held-out
    question's own candidates, as for --candidates. With ``crossfit`` (``mining.CrossFit``) its
    fold is left out first. With ``judged`` (judgements, rule, margin) only the questions the reader
    judged are kept and their labels must agree with its feedback. The keys of the questions
    trained on go to trained_questions.txt beside the model, so evaluations can audit what it saw."""
    from medground.train.biencoder import rank_candidates, train_biencoder
    from medground.train.mining import (
        crossfit_training,
        load_mined,
        mined_label_counts,
        mined_triplets,
        question_key,
        reader_labels,
    )

    reader_label = None
    judged_info = None
    asked: set[str] | None = None
    if judged is not None:
        judgements, rule, margin = judged
        reader_label = reader_labels(judgements, rule, margin)
        asked = {(j.qid, j.query) for j in judgements}
        judged_info = {"rule": rule, "margin": margin}

    def train(side: list) -> object:
        if asked is not None:  # only the questions the reader judged (the held-out check keeps them all)
            side = [it for it in side if (it.question.qid, it.question.question) in asked]
            judged_info["judged_training_questions"] = len(side)
        triplets = mined_triplets(side, max_positives, reader_label)
        if not triplets:
            raise ValueError(f"no training triplets: none of the {len(side)} training questions has an answer-stating "
                             "passage (own or mined) and a stored passage not stating it"
                             + (", both judged as such by the reader (--judged)" if asked is not None else ""))
        report = train_biencoder(triplets, out, settings, known_items=known)
        (out / "trained_questions.txt").write_text("".join(f"{question_key(it.question)}\n" for it in side))
        return report

    items = [it for f in mined_files for it in load_mined(f)]
    crossfit_info = None
    if crossfit is not None:
        items, crossfit_info = crossfit_training(items, crossfit)
        log.warning("%s", json.dumps({"crossfit": crossfit_info}))
    return train_and_check(items, lambda it: question_key(it.question), out, holdout, seed, train=train,
                    check=lambda side: {"base": rank_candidates([(it.question, it.passages) for it in side],
                                                                settings.base_model),
                                        "fine_tuned": rank_candidates([(it.question, it.passages) for it in side], out)},
                    describe=lambda tr, te: {"rule": "answer (mined)" + (" + reader feedback" if judged else ""),
                                             "max_positives": max_positives,
                                             "files": [str(f) for f in mined_files],
                                             **({"reader_feedback": judged_info} if judged_info else {}),
                                             **({"crossfit": crossfit_info} if crossfit_info else {}),
                                             "labels": {"train": mined_label_counts(tr),
                                                        "heldout": mined_label_counts(te)}})


def fine_tune(feedback_files: list[Path], out: Path, rule: str, margin: float, holdout: float, seed: int, *,
               train, check, answers: str | None = None) -> dict:
    """What both fine-tuning commands do: load the feedback (marking the passages that state the
    gold answer, if ``answers`` names the dataset), split it by question (stable), train on one
    side, check on the other, and write heldout_eval.json beside the model."""
    from medground.train.feedback import gold_answers, load_feedback, mark_answers

    if rule not in {"flip", "gain", "verified"}:
        raise TrainInputError("--rule: expected flip, gain or verified")
    if rule == "verified" and not answers:
        raise TrainInputError("--answers: rule verified needs --answers DATASET (the feedback's question set)")
    judgements = [j for f in feedback_files for j in load_feedback(f)]
    if answers:
        try:
            judgements = mark_answers(judgements, gold_answers(answers))
        except (ValueError, KeyError) as exc:
            raise TrainInputError(f"--answers {answers}: {exc}") from None
    return train_and_check(judgements, lambda j: j.qid, out, holdout, seed, train=train, check=check,
                    describe=lambda tr, te: {"rule": rule, "margin": margin, "answers": answers,
                                             "heldout_questions": len({j.qid for j in te})})


def train_and_check(items: list, qid_of, out: Path, holdout: float, seed: int, *, train, check, describe) -> dict:
    """Split the labelled items by question (stable), train on one side, check on the other, and
    write heldout_eval.json beside the model; a ValueError from training is a TrainInputError."""
    from medground.train.feedback import heldout

    train_side = [x for x in items if not heldout(qid_of(x), holdout, seed)]
    test_side = [x for x in items if heldout(qid_of(x), holdout, seed)]
    try:
        report = train(train_side)
    except ValueError as exc:
        raise TrainInputError(str(exc)) from None
    result: dict = {"train": asdict(report), "split": {"holdout": holdout, "seed": seed},
                    **describe(train_side, test_side)}
    if test_side:
        try:
            result["heldout"] = check(test_side)
        except ValueError as exc:
            result["heldout"] = {"error": str(exc)}
    (out / "heldout_eval.json").write_text(json.dumps(result, indent=2) + "\n")
    return result
