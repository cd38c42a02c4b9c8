"""Is a drug's class what an interactions item names? ("HMG-CoA reductase inhibitors/statin
drugs" names simvastatin's class, "Statins"; "CYP2C19 inhibitors" does not name pantoprazole's,
"Proton-pump inhibitors (PPIs)".)

Embedding similarity between a class label and an item is too loose to decide it (those two pairs
score 0.54 and 0.48 with MiniLM), and a wrong decision either way is a wrong reply: "does not
list simvastatin" under a list that names statins, or a caution about a group the drug is not in.
A class label and an item are both read as alternatives ("Statins and PCSK9 Inhibitors",
"Nonsteroidal anti-inflammatory drug (NSAID)": each part, and the abbreviation, on its own;
"HMG-CoA reductase inhibitors/statin drugs (risk of myopathy)": each part, notes dropped); an
item names the class when one of its parts has the same words as one alternative of the class
(singular or plural, a route or "other" aside). So "Calcium channel blockers" never matches "Beta
blockers", "Angiotensin II receptor blocker" never matches "Angiotensin-converting enzyme
inhibitors", and methotrexate's "Anti-inflammatory" never matches "Nonsteroidal anti-inflammatory
drugs".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from medground.reading.consult_text import whole_name

if TYPE_CHECKING:
    from medground.drug_schema import Drug
    from medground.reading.consult_types import ItemMatch

_ALTERNATIVES = re.compile(r";|,|/|\band\b|\bor\b", re.IGNORECASE)
_PAREN = re.compile(r"\(([^()]*)\)")
_WORD = re.compile(r"[a-z0-9]+")  # "proton-pump" is "proton pump"
# Nouns every class label may carry without saying which class ("Antiviral agent", "Oral
# diabetes drugs"): an item need not repeat them.
_FILLER = {"drug", "drugs", "agent", "agents", "medication", "medications", "medicine", "medicines",
           "class", "other", "the", "for", "of", "used",
           # "Beta-adrenergic blocker" is a "beta blocker" (alpha and beta still tell them apart)
           "adrenergic"}
# Words an item may add to a class's name and still name it ("Oral anticoagulants", "Other
# antiplatelet agents", "Concomitant use of MAOIs").
_MODIFIERS = {"oral", "systemic", "concomitant", "use", "all", "some", "certain", "similar"}
# Head nouns of class names: alone they name no class ("inhibitor" would match any inhibitors).
_HEADS = {"inhibitor", "blocker", "agonist", "antagonist", "receptor", "modulator", "selective",
          "synthetic", "hormone", "derivative", "analog", "analogue", "enzyme", "channel"}


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


# A prefix joined by a hyphen is the word it forms: "non-steroidal" is "Nonsteroidal" (Coumadin's
# "non-steroidal anti-inflammatory drugs" names ibuprofen's class).
_PREFIX_HYPHEN = re.compile(r"\b(non|anti)-(?=[a-z])")


def _words(text: str) -> set[str]:
    joined = _PREFIX_HYPHEN.sub(r"\1", text.lower())
    return {_stem(w) for w in _WORD.findall(joined) if len(w) > 2 and w not in _FILLER}


def part_names(part: str, *, abbreviations_only: bool = False) -> list[str]:
    """The names one part of a class label gives: "Proton pump inhibitor (PPI)" the name and the
    abbreviation; "Angiotensin-converting enzyme (ACE) inhibitor" the name without it and "ACE
    inhibitor" (the abbreviation with what follows it). ``abbreviations_only``: a parenthesis that
    is no abbreviation ("(Schedule IV controlled substance)") gives no name of its own."""
    names = [re.sub(r"\s+", " ", _PAREN.sub(" ", part)).strip()]
    if paren := _PAREN.search(part):
        inner = paren.group(1).strip()
        if not abbreviations_only or (re.fullmatch(r"[A-Z][A-Za-z]{1,5}", inner)
                                      and sum(c.isupper() for c in inner) >= 2):
            names.append(re.sub(r"\s+", " ", f"{inner} {part[paren.end():]}").strip())
    return [n for n in dict.fromkeys(names) if n]


@lru_cache(maxsize=4096)
def class_alternatives(drug_class: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """(label part, the words an item must hold to name it), in the label's order; cached, as
    every interactions item of a reply is read against the same few classes."""
    out: list[tuple[str, frozenset[str]]] = []
    for part in _ALTERNATIVES.split(drug_class or ""):
        for name in part_names(part):
            words = frozenset(_words(name))
            if not words or (len(words) == 1 and next(iter(words)) in _HEADS):
                continue
            if all(words != w for _, w in out):
                out.append((name, words))
    return tuple(out)


# A parenthesis that lists members of the item's group ("Drugs that slow heart rate … (e.g., beta
# blockers, digoxin, diltiazem, or verapamil)"): its parts are named by the item too.
_EXAMPLES = re.compile(r"^\s*(e\.\s?g\.?|eg\b|such as|including|for example)\s*,?", re.IGNORECASE)


def item_parts(item: str) -> list[frozenset[str]]:
    """The words of each part of an interactions item, modifiers left out; a parenthetical note is
    left out unless it lists examples ("(e.g., beta blockers, digoxin)")."""
    texts = _ALTERNATIVES.split(_PAREN.sub(" ", item))
    for paren in _PAREN.finditer(item):
        if _EXAMPLES.match(paren.group(1)):
            texts += _ALTERNATIVES.split(_EXAMPLES.sub(" ", paren.group(1)))
    parts = (frozenset(_words(p) - _MODIFIERS) for p in texts)
    return [p for p in parts if p]


def named_class(drug_class: str, item: str) -> str | None:
    """The part of ``drug_class`` that ``item`` names, or None."""
    parts = item_parts(item)
    return next((name for name, words in class_alternatives(drug_class)
                 if words - _MODIFIERS in parts), None)


def mentions_class(drug_class: str, text: str) -> str | None:
    """The part of ``drug_class`` (of two words or more) whose words a label's sentence holds
    ("… and nonsteroidal anti-inflammatory drugs (NSAIDs)" for naproxen's "Nonsteroidal
    Anti-inflammatory Drugs"), or None."""
    words = _words(text)
    return next((name for name, w in class_alternatives(drug_class)
                 if len(w - _MODIFIERS) > 1 and w - _MODIFIERS <= words), None)


# a plural word (not "-ss", "-us", "-is": "Glass", "Digitalis") or a plural acronym ("MAOIs")
_PLURAL = re.compile(r"\b[A-Za-z0-9-]*[a-z]{2,}[a-hj-rtv-z]s\b|\b[A-Z][A-Z0-9]+s\b")


def names_a_group(item: str) -> bool:
    """An item that names a group of drugs ("CYP3A4 substrates", "Anticoagulants", "MAOIs"), not
    one drug or food ("Digoxin (increases effect)", "Grapefruit juice"): a plural word outside
    its parenthetical note. A drug can sit in such a group under no class the database knows."""
    return bool(_PLURAL.search(_PAREN.sub(" ", item)))


def mark_named(matches: Sequence[ItemMatch], others: Sequence[Drug], at: float, *, prose: bool = False) -> None:
    """Items that name another named drug's class ("statin drugs" for simvastatin) match at
    ``at``, the phrase being the class and ``class_of`` the drug. ``prose``: the items are a
    label's sentences (a warnings entry), read by ``mentions_class``, and the drug's own names
    count too."""
    for m in matches:
        for other in others:
            if prose:
                label = mentions_class(other.drug_class, m.text) if other.drug_class else None
                if label is None and any(whole_name(n).search(m.text) for n in (other.generic_name, *other.brand_names)):
                    label = other.display_name
            else:
                label = named_class(other.drug_class, m.text) if other.drug_class else None
                if label is None and any(_EXAMPLES.match(p.group(1)) and whole_name(n).search(p.group(1))
                                         for p in _PAREN.finditer(m.text)
                                         for n in (other.generic_name, *other.brand_names)):
                    label = other.display_name  # named among the item's examples ("e.g., … digoxin")
            if label is not None and m.similarity < at:
                m.similarity, m.phrase, m.class_of = at, label, other.display_name
                break
