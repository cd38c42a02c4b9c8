"""The LLM's checks of a consultation's chosen entries: its closest items, one yes/no each
(``check_items``), and which candidate entry answers (``verify``, weighed in by ``combined``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from medground.reading.consult_settings import CHECKED_TYPES, ConsultReplySettings
from medground.reading.consult_types import EntryChoice, record_citation


def check_items(item_checker, s: ConsultReplySettings, question: str, choice: EntryChoice) -> None:
    """The LLM checks the chosen list entry's ``item_check`` closest short items against the
    patient's last turn: an affirmed item's similarity becomes its P(yes), a denied one's 0.
    It decides which items the reply names, never which entry: asked across entries it
    affirms what the patient mentions in passing ("for my hair loss" → the indication), not
    what they ask about."""
    if (not s.item_check or item_checker is None or not question.strip()
            or choice.attribute.type not in CHECKED_TYPES):
        return
    # a label section's long lines are quoted by closeness, not matched as one thing
    short = [m for m in choice.items if m.similarity >= s.item_check_floor and len(m.text) <= 80]
    ask = short[: s.item_check]
    if not ask:
        return
    for m, p in zip(ask, item_checker(question[: s.item_check_chars], [m.text for m in ask])):
        choice.checked[m.text] = p
        m.similarity = p if p > 0.5 else 0.0
    choice.items.sort(key=lambda m: -m.similarity)


def verify(verifier, s: ConsultReplySettings, turns: Sequence[str], choices: list[EntryChoice]) -> None:
    """Ask the verifier about the best ``verify_candidates`` entries; set their ``p_verify``."""
    if verifier is None or not choices:
        return
    top = choices[: s.verify_candidates]
    cits = [record_citation(c.drug, c.attribute, k + 1) for k, c in enumerate(top)]
    for c in cits:  # a label section can run to pages: its opening says what kind of entry it is
        if len(c.text) > s.verify_chars:
            c.text = c.text[: s.verify_chars].rsplit(" ", 1)[0] + " …"
    probs = verifier("\n".join(f"Patient: {t}" for t in turns), cits)
    for k, c in enumerate(top):
        c.p_verify = probs.get(k + 1, 0.0)
    for c in choices[len(top):]:
        c.p_verify = 0.0


def combined(c: EntryChoice, weight: float) -> float:
    """The entry's score with the verifier's log P(answers) weighed in."""
    return c.score + (weight * float(np.log(c.p_verify + 1e-3)) if weight and c.p_verify is not None else 0.0)
