"""How the consultation typer (reading/consult_typer.py) is trained, as one value: a recipe.

The shipped model is one recipe applied to Medication QA's development part; the same recipe
applied to all of it but one fold (:func:`crossfit_fold`) types that fold's questions as it types
questions it never saw. Without that, every reply to a Medication QA development question (and to
a generated dialogue built from one) is read by a typer that learned that very question: the
development figure is in-sample and flatters the test part (session 36: 93.0 % vs 74.2 %).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from medground.reading.consult_typer import ConsultTyperModel, mask_names, train


@dataclass(frozen=True, slots=True)
class TyperRecipe:
    c: float = 4.0  # inverse regularization of the logistic regression
    mask: bool = True  # also train on each question with its drug named "this medicine"
    context: int = 0  # copies of each question with context sentences before it (train/typer_context.py)
    conditions: int = 0  # questions about a condition a contraindications item names
    banks: tuple[Path, ...] = field(default_factory=tuple)  # written question banks (train/typer_bank.py)
    relabels: Path | None = None  # a bank relabelling file
    bank_special: str | None = None  # the class the banks' special_populations questions are read as
    grams: float = 0.0  # weight of the word 1-2-gram block beside the embedding (0: none)
    stem: bool = False  # the word grams of word stems ("contraindication" = "contraindications")


def masked_question(question) -> str:
    """A Medication QA question with its focus drug (and each longer word of its name) read as
    "this medicine"."""
    focus = question.metadata.get("focus_drug") or ""
    return mask_names(question.question, [focus, *focus.split()])


def fit_typer(recipe: TyperRecipe, labelled: Sequence[tuple[object, str]], embedder) -> ConsultTyperModel:
    """Train on ``labelled`` (Medication QA questions with their typer class) and whatever else
    the recipe adds. The database is read only when the recipe asks for context, conditions or banks."""
    rows = [q.question for q, _ in labelled]
    labels = [lab for _, lab in labelled]
    vectors = [embedder.encode_queries(rows)]
    if recipe.mask:  # plain and masked both: it learns the question, not the drug
        masked = [masked_question(q) for q, _ in labelled]
        vectors.append(embedder.encode_queries(masked))
        rows, labels = rows + masked, labels * 2
    extra_texts: list[str] = []
    extra_labels: list[str] = []
    if recipe.context or recipe.conditions or recipe.banks:
        from medground.store.drugs import DrugStore

        store = DrugStore()
        if recipe.context:
            from medground.train.typer_context import ContextMaker

            maker = ContextMaker(store.drugs(), store.attributes(), seed=0)
            for q, lab in labelled:
                for _ in range(recipe.context):
                    extra_texts.append(maker.before(masked_question(q) if recipe.mask else q.question))
                    extra_labels.append(lab)
        if recipe.conditions:
            from medground.train.typer_context import condition_questions

            asked = condition_questions(store.attributes(), recipe.conditions, seed=0,
                                        drug_names=[name for name, _, _ in store.names()])
            extra_texts += asked
            extra_labels += ["contraindications"] * len(asked)
        if recipe.banks:
            from medground.train.typer_bank import load_bank, load_relabels, training_pairs

            relabels = load_relabels(recipe.relabels) if recipe.relabels else None
            bank = [item for path in recipe.banks for item in load_bank(Path(path), relabels)]
            texts, bank_labels = training_pairs(bank, [n for n, _, _ in store.names()],
                                                special_as=recipe.bank_special)
            extra_texts += texts
            extra_labels += bank_labels
    if extra_texts:
        vectors.append(embedder.encode_queries(extra_texts))
        rows, labels = rows + extra_texts, labels + extra_labels
    return train(np.vstack(vectors), labels, c=recipe.c, masks_names=recipe.mask, texts=rows,
                 gram_weight=recipe.grams, stem=recipe.stem)


def crossfit_fold(qid: str, folds: int) -> int:
    """The fold of a Medication QA question: a hash of its id alone, so a question (and every
    dialogue generated from it) keeps its fold whatever else is read."""
    if folds < 2:
        raise ValueError(f"cross-fitting needs at least 2 folds, got {folds}")
    h = hashlib.sha256(f"typer-crossfit:{qid}".encode()).digest()
    return int.from_bytes(h[:8], "big") % folds


def crossfit_path(folder: Path, fold: int, folds: int) -> Path:
    """Where the typer trained without ``fold`` of ``folds`` is kept in ``folder`` (one folder a
    recipe and its data: benchmarks/consult_e2e.py ``--crossfit``)."""
    return Path(folder) / f"fold{fold}of{folds}.npz"
