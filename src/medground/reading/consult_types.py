"""What the consultation reader weighs and returns: an entry's matched items, the entries ranked,
the reply; and the small rules the reader and its fit share (reading/consult.py, consult_fit.py)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from medground.drug_schema import AttributeType, Drug, DrugAttribute
from medground.reading.consult_settings import ConsultReplySettings
from medground.reading.consult_text import WORD, item_parts
from medground.schema import Citation

A = AttributeType


@dataclass(slots=True)
class ItemMatch:
    text: str
    similarity: float
    phrase: str  # the patient's words it matched
    class_of: str = ""  # the named drug whose class (``phrase``) the item names, if that matched it
    sibling: str = ""  # the patient's compound naming another thing of the item's kind (reading/siblings.py)
    modifier: bool = False  # matched through a word the patient said only as a modifier ("drink" of "drink tea")
    # the patient named one substance of the database and the item another ("potassium pills" /
    # "Lithium", 0.5 apart in MiniLM's space): near in words' meaning, not the same thing
    other_substance: bool = False
    quote: str = ""  # the whole item a matched part is quoted as ("Cramping/diarrhea" for "Cramping")

    def answers(self, match_at: float) -> bool:
        """Matched closely enough to be what was asked, not through a modifier alone, not a
        sibling, not another substance."""
        return self.similarity >= match_at and not self.names_something_else

    @property
    def names_something_else(self) -> bool:
        """Near, but naming another thing than what the patient said: never offered as the closest item."""
        return self.modifier or bool(self.sibling) or self.other_substance


@dataclass(slots=True)
class EntryChoice:
    drug: Drug
    attribute: DrugAttribute
    p_type: float
    items: list[ItemMatch]  # best first
    score: float
    p_verify: float | None = None  # the LLM verifier's P(this entry answers), when it was asked
    checked: dict[str, float] = field(default_factory=dict)  # item -> the LLM's P(yes), items it checked

    @property
    def best(self) -> ItemMatch | None:
        return self.items[0] if self.items else None


@dataclass(slots=True)
class Reply:
    outcome: str  # "answered" | "insufficient_evidence" | "needs_clarification"
    text: str
    citations: list[Citation]
    first_sentence: str
    matched: list[str] = field(default_factory=list)
    quotes: list[str] = field(default_factory=list)
    chosen: EntryChoice | None = None
    ranked: list[EntryChoice] = field(default_factory=list)
    p_none: float = 0.0
    reason: str = ""
    condition: str | None = None  # the patient's words read as a condition they have (patient_condition.py)
    terms: list[str] = field(default_factory=list)  # what the patient describes, in the LLM's medical terms


class Choice(NamedTuple):
    choices: list[EntryChoice]  # best first
    p_none: float
    p_type: dict[AttributeType, float]
    condition: str | None  # the patient's phrase read as a condition they have
    partners: list[Drug]  # the other drugs the question was read with (ConsultReader.partners)


def held_and_elsewhere(choices: Sequence[EntryChoice], subject_id: str, p_type: dict[AttributeType, float]
                       ) -> tuple[set[AttributeType], float]:
    """The kinds of entry that can answer — the subject drug's, and the interactions of a second
    drug named with it (a statin with no interactions entry, asked about with fluconazole, whose
    entry lists CYP3A4 substrates) — and P(the question asks for a kind none has)."""
    held = {c.attribute.type for c in choices
            if c.drug.drug_id == subject_id or c.attribute.type is A.INTERACTIONS}
    return held, sum(p for t, p in p_type.items() if t not in held)


def no_entry_relates(p_none: float, top_type: AttributeType | None, held: set[AttributeType], elsewhere: float,
                     s: ConsultReplySettings, nearest: float = 0.0) -> bool:
    """The abstention rule (when no item matched), shared by the reader and its fit: a question of
    a kind no record answers, or one that more likely asks for a kind of entry this drug does not
    have (statin aches, and the only entry is the dose) — say so, do not quote the dose. With
    ``lacking_kind_near``, an entry whose best item is ``nearest`` ≥ ``hedge_at`` to what was said
    still answers when the asked kind is missing (a label's "5.7 Alcohol" for "Stendra + a few beers")."""
    if p_none >= s.none_above:
        return True
    lacking = top_type is not None and top_type not in held and elsewhere >= s.elsewhere_above
    return lacking and not (s.lacking_kind_near and nearest >= s.hedge_at)


SAFETY_PAIR = frozenset({A.CONTRAINDICATIONS, A.WARNINGS})


def safety_stand_in(choices: Sequence[EntryChoice], subject_id: str, asked: AttributeType | None,
                    held: set[AttributeType]) -> EntryChoice | None:
    """The subject's other safety entry, when the question asks for the one of contraindications and
    warnings its record lacks: an FDA label's "AMPYRA is contraindicated in patients with a history
    of seizures" sits in its warnings, and a label has no contraindications entry here. Used only
    where no item matched (a matched item elsewhere says what was asked: "Do I really need to give
    up grapefruit?" on Fareston is its interactions' "Grapefruit", whatever the typer's warnings)."""
    if asked not in SAFETY_PAIR or asked in held:
        return None
    return next((c for c in choices if c.drug.drug_id == subject_id and c.attribute.type in SAFETY_PAIR
                 and c.attribute.type is not asked), None)


EFFECT_PAIR = frozenset({A.ADVERSE_REACTIONS, A.WARNINGS})


def named_first(choices: list[EntryChoice], near: float,
                takes: Callable[[EntryChoice, EntryChoice], bool]) -> list[EntryChoice]:
    """``choices`` with the first later entry of the same drug that ``takes(first, entry)`` moved
    first, when the first names nothing ``near`` what was said (best item under ``near``)."""
    if not choices or (choices[0].best is not None and choices[0].best.similarity >= near):
        return choices
    first = choices[0]
    for k, c in enumerate(choices[1:], 1):
        if c.drug is first.drug and c.best is not None and takes(first, c):
            return [c, *choices[:k], *choices[k + 1:]]
    return choices


def safety_sibling_first(choices: list[EntryChoice], near: float,
                         pairs: Sequence[frozenset[AttributeType]] = (SAFETY_PAIR,)) -> list[EntryChoice]:
    """``choices`` with the subject's sibling entry first — the other of a pair in ``pairs``
    (contraindications and warnings; side effects and warnings, where a label files its serious
    reactions) — when the first names nothing ``near`` what was said and that one does, with an
    item that names what the patient said, not a sibling or another substance."""
    def sibling(first: EntryChoice, c: EntryChoice) -> bool:
        kin = {t for pair in pairs if first.attribute.type in pair for t in pair} - {first.attribute.type}
        return c.attribute.type in kin and c.best.answers(near)

    return named_first(choices, near, sibling)


def better_effect_first(choices: list[EntryChoice], match_at: float, margin: float,
                        purpose: Collection[str] = (), said_now: str | None = None) -> list[EntryChoice]:
    """``choices`` with the subject's warnings entry first when the chosen one is its side effects
    and the warnings' best item names what was said (at ``match_at``) ``margin`` nearer than the
    side effects' best: an FDA label files its serious reactions under warnings
    ("Arthralgia: Severe and disabling arthralgia …", 0.66 from painful knees and hands), and the
    side-effect list's nearest item ("Headache", 0.53) names something else. Not through why the
    drug is taken (``purpose``: "on lisinopril for blood pressure" is no "Orthostatic hypotension"),
    and, given ``said_now`` (the last turn), only through its words ("I take Theo-24 for my COPD",
    told two turns back, is no question about its warnings' "COPD")."""
    if not choices or choices[0].attribute.type is not A.ADVERSE_REACTIONS:
        return choices
    first = choices[0]
    floor = (first.best.similarity if first.best is not None else 0.0) + margin
    for k, c in enumerate(choices[1:], 1):
        # (one way only: a label's side-effects lines are often its studies' populations, "Restless
        # Legs Syndrome: The exposure to HORIZANT in 1,201 patients …"; and not through another
        # named drug's class, which a warnings sentence names for another reason)
        if (c.drug is first.drug and c.attribute.type is A.WARNINGS and c.best is not None
                and c.best.answers(match_at) and c.best.similarity >= floor
                and c.best.phrase not in purpose and not c.best.class_of
                and (said_now is None or word_set(c.best.phrase) <= word_set(said_now))):
            return [c, *choices[:k], *choices[k + 1:]]
    return choices


def matched_entry_first(choices: list[EntryChoice], near: float, match_at: float, said_now: str,
                        kinds: frozenset[AttributeType] | None = None) -> list[EntryChoice]:
    """``choices`` with the subject's entry that names what the patient said first, when the
    chosen one names nothing ``near`` it: a substance, food or condition the patient named that an
    entry lists ("a big coffee drinker" on theophylline: its interactions' "Caffeine", 0.72) says
    what the question is about better than the typer's prior for an entry with nothing near
    (its side effects, best item 0.38). Only through the words the question is about (``said_now``:
    consult_reframe.asking_part): "I take Theo-24 for my COPD", told first, is no question about its
    warnings' "COPD", nor "I had cheese at lunch. What's the most Nardil I can take?" one about
    tyramine. ``kinds``: the entries that may come first (None: any)."""
    said_now = said_now.lower()

    def names_what_is_asked(first: EntryChoice, c: EntryChoice) -> bool:
        return (c.attribute.type is not first.attribute.type and (kinds is None or c.attribute.type in kinds)
                and c.best.answers(match_at) and c.best.phrase.lower() in said_now)

    return named_first(choices, near, names_what_is_asked)


def word_set(text: str) -> set[str]:
    """Lower-cased words and the parts of hyphenated ones: "Reddish-orange … urine" holds "orange"."""
    out: set[str] = set()
    for w in WORD.findall(text):
        w = w.lower()
        out.add(w)
        if "-" in w:
            out.update(p for p in w.split("-") if len(p) > 1)
    return out


def part_of(a: Drug, b: Drug) -> bool:
    """One drug is a component of the other (amoxicillin of amoxicillin/clavulanate): not two
    medicines taken together."""
    return a.generic_name in b.components or b.generic_name in a.components


def answering_items(choice: EntryChoice, match_at: float, limit: int) -> list[ItemMatch]:
    """The choice's items that answer (at ``match_at``), each named once, at most ``limit``."""
    return distinct([m for m in choice.items if m.answers(match_at)], [m.text for m in choice.items])[:limit]


def distinct(matches: Sequence[ItemMatch], items: Sequence[str] = ()) -> list[ItemMatch]:
    """Matched items without an item whose matched part is also there: "diarrhea" says it,
    "Nausea/vomiting/diarrhea/flatulence" beside it only repeats it. A matched head ("Pregnancy")
    is named as the item it heads ("Pregnancy (fetal toxicity)"), one of ``items``: the
    qualifier is the why."""
    texts = {m.text for m in matches}
    # (a label line's title, "Gout Flare", likewise says what "Gout Flare : An increase in …" says)
    out = [m for m in matches if not any(p in texts for p in item_parts(m.text, titles=True) if p != m.text)]
    heads = {i.split(" (", 1)[0].strip(): i for i in items if " (" in i}
    named = [replace(m, text=heads[m.text]) if m.text in heads else m for m in out]
    return list({m.text: m for m in reversed(named)}.values())[::-1]  # one item named once, at its best


_ROUTE_WORDS = {"ophthalmic": "an eye (ophthalmic)", "otic": "an ear (otic)", "topical": "a skin (topical)",
                "vaginal": "a vaginal", "nasal": "a nasal"}


def record_citation(drug: Drug, attribute: DrugAttribute, number: int = 1) -> Citation:
    """A record as the reader sees it: the medicine database's citation for it."""
    return Citation(number=number, chunk_id=f"{attribute.drug_id}:{attribute.type.value}", book="Medicine database",
                    chapter=drug.display_name, section=attribute.type.value, title=drug.display_name,
                    text=attribute.text, score=1.0, char_end=len(attribute.text))
