"""Fit the consultation reply's weights on development examples (never on a test split).

Each example is read once with the raw signals kept (P(type), P(none), every entry's best item
similarity); the grid is then scored from those, so a grid of hundreds of settings costs one
pass. The objective counts what a user sees: an answerable example is right when the chosen
entry is the gold drug + type and the reply does not abstain; an unanswerable one when it abstains.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from medground.drug_schema import AttributeType
from medground.reading.consult import ConsultReader
from medground.reading.consult_settings import ConsultReplySettings
from medground.reading.consult_types import held_and_elsewhere, no_entry_relates


@dataclass(slots=True)
class FitExample:
    turns: list[str]
    subject: str  # drug id
    others: list[str]
    gold_type: str | None  # None: no entry answers (the reply should abstain)


@dataclass(slots=True)
class _Signals:
    drugs: list[str]
    types: list[AttributeType]
    p_type: np.ndarray
    best_sim: np.ndarray
    p_verify: np.ndarray | None  # the LLM verifier's probabilities (0 beyond its candidates)
    p_none: float
    top_type: AttributeType | None
    held: set
    p_elsewhere: float  # P(a type the subject drug has no entry of)


GRID = {"item_weight": [1.0, 2.0, 4.0, 6.0, 8.0], "item_floor": [0.3, 0.4, 0.5],
        "match_at": [0.45, 0.5, 0.55, 0.6, 0.65], "none_above": [0.3, 0.4, 0.5, 0.6, 0.7],
        "elsewhere_above": [0.5, 0.6, 0.7, 0.8, 0.9, 1.01]}


def signals(reader: ConsultReader, ex: FitExample, verify: bool = False) -> _Signals:
    # The raw signals (P(type), best item similarity) do not depend on the weights being fitted;
    # the verifier is shown the candidates the reader's own settings rank first.
    choices, p_none, p_type, _, _ = reader.choose(ex.turns, ex.subject, ex.others)
    if verify and reader.verifier is not None and len(choices) > 1:
        reader.verify(ex.turns, choices)
    top = max(p_type, key=p_type.get) if p_type else None
    held, elsewhere = held_and_elsewhere(choices, ex.subject, p_type)
    return _Signals([c.drug.drug_id for c in choices], [c.attribute.type for c in choices],
                    np.array([c.p_type for c in choices]),
                    np.array([c.best.similarity if c.best else 0.0 for c in choices]),
                    np.array([c.p_verify or 0.0 for c in choices]) if verify else None, p_none, top,
                    held, elsewhere)


def outcome(sig: _Signals, s: ConsultReplySettings) -> tuple[str | None, str | None, bool]:
    """(chosen drug, chosen type, abstained) under settings ``s`` — the rule of ConsultReader.reply."""
    if not sig.types:
        return None, None, True
    score = np.log(sig.p_type + 1e-3) + s.item_weight * np.maximum(0.0, sig.best_sim - s.item_floor)
    if sig.p_verify is not None and s.verify_weight:
        score = score + s.verify_weight * np.log(sig.p_verify + 1e-3)
    i = int(np.argmax(score))
    matched = sig.best_sim[i] >= s.match_at
    abstain = not matched and no_entry_relates(sig.p_none, sig.top_type, sig.held, sig.p_elsewhere, s,
                                               float(sig.best_sim[i]))
    return sig.drugs[i], sig.types[i].value, abstain


def correct(ex: FitExample, sig: _Signals, s: ConsultReplySettings) -> bool:
    drug, typ, abstain = outcome(sig, s)
    if ex.gold_type is None:
        return abstain
    return not abstain and drug == ex.subject and typ == ex.gold_type


@dataclass(slots=True)
class FitResult:
    settings: ConsultReplySettings
    objective: float
    per_value: dict[str, dict[str, float]]  # setting -> value -> the best objective with that value
    signals: list[_Signals]


def fit(reader: ConsultReader, examples: Sequence[FitExample], grid: dict | None = None,
        weights: Sequence[float] | None = None, verify: bool = False,
        readers: Sequence[ConsultReader] | None = None) -> FitResult:
    """The grid point with the highest (weighted) share of correct examples; ties go to the
    earliest point of the grid (the simplest settings first). ``readers``: one per example (a
    reader whose typer never saw that example's question), else ``reader`` reads them all."""
    grid = grid or GRID
    readers = readers or [reader] * len(examples)
    if len(readers) != len(examples):
        raise ValueError(f"{len(readers)} readers for {len(examples)} examples: give one per example")
    sigs = [signals(r, ex, verify) for r, ex in zip(readers, examples)]
    w = np.ones(len(examples)) if weights is None else np.asarray(weights, dtype=float)
    best, best_acc = reader.settings, -1.0
    keys = list(grid)
    per_value: dict[str, dict] = {k: {} for k in keys}  # each value's best objective over the rest of the grid
    for values in itertools.product(*(grid[k] for k in keys)):
        s = reader.settings.model_copy(update=dict(zip(keys, values)))
        acc = float(np.dot(w, [correct(ex, sig, s) for ex, sig in zip(examples, sigs)]) / w.sum())
        for k, v in zip(keys, values):
            per_value[k][v] = max(per_value[k].get(v, 0.0), acc)
        if acc > best_acc + 1e-12:
            best, best_acc = s, acc
    table = {k: {str(v): round(a, 4) for v, a in per_value[k].items()} for k in keys}
    return FitResult(best, best_acc, table, sigs)
