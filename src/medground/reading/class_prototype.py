"""A drug the book gives only a dose for, read through the prototype of its class.

Pharmacology for Nurses describes each class by one "Drug Prototype Table" (atorvastatin for the
statins, fluoxetine for the SSRIs) and lists the class's other members in a dosage table on the
same page (simvastatin, rosuvastatin …: the dose only). 339 of the 738 drugs of the database
have nothing but a dose — sertraline, simvastatin, acetaminophen among them — so "I'm on
simvastatin; why no grapefruit juice?" could only be told "no interactions entry for
simvastatin". The reply still says so (the outcome stays an abstention on the drug itself) and
then names the items of the prototype of its class near what was asked — of the kinds a class
shares (side effects, interactions, contraindications, warnings) — as the prototype's and never
as the drug's: "In the book, Atorvastatin is the prototype of Simvastatin's class (Statin); its
interactions [1] include “Grapefruit juice”. Whether this holds for Simvastatin is for your
pharmacist or doctor to judge."

The prototype is found from the book's own layout, no hand list: a prototype table on the page
(module) of the drug's dosage-table row whose class is the drug's (the same class words, spelled
out or abbreviated, more than a generic head such as "inhibitor"); where two classes could be
meant, none is found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from medground.drug_schema import AttributeType, Drug, DrugAttribute
from medground.reading.consult_sentences import PHRASE
from medground.reading.consult_text import join_items
from medground.reading.consult_types import SAFETY_PAIR, answering_items, record_citation
from medground.schema import Citation

_SOURCE = re.compile(r"^openstax-(prototype|dosage-table):(m\d+)#table-(\d+)")
_WORD = re.compile(r"[a-z0-9]+")
_FILLER = frozenset({"and", "of", "the", "for", "drug", "drugs", "agent", "agents", "other", "class", "ii"})
# heads that many classes share: a match on these alone is no match ("aromatase inhibitors" vs
# "proton pump inhibitor")
_GENERIC_HEADS = frozenset({"inhibitor", "blocker", "agonist", "antagonist", "analog", "derivative",
                            "hormone", "antibiotic", "modulator", "generation"})


def _place(source: str) -> tuple[str, str, int] | None:
    """("prototype" | "dosage-table", module id, table number) of a book table's entry."""
    m = _SOURCE.match(source or "")
    return (m.group(1), m.group(2), int(m.group(3))) if m else None


def _words(text: str) -> frozenset[str]:
    return frozenset(w[:-1] if w.endswith("s") and len(w) > 3 else w for w in _WORD.findall(text)) - _FILLER


def class_words(label: str) -> list[list[tuple[frozenset[str], ...]]]:
    """``label``'s classes, most specific first (the catalog joins a group row's class and a
    table caption's with ";"), each as its alternatives ("Statins and PCSK9 Inhibitors": two),
    each alternative as its forms: its content words in the singular, spelled out, and again
    with an abbreviation in parentheses for the words before it ("Angiotensin-converting enzyme
    (ACE) inhibitor" is also {ace, inhibitor})."""
    parts = []
    for part in (label or "").lower().split(";"):
        alternatives = []
        for alt in re.split(r"\band\b", part):
            forms = [_words(re.sub(r"\([^()]*\)", " ", alt))]
            if (short := re.search(r"\(([^()]*)\)(.*)$", alt)) is not None:
                forms.append(_words(short.group(1) + " " + short.group(2)))
            if forms := tuple(f for f in forms if f):
                alternatives.append(forms)
        if alternatives:
            parts.append(alternatives)
    return parts


def same_class(forms: Sequence[frozenset[str]], label: str) -> bool:
    """One form of a class is one form of a class of ``label`` (the same words, spelled out or
    abbreviated), and more than a generic head. A broader class is not enough: the book's
    "Psoriatic" prototype is coal tar, no model of a biologic, nor is insulin one of the
    "Non-insulin injectables"."""
    return any(f == y and y - _GENERIC_HEADS for alternatives in class_words(label)
               for other in alternatives for y in other for f in forms)


def choose_prototype(drug_name: str, drug_class: str, candidates: Sequence[tuple[int, str, str]]) -> str | None:
    """Of ``candidates`` (table number, drug id, class) on the drug's pages, the prototype of
    ``drug_class``: its most specific class that a candidate is of decides. A class the caption
    joins with another ("Statins and PCSK9 Inhibitors") counts only where the drug's own name
    holds one of its words (simvastatin, not alirocumab); two classes met find none, and the
    prototypes found must be of one class (two ARB prototypes: the page's first)."""
    for alternatives in class_words(drug_class):
        hits = [(k, table, p) for k, forms in enumerate(alternatives) for table, p, cls in candidates
                if same_class(forms, cls) and (len(alternatives) == 1 or any(
                    len(w) >= 5 and w in drug_name.lower() for f in forms for w in f))]
        if not hits:
            continue
        if len({k for k, _, _ in hits}) > 1:
            return None
        top = sorted((table, p) for _, table, p in hits)
        classes = {cls.lower() for table, p, cls in candidates if (table, p) in top}
        return top[0][1] if len(classes) == 1 else None
    return None


