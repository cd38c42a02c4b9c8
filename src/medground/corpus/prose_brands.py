"""Brands the pharmacology book names in its prose and no other source links to a drug:
"Phenytoin (Dilantin) is the most prescribed …", "carbamide peroxide (Debrox)". The name lexicon
(MedlinePlus, MedQuAD) lacks them, and a patient's "Dilantin" was read, through a fuzzy match, as
"Dolantin" — a brand of meperidine. Read strictly, so that a citation, a dose, an abbreviation or a
combination's brand is never taken for one drug's brand."""

from __future__ import annotations

import re

from medground.corpus.english import is_english_word
from medground.drug_schema import Drug, normalize_name

# "generic (Brand, Brand)": one or two words, then a parenthesis
PAREN_AFTER = re.compile(r"([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)?)\s*\(([^()]{2,80})\)")
_YEAR = re.compile(r"\b(1[89]|20)\d\d\b")
_JOINED = re.compile(r"(\band|/|-)\s*$")  # "sacubitril and valsartan (…)", "hydralazine/isosorbide (…)"
_NAME = re.compile(r"[A-Z][a-z][A-Za-z-]{2,}")
# The salt or ester a generic is sold as ("ergotamine tartrate (Cafergot)"): chemistry's closed
# class of counter-ions, not names of drugs.
SALTS = frozenset("tartrate hydrochloride hcl sulfate sulphate succinate maleate mesylate besylate citrate "
                  "phosphate acetate bromide chloride fumarate malate mandelate hydrobromide bitartrate "
                  "dihydrate monohydrate sodium potassium calcium magnesium".split())


def drug_ending(words: str, drugs: dict[str, Drug]) -> Drug | None:
    """The drug whose generic name ``words`` (lower case) is or ends with; the longest such name."""
    best: Drug | None = None
    for d in drugs.values():
        g = d.generic_name
        if len(g) >= 4 and (words == g or words.endswith(" " + g)) and (best is None or len(g) > len(best.generic_name)):
            best = d
    return best


def combination_ending(text: str, drugs: dict[str, Drug]) -> Drug | None:
    """The combination drug ("a/b") whose components ``text`` (lower case) ends with, joined by a
    slash, "and", a hyphen or a space: "sacubitril/valsartan", "Hydralazine and isosorbide
    dinitrate", "Bupropion naltrexone"."""
    for d in drugs.values():
        parts = d.generic_name.split("/")
        if len(parts) != 2:
            continue
        a, b = (re.escape(p.strip()) for p in parts)
        if re.search(rf"(?<![\w-]){a}\s*(?:/|-|\s+and\s+|\s+){b}$", text):
            return d
    return None


def lower_case_words(texts) -> frozenset[str]:
    """The words ``texts`` write in lower case: a brand is a proper name and never is; a title's
    capitalised descriptor is ("Timolol Hydrochloride (Nonselective)", and "nonselective" in prose)."""
    return frozenset(w for text in texts for w in re.findall(r"(?<![\w-])[a-z][a-z-]{2,}(?![\w-])", text))


def new_brands(sentence: str, drugs: dict[str, Drug], known: set[str], lowered: frozenset[str] = frozenset()
               ) -> list[tuple[Drug, str]]:
    """(drug, name) for each name in parentheses right after one generic of ``drugs`` (or its
    salt: "ergotamine tartrate (Cafergot)") that is in no ``known`` (normalized) name: a capitalised
    word that is no English word, holds no digit and is never written in lower case (``lowered``);
    not from a citation (a year in the parentheses: "(DailyMed, 2023)"). After a combination's two
    components ("sacubitril/valsartan (Entresto)", "Bupropion naltrexone (Contrave)") it is the
    combination's brand, never one component's."""
    out: list[tuple[Drug, str]] = []
    for m in PAREN_AFTER.finditer(sentence):
        listed, before = m.group(2), m.group(1).lower()
        if _YEAR.search(listed):
            continue
        drug = combination_ending(sentence[: m.end(1)].lower(), drugs)
        if drug is None:
            if _JOINED.search(sentence[max(0, m.start(1) - 6):m.start(1)]) or before.split()[0] in {"and", "or", "with"}:
                continue
            drug = drug_ending(before, drugs)
            if drug is None and before.split()[-1] in SALTS and len(before.split()) > 1:
                before = before.rsplit(None, 1)[0]  # the salt is no part of the name
                drug = drug_ending(before, drugs)
            if drug is None or "/" in drug.generic_name:
                continue
            rest = before[: -len(drug.generic_name)].strip()
            if rest and drug_ending(rest.split()[-1], drugs) is not None:
                continue
        for name in (n.strip(" .") for n in re.split(r",|\band\b|\bor\b", listed)):
            if (_NAME.fullmatch(name) and normalize_name(name) not in known and not is_english_word(name.lower())
                    and name.lower() not in lowered):
                out.append((drug, name))
    return out
