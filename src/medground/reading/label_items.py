"""The lines of an FDA label section that are the section's scaffolding, not its content.

A label's "adverse reactions" section, split into lines, holds its reactions ("Headache",
"Dizziness and Ataxia") beside its headings ("6 ADVERSE REACTIONS", "6.1 Clinical Trials
Experience"), the reporting boilerplate ("To report SUSPECTED ADVERSE REACTIONS, contact …"), a
table's header rows ("Mean Age (years)", "N=198 N=99", "Severe (%)") and its MedDRA system-organ-
class rows ("Nervous system disorders"). Matched against what a patient says, scaffolding wins by
accident ("like ages" met "Mean Age" at 0.66, "very painful" met "Severe" at 0.55) and the reply
quotes it. The rules below read the form of a label (numbering, table notation, the regulator's
fixed sentences, the MedDRA class names), never the words of any reaction.
"""

from __future__ import annotations

import re

# "6 ADVERSE REACTIONS", "5.5 Hyponatremia": a numbered heading (not "5 mg twice daily"); its title
# is kept when it names something ("Hyponatremia"), dropped when it names the kind of section
# ("Clinical Trials Experience", "… in Rheumatoid Arthritis" too).
_NUMBERED = re.compile(r"^\s*(?:\d+(?:\.\d+)+\s+(?=[A-Z])|\d{1,2}\s+(?=[A-Z]{3,}\b))")
_SECTION_WORDS = frozenset("adverse reaction reactions warning warnings precaution precautions clinical trial trials "
                           "study studies experience experiences postmarketing post-marketing marketing boxed and "
                           "in of from the overview".split())
_BOILERPLATE = re.compile(r"^(?:excerpt:\s*)?(?:to report suspected adverse reactions|because clinical trials are "
                          r"conducted under widely varying conditions|the following (?:serious )?adverse reactions "
                          r"(?:are|have been) (?:discussed|described))", re.IGNORECASE)
# the template's exposure sentences: who was studied, not what happened to them
_EXPOSURE = re.compile(r"^(?:excerpt:\s*)?(?:(?:a total of|approximately|over|more than)\s+[\d,]+\s+(?:\w+\s+){0,3}"
                       r"(?:patients|subjects|adults|children|individuals)\b.{0,80}\b(?:were|have been) "
                       r"(?:treated|exposed|enrolled|randomized|evaluated|studied)|(?:the|these) data (?:described )?"
                       r"(?:below |herein |above )?reflect|the safety of .{0,80}\bwas (?:evaluated|assessed|studied)|"
                       r"data from .{0,200}\b(?:are|is) (?:presented|shown|summari[sz]ed)|"
                       r"\S+(?: \S+){0,3} (?:was|were) studied in|the (?:study )?population (?:had|was|were|included)\b)",
                       re.IGNORECASE)
# a table's caption, header or count row: "Table 2: …", "N=5902 N=2926", "Men (n)", "Overall (%)"
_CAPTION = re.compile(r"^\s*table\s+\d", re.IGNORECASE)
_TABLE_META = re.compile(r"\b[Nn]\s*=\s*\d|\((?:n|N|%|years)\)")
_PLACEBO_HEADER = re.compile(r"\bplacebo\b", re.IGNORECASE)
# MedDRA's 27 system organ classes and COSTART's body systems (the two standard vocabularies a
# label's reaction table groups its rows by): a row that is one of them is a header.
_ORGAN_CLASSES = frozenset(
    " ".join(re.findall(r"[a-z]+", c.lower())) for c in (
        "Blood and lymphatic system disorders", "Cardiac disorders", "Congenital, familial and genetic disorders",
        "Ear and labyrinth disorders", "Endocrine disorders", "Eye disorders", "Gastrointestinal disorders",
        "General disorders and administration site conditions", "Hepatobiliary disorders",
        "Immune system disorders", "Infections and infestations", "Injury, poisoning and procedural complications",
        "Investigations", "Metabolism and nutrition disorders", "Musculoskeletal and connective tissue disorders",
        "Neoplasms benign, malignant and unspecified (incl cysts and polyps)", "Nervous system disorders",
        "Pregnancy, puerperium and perinatal conditions", "Psychiatric disorders", "Renal and urinary disorders",
        "Reproductive system and breast disorders", "Respiratory, thoracic and mediastinal disorders",
        "Skin and subcutaneous tissue disorders", "Social circumstances", "Surgical and medical procedures",
        "Vascular disorders", "Product issues",
        "Body as a whole", "Cardiovascular system", "Digestive system", "Endocrine system",
        "Hemic and lymphatic system", "Metabolic and nutritional disorders", "Musculoskeletal system",
        "Nervous system", "Respiratory system", "Skin and appendages", "Special senses", "Urogenital system",
        "Reproductive system", "Urinary system", "Gastrointestinal", "Cardiovascular", "Other"))
_WORD = re.compile(r"[A-Za-z][A-Za-z-]+")
# a MedDRA class name glued to the table's first row under it ("Infections and infestations Malaria"):
# the row is what follows (never a one-word body system: "Gastrointestinal bleeding" is one item)
_CLASS_PREFIX = re.compile(
    r"^\W*(?:" + "|".join(r"\W+".join(c.split()) for c in sorted(_ORGAN_CLASSES, key=len, reverse=True)
                           if len(c.split()) > 1 and c.split()[-1] in {"disorders", "conditions", "infestations",
                                                                        "complications", "procedures", "circumstances"})
    + r")\W+(?=\w)", re.IGNORECASE)
_EXCERPT = re.compile(r"^\s*EXCERPT:\s*\*?\s*")
_FIRST_SENTENCE = re.compile(r"^.*?[a-z0-9)%][.!?]\s+(?=[A-Z])")


def label_item(item: str) -> str | None:
    """The item as a patient's words should meet it — a numbered heading's title without its number
    ("5.5 Hyponatremia" → "Hyponatremia", a verbatim piece of the line) — or None when the line is
    scaffolding."""
    item = _EXCERPT.sub("", item)  # the TAC 2017 labels' marker of a highlights excerpt, not the label's words
    if _BOILERPLATE.match(item) or _CAPTION.match(item) or _EXPOSURE.match(item):
        # a paragraph that goes on past its scaffolding sentence keeps the rest ("The population had
        # a mean age of 39 … In these trials, 93% of patients … reported …")
        rest = _FIRST_SENTENCE.match(item)
        return label_item(item[rest.end():]) if rest and len(item[rest.end():].split()) >= 4 else None
    words = _WORD.findall(item)
    if not words or (_TABLE_META.search(item) and (len(words) <= 10 or "." not in item)):
        return None
    if numbered := _NUMBERED.match(item):
        title = item[numbered.end():].strip()
        lead = [w.lower() for w in _WORD.findall(title)][:3]
        if not lead or all(w in _SECTION_WORDS for w in lead):
            return None
        item = title
    if " ".join(re.findall(r"[a-z]+", item.lower())) in _ORGAN_CLASSES:
        return None
    if glued := _CLASS_PREFIX.match(item):
        item = item[glued.end():]
    if len(words) <= 8 and "." not in item and _PLACEBO_HEADER.search(item):
        return None
    return item


def label_items(items: list[str]) -> list[str]:
    """A label section's items without its scaffolding (order kept, each item once)."""
    return list(dict.fromkeys(i for i in (label_item(x) for x in items) if i))


def is_label(source: str) -> bool:
    """An entry read from an FDA label (drug_builders.add_fda_labels' source)."""
    return source.startswith("fda-tac2017")
