"""A question that asks which of the patient's medicines is behind what they described ("I'm on
the Bactrim and that Azo pain pill … my pee is bright orange?? which one is doing this"): each of
their medicines is read alone, and the one whose side effects or warnings name what was described
answers, the others that name it too are cited after it.

Read as one subject with the rest as partners, the question went to the first-named drug (the
antibiotic), or to an interactions entry, and abstained. Nothing here is fitted: the question is
told by its grammar (consult_reframe.which_medicine), the answer by the same item match as any
reply (an item at ``match_at`` or nearer).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from medground.corpus.sentences import sentences_of
from medground.drug_schema import AttributeType, Drug
from medground.reading.consult_reframe import last_question, which_medicine
from medground.reading.consult_sentences import PHRASE
from medground.reading.consult_text import join_items
from medground.reading.consult_types import EFFECT_PAIR, Reply, record_citation

A = AttributeType
# what a medicine can be "behind": what it may do to the patient
EFFECT_TYPES = EFFECT_PAIR | {A.BOXED_WARNING}
MAX_CANDIDATES = 3


def asks_which_medicine(turn: str) -> bool:
    """The turn's question picks one of the patient's medicines by a choice among them ("which one",
    "which of these", "one of my tablets"), not by a name."""
    split = last_question(turn)
    sentences = sentences_of(turn)
    asking = split[1] if split else (sentences[-1] if sentences else "")
    return bool(which_medicine(asking))


def _names_it(reply: Reply) -> str | None:
    """The item of the reply's chosen effects entry that answers (named at ``match_at``), or None.
    A merely near item (the reply's hedge) does not count: where one medicine has no side-effects
    entry at all, the nearest item of another's is no evidence that it is the other."""
    chosen = reply.chosen
    if reply.outcome != "answered" or chosen is None or not reply.matched \
            or chosen.attribute.type not in EFFECT_TYPES:
        return None
    return reply.matched[0]


def which_reply(read_alone: Callable[[str], Reply], candidates: Sequence[str], drugs: Mapping[str, Drug],
                first: Reply) -> Reply | None:
    """The reply that answers which of ``candidates`` (drug ids, the subject first) is behind what
    was described: ``first`` (the subject's usual reply) when its effects entry names it, else the
    first other candidate's whose entry does; every other candidate whose entry names it is cited
    after it. None when no candidate's entry names it (the usual reply stands).
    ``read_alone``: drug id → the reply read with that drug as the only one asked about. A
    combination holding another candidate ("Glyburide/Metformin" beside "metformin") is no
    medicine of its own here."""
    known = [drugs[c] for c in dict.fromkeys(candidates) if c in drugs]
    ids = [d.drug_id for d in known if not any(o is not d and o.generic_name in d.components for o in known)]
    ids = ids[:MAX_CANDIDATES]
    if len(ids) < 2:
        return None
    naming = []
    for c in ids:
        usual = c == ids[0] and first.chosen is not None and first.chosen.drug.drug_id == c
        r = first if usual and _names_it(first) is not None else read_alone(c)
        if (item := _names_it(r)) is not None:
            naming.append((c, r, item))
    if not naming:
        return None
    _, best, _ = naming[0]
    citations = list(best.citations)
    parts = [best.text]
    for c, r, item in naming[1:]:
        citations.append(record_citation(r.chosen.drug, r.chosen.attribute, len(citations) + 1))
        parts.append(f"{drugs[c].display_name}'s {PHRASE[r.chosen.attribute.type]} also list "
                     f"\u201c{item}\u201d [{citations[-1].number}].")
    listed = [drugs[c].display_name for c, _, _ in naming]
    everyone = [drugs[c].display_name for c in ids]
    if len(listed) == len(everyone):
        parts.append(f"Of {join_items(everyone)}, each one's entry names it.")
    elif len(listed) == 1:
        parts.append(f"Of {join_items(everyone)}, it is {listed[0]}'s entry that names it.")
    else:
        parts.append(f"Of {join_items(everyone)}, the entries of {join_items(listed)} name it.")
    return replace(best, text=" ".join(parts), citations=citations)
