"""Pairwise answer comparison by an LLM judge, both orders, ties allowed → Elo (eval/elo.py).

The judge is an ordinary LLM setting (``LLMSettings``): an OpenAI-compatible endpoint for a
strong judge (GPT-4-class, as RagPULSE used), or the local model here, whose limits must be
stated with its ratings. For each question and pair of systems the judge reads the two answers
twice, once in each order, and its verdict letter is read from one forward pass (A = first
better, B = second better, C = equally good). The two verdicts are mapped back to the systems:
agreeing verdicts decide, disagreeing ones (position bias) count as a tie. A verdict that cannot
be read counts as a failure, never as a tie or a win.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from medground.eval.elo import Judgment, Winner, elo_bootstrap
from medground.llm.base import LLM
from medground.llm.scoring import score_options

SYSTEM = ("You are a senior pharmacist grading answers to a patient's medication question. Judge correctness "
          "first, then whether the answer is supported by evidence and useful to the patient. Length is no merit.")
ASK = ("Consultation:\n{question}\n\nAnswer A:\n{a}\n\nAnswer B:\n{b}\n\n"
       "Which answer is better? Reply with one letter: A (answer A is better), B (answer B is better) "
       "or C (they are equally good).")


@dataclass(slots=True)
class PairVerdict:
    qid: str
    a: str
    b: str
    first: str | None  # the verdict letter with a shown first
    second: str | None  # with b shown first
    winner: Winner | None  # None = the judge could not be read


@dataclass(slots=True)
class Tournament:
    verdicts: list[PairVerdict] = field(default_factory=list)

    @property
    def judgments(self) -> list[Judgment]:
        return [Judgment(v.a, v.b, v.winner) for v in self.verdicts if v.winner is not None]

    @property
    def failures(self) -> int:
        return sum(v.winner is None for v in self.verdicts)

    def position_disagreements(self) -> int:
        """Pairs whose two orders gave different systems the win (the judge's position bias)."""
        return sum(v.first is not None and v.second is not None and v.winner == "tie"
                   and {v.first, v.second} != {"C"} for v in self.verdicts)


def verdict(llm: LLM, question: str, first: str, second: str) -> str | None:
    msgs = [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": ASK.format(question=question.strip(), a=first.strip(), b=second.strip())}]
    s = score_options(llm, msgs, ["A", "B", "C"])
    return s.choice if s.outcome == "answered" else None


def combine(first: str | None, second: str | None) -> Winner | None:
    """Verdict letters of (a, b) and (b, a) → the winner between a and b."""
    if first is None or second is None:
        return None
    a_first = {"A": "a", "B": "b", "C": "tie"}[first]
    a_second = {"A": "b", "B": "a", "C": "tie"}[second]  # b was shown first
    return a_first if a_first == a_second else "tie"


def run_tournament(llm: LLM, questions: Mapping[str, str], answers: Mapping[str, Mapping[str, str]], *,
                   seed: int = 0) -> Tournament:
    """Every pair of systems on every question (``answers[system][qid]``), in a seeded order."""
    systems = sorted(answers)
    jobs = [(qid, a, b) for qid in sorted(questions) for a, b in itertools.combinations(systems, 2)
            if qid in answers[a] and qid in answers[b]]
    random.Random(seed).shuffle(jobs)  # Elo is order-dependent: a seeded order, bootstrapped below
    t = Tournament()
    for qid, a, b in jobs:
        first = verdict(llm, questions[qid], answers[a][qid], answers[b][qid])
        second = verdict(llm, questions[qid], answers[b][qid], answers[a][qid])
        t.verdicts.append(PairVerdict(qid, a, b, first, second, combine(first, second)))
    return t


def ratings(t: Tournament, *, n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """Elo with bootstrap 95 % intervals, best first, plus win/tie/loss counts per system."""
    if not t.judgments:
        return []
    ci = elo_bootstrap(t.judgments, n_boot=n_boot, seed=seed)
    record: dict[str, dict[str, int]] = {s: {"wins": 0, "ties": 0, "losses": 0} for s in ci}
    for j in t.judgments:
        if j.winner == "tie":
            record[j.a]["ties"] += 1
            record[j.b]["ties"] += 1
        else:
            won, lost = (j.a, j.b) if j.winner == "a" else (j.b, j.a)
            record[won]["wins"] += 1
            record[lost]["losses"] += 1
    rows = [{"system": s, "elo": round(c.rating, 1), "ci95": [round(c.low, 1), round(c.high, 1)], **record[s]}
            for s, c in ci.items()]
    return sorted(rows, key=lambda r: -r["elo"])