def find_prototypes(drugs: Mapping[str, Drug], entries: Mapping[str, Sequence[DrugAttribute]]) -> dict[str, str]:
    """drug id → the drug id of its class's prototype, for drugs with no prototype table of their own."""
    pages: dict[str, set[tuple[int, str]]] = {}  # module → its prototype tables (number, drug id)
    rows: dict[str, set[str]] = {}  # drug id → modules of its dosage-table rows
    own: set[str] = set()
    for drug_id, attrs in entries.items():
        for a in attrs:
            place = _place(a.source)
            if place is None:
                continue
            kind, module, table = place
            if kind == "prototype":
                own.add(drug_id)
                pages.setdefault(module, set()).add((table, drug_id))
            else:
                rows.setdefault(drug_id, set()).add(module)
    found: dict[str, str] = {}
    for drug_id, modules in rows.items():
        drug = drugs.get(drug_id)
        if drug_id in own or drug is None or not drug.drug_class:
            continue
        candidates = sorted({(table, p, drugs[p].drug_class) for m in modules for table, p in pages.get(m, ())
                             if p != drug_id and p in drugs and drugs[p].drug_class})
        if (proto := choose_prototype(drug.generic_name, drug.drug_class, candidates)) is not None:
            found[drug_id] = proto
    return found


@lru_cache(maxsize=4)
def prototypes_of(retriever) -> dict[str, str]:
    """The prototype map of a drug retriever's catalog (retrieve/drugs.DrugRetriever), built once."""
    entries = {d: [retriever.attributes[i] for i in idx] for d, idx in retriever.by_drug.items()}
    return find_prototypes(retriever.drugs, entries)


# The kinds a class shares, and a patient asks about a medicine they take: what it may do to them,
# what not to take or have with it, when not to use it. What a drug is for and how it works are
# its own (an "Anticoagulant" prototype, warfarin, blocks vitamin K; heparin does not).
CLASS_TYPES = frozenset({AttributeType.ADVERSE_REACTIONS, AttributeType.INTERACTIONS,
                         AttributeType.CONTRAINDICATIONS, AttributeType.WARNINGS})


def prototype_sentence(drug: Drug, prototype: Drug, phrase: str, named: Sequence[str], number: int = 1) -> str:
    """What the prototype's entry says of what was asked, as the prototype's: ``named``, its items
    near the question, quoted."""
    quoted = join_items([chr(8220) + n.rstrip(".") + chr(8221) for n in named])
    return (f"In the book, {prototype.display_name} is the prototype of {drug.display_name}'s class "
            f"({prototype.drug_class}); its {phrase} [{number}] include {quoted}. Whether this holds for "
            f"{drug.display_name} is for your pharmacist or doctor to judge.")


def prototype_reply(reader, turns: Sequence[str], asked_of: Sequence[Drug], asked: AttributeType,
                    number: int = 1) -> tuple[str, Citation] | None:
    """The sentence on a class prototype's entry of the ``asked`` kind and its citation [``number``], or
    None: the first of ``asked_of`` (the drugs asked about, the subject first) whose class has a
    prototype with such an entry. ``reader``: the ConsultReader, whose choice of entries and item
    matching are reused with the prototype as the subject and the other drugs asked about as its
    partners (citalopram with tramadol: fluoxetine's interactions list "Tramadol")."""
    s = reader.settings
    if asked not in CLASS_TYPES:
        return None
    prototypes = prototypes_of(reader.drugs)
    for drug in asked_of:
        proto_id = prototypes.get(drug.drug_id)
        if proto_id is None:
            continue
        partners = [d.drug_id for d in asked_of if d is not drug and d.drug_id != proto_id]
        # "I have asthma — is propranolol a problem?" reads as contraindications; metoprolol's
        # warnings name asthma: either safety entry that names what was said answers
        kinds = SAFETY_PAIR if asked in SAFETY_PAIR else {asked}
        entries = [c for c in reader.choose(turns, proto_id, partners).choices
                   if c.drug.drug_id == proto_id and c.attribute.type in kinds and c.attribute.text.strip()]
        # the entry whose item is nearest what was said (asthma: metoprolol's warnings, not its
        # contraindications' "Hypersensitivity")
        matched = sorted(((c, named) for c in entries if (named := near_items(c, s))),
                         key=lambda cn: -(cn[0].best.similarity if cn[0].best else 0.0))
        if not matched:
            # the whole list is no answer: "how to stop taking bisoprolol" is not answered by
            # metoprolol's warnings, nor "does benazepril aggravate hepatitis?" by enalapril's
            # side effects (dev, session 35: 5 of 18 such offers to the point)
            continue
        choice, named = matched[0]
        t = choice.attribute.type
        sentence = prototype_sentence(drug, choice.drug, PHRASE.get(t, t.value), named, number)
        return sentence, record_citation(choice.drug, choice.attribute, number)
    return None


def near_items(choice, s) -> list[str]:
    """The entry's items that match what was said (``s``: the reply settings; ``match_at``), else
    its nearest item from ``hedge_at`` — as the reply names its closest item; the sentence names
    it as the prototype's only — never one naming something else; at most ``max_items``."""
    named = [m.text for m in answering_items(choice, s.match_at, s.max_items)]
    near = choice.best
    return named or ([near.text] if near is not None and near.answers(s.hedge_at) else [])
