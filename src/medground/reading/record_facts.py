"""What the medicine's own record says outside its entries: its names and its class.

A patient asking "Pharmacy gave me amlodipine instead of Norvasc, is it the same thing?" or "Is
Zoloft an SSRI?" asks what the database's drug record holds (its generic and brand names, its
class), not any of its entries; with no entry of the kind asked the reader abstained ("no entry
on that for Amlodipine") although the answer is in the record (session 27, a helper's set). These
replies are used only where the reader would otherwise abstain.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from medground.drug_schema import Drug
from medground.reading.consult_text import AUXILIARIES, WORD, is_yes_no, questions, whole_name
from medground.reading.consult_types import Reply
from medground.schema import Citation

# Words that ask whether two names are one medicine. English's words of sameness, not a list
# fitted to any set; a question of two names and nothing else ("Is Coumadin warfarin?") asks it too.
SAMENESS = frozenset("same different difference generic brand instead equivalent substitute switched "
                     "interchangeable version".split())
_FILLER = frozenset("the a an my this that it its is are was of as to and or just thing one".split())


def names_said(text: str, drug: Drug) -> list[str]:
    """The drug's names (generic, brands, synonyms) said in ``text``, whole words, in the
    database's spelling, distinct, in order of first mention."""
    found: list[tuple[int, str]] = []
    spellings = {n.lower(): n for n in reversed([drug.generic_name, *drug.brand_names, *drug.synonyms]) if n}
    for name in spellings.values():  # one spelling a name (a brand's, before a synonym's lower case)
        if len(name) > 2:
            m = whole_name(name).search(text)
            if m:
                found.append((m.start(), name))
    said = [n for _, n in sorted(found)]
    # "Toprol XL" holds "Toprol": the longer name is what was said
    return [n for n in said if not any(n.lower() != o.lower() and n.lower() in o.lower() for o in said)]


def asks_sameness(turn: str, drug: Drug) -> list[str]:
    """The names of ``drug`` a question sentence of ``turn`` asks to be one medicine — two or
    more of them in it, with a word of sameness or nothing else of its own — else []."""
    for sentence in reversed(questions(turn)):
        said = names_said(sentence, drug)
        if len(said) < 2:
            continue
        rest = sentence
        for n in said:
            rest = re.sub(re.escape(n), " ", rest, flags=re.IGNORECASE)
        words = {w.lower() for w in WORD.findall(rest)}
        if words & SAMENESS or not words - _FILLER - AUXILIARIES:
            return said
    return []


def names_citation(drug: Drug, number: int = 1) -> Citation:
    """The drug record itself as a citation: its generic and brand names and its class."""
    parts = [f"Generic name: {drug.generic_name}"]
    if drug.brand_names:
        parts.append(f"Brand names: {', '.join(drug.brand_names)}")
    if drug.drug_class:
        parts.append(f"Class: {drug.drug_class}")
    text = ". ".join(parts) + "."
    return Citation(number=number, chunk_id=f"{drug.drug_id}:record", book="Medicine database",
                    chapter=drug.display_name, section="names and class", title=drug.display_name,
                    text=text, score=1.0, char_end=len(text))


def sameness_sentence(drug: Drug, said: Sequence[str], yes_no: bool = True) -> str:
    """"Yes — the medicine database lists Norvasc as a brand name of Amlodipine [1]." — two brands:
    both are listed as names of it; whether the products differ in form is the pharmacist's.
    "Yes — " only for a yes/no question ("What is the difference between …" gets none)."""
    generic = drug.generic_name.lower()
    others = [n for n in said if n.lower() != generic]
    shown = " and ".join(others)
    opening = "Yes — the medicine database lists" if yes_no else "The medicine database lists"
    if len(others) < len(said):  # the generic was one of the names
        kind = "a brand name" if len(others) == 1 else "brand names"
        first = f"{opening} {shown} as {kind} of {drug.display_name} [1]."
    else:
        first = f"{opening} {shown} as names of the same medicine, {drug.display_name} [1]."
    return first + (" Whether two products differ in strength, form or release is for your pharmacist "
                    "to confirm.")


def class_sentence(drug: Drug) -> str:
    return f"{drug.display_name} is a medicine of this class: {drug.drug_class.rstrip('.')} [1]."


def sameness_reply(turn: str, drug: Drug) -> Reply | None:
    """The record's names as the reply when a question of ``turn`` asks whether two of the drug's
    names are one medicine (:func:`asks_sameness`); None otherwise."""
    said = asks_sameness(turn, drug)
    if not said:
        return None
    first = sameness_sentence(drug, said, is_yes_no(turn))
    return Reply("answered", first, [names_citation(drug)], first, reason="answered from the drug record")


def class_reply(drug: Drug) -> Reply | None:
    """The record's class as the reply to a class question, when it holds one."""
    if not drug.drug_class:
        return None
    first = class_sentence(drug)
    return Reply("answered", first, [names_citation(drug)], first, reason="answered from the drug record")
