"""The entity-oriented medicine database: Drug → DrugAttribute, and drug-name parsing.

Keys follow RagPULSE (Distill-Retrieve-Read): a drug key (generic name, with brand names and
synonyms pointing at it) → attribute keys from ONE controlled vocabulary (:class:`AttributeType`).
Every source heading reaches that vocabulary through :data:`HEADING_TO_ATTRIBUTE`; a heading
that is not in the table is reported in :attr:`DrugCatalog.unknown_headings`, never dropped
silently (its text stays with the attribute before it).

The builders that fill it from the shared data (OpenStax tables, FDA labels, the drug-NER
lexicon) live in :mod:`medground.corpus.drug_builders`. How a consultation was answered
(:class:`ConsultDetail`, the ``drugrag`` pipeline's ``Answer.detail``) is typed here too, at the
end, so every layer can read it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any

from medground.schema import AnswerDetail, ChoiceDetail


class AttributeType(str, Enum):
    DRUG_CLASS = "drug_class"
    MECHANISM = "mechanism"
    INDICATIONS = "indications"
    THERAPEUTIC_EFFECTS = "therapeutic_effects"
    DOSAGE = "dosage"
    INTERACTIONS = "interactions"
    ADVERSE_REACTIONS = "adverse_reactions"
    CONTRAINDICATIONS = "contraindications"
    WARNINGS = "warnings"
    BOXED_WARNING = "boxed_warning"
    SPECIAL_POPULATIONS = "special_populations"
    STORAGE = "storage"


A = AttributeType
# Normalized heading (lowercase, no trailing ":" or "(qualifier)") → attribute type.
HEADING_TO_ATTRIBUTE: dict[str, AttributeType] = {
    "drug class": A.DRUG_CLASS, "class": A.DRUG_CLASS,
    "mechanism of action": A.MECHANISM, "mechanism": A.MECHANISM,
    "indications": A.INDICATIONS, "indications and usage": A.INDICATIONS,
    "indications for use": A.INDICATIONS, "use": A.INDICATIONS,
    "therapeutic effects": A.THERAPEUTIC_EFFECTS,
    "drug dosage": A.DOSAGE, "drug dosing": A.DOSAGE, "dose": A.DOSAGE, "dosage": A.DOSAGE,
    "dosage and administration": A.DOSAGE, "routes and dosage ranges": A.DOSAGE,
    "drug routes and dosages": A.DOSAGE, "routes and dosages": A.DOSAGE,
    "dosage and routes of administration": A.DOSAGE,
    "recommended routes, dosages, and time": A.DOSAGE,
    "drug interactions": A.INTERACTIONS, "food interactions": A.INTERACTIONS,
    "drug and food interactions": A.INTERACTIONS, "interactions": A.INTERACTIONS,
    "adverse effects": A.ADVERSE_REACTIONS, "adverse reactions": A.ADVERSE_REACTIONS,
    "side effects": A.ADVERSE_REACTIONS,
    "contraindications": A.CONTRAINDICATIONS,
    "caution": A.WARNINGS, "warnings": A.WARNINGS, "precautions": A.WARNINGS,
    "warnings and precautions": A.WARNINGS,
    "boxed warnings": A.BOXED_WARNING, "boxed warning": A.BOXED_WARNING,
    "use in specific populations": A.SPECIAL_POPULATIONS, "pregnancy": A.SPECIAL_POPULATIONS,
    "lactation": A.SPECIAL_POPULATIONS,
    "storage": A.STORAGE, "storage and handling": A.STORAGE,
    "how supplied/storage and handling": A.STORAGE,
}


def normalize_heading(heading: str) -> str:
    h = re.sub(r"\s+", " ", heading).strip().lower().rstrip(":").strip()
    return re.sub(r"\s*\([^)]*\)$", "", h)  # "Adverse Effects (Fetus)" → "adverse effects"


def attribute_for_heading(heading: str) -> AttributeType | None:
    return HEADING_TO_ATTRIBUTE.get(normalize_heading(heading))


@dataclass(slots=True)
class Drug:
    drug_id: str
    generic_name: str  # lowercase; combinations as "a/b"
    brand_names: list[str] = field(default_factory=list)
    drug_class: str = ""
    synonyms: list[str] = field(default_factory=list)
    components: list[str] = field(default_factory=list)  # for combinations
    sources: list[str] = field(default_factory=list)  # source kinds that contributed

    @property
    def display_name(self) -> str:
        return "/".join(w.title() if w.islower() else w for w in self.generic_name.split("/"))


@dataclass(slots=True)
class DrugAttribute:
    drug_id: str
    type: AttributeType
    text: str
    source: str  # "<source kind>:<where>", e.g. "openstax-prototype:m00251#table-1"
    heading: str = ""  # the source's own heading, kept for provenance


@dataclass(slots=True)
class UnknownHeading:
    source: str
    heading: str


# Raised when the builders change what a database holds; a database built by an older version
# still loads, with a warning to rebuild (2: drug classes from the book's table captions; 3: a
# misspelt generic merged into the drug the lexicon knows, and brands only the book's prose names;
# 4: a prose brand after the generic's salt, "ergotamine tartrate (Cafergot)"; 5: a drug table's
# dose-only second record of a drug merged into it, "valproic acid, divalproex (Depakote)"; 6: a brand
# that is another record's generic name dropped, "aspirin" under salicylic acid).
CATALOG_VERSION = 6


@dataclass
class DrugCatalog:
    drugs: list[Drug]
    attributes: list[DrugAttribute]
    unknown_headings: list[UnknownHeading] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # builder counters (tables parsed, ...)


# ---------------------------------------------------------------- names

_SALTS = ("hydrochloride", "hcl", "sodium", "potassium", "bromide", "mesylate", "tartrate",
          "succinate", "sulfates", "sulfate", "acetate", "fumaric acid", "fumarate", "maleate",
          "citrate", "besylate", "chloride", "phosphate", "calcium", "magnesium")
_MINERALS = {"calcium", "magnesium", "sodium", "potassium", "lithium", "zinc", "iron", "silver",
             "aluminum", "aluminium", "ferrous"}
# What is left of "dimethyl fumarate" without its salt word is a chemical group, not a drug: the
# salt word is then part of the drug's name, as with a mineral.
_CHEMICAL_GROUP = re.compile(r"(?:mono|di|tri)?(?:methyl|ethyl|propyl|butyl)")
# A product's form is not part of the drug's name: "Carbidopa/levodopa immediate-release tablet
# (Sinemet)" is carbidopa/levodopa, and Sinemet its brand.
_FORMS = re.compile(r"\b(ophthalmic|otic)\s+(solution|suspension)\b|\bpatch\b|\bsolution\b"
                    r"|\b(extended|immediate|delayed|sustained|controlled)[- ]release\b"
                    r"|\b(oral(ly)?\s+)?disintegrating\b|\b(tablets?|capsules?)$|\b(er|xr|sr|dr)$")
_STRENGTH = re.compile(r"\b\d+(\.\d+)?\s*%(\s+and\s+\d+(\.\d+)?\s*%)?")


def normalize_name(name: str) -> str:
    s = unicodedata.normalize("NFKC", name).replace("’", "'").lower()
    return re.sub(r"\s+", " ", s).strip(" .,;:")


def strip_salt(name: str) -> str:
    """"metoprolol tartrate" → "metoprolol"; "magnesium sulfate" and "dimethyl fumarate" stay (the
    salt is the drug)."""
    for salt in _SALTS:
        if name.endswith(" " + salt):
            rest = name[: -len(salt) - 1].strip()
            if rest and rest not in _MINERALS and not _CHEMICAL_GROUP.fullmatch(rest):
                return rest
    return name


def slugify(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


class NameLexicon:
    """Variant → canonical generic names (lowercase). Empty when the extra is absent."""

    def __init__(self, variant_to_canonical: dict[str, list[str]] | None = None,
                 brands: set[str] | None = None):
        self.variant_to_canonical = variant_to_canonical or {}
        self.brands = brands or set()
        self.canonical_to_variants: dict[str, list[str]] = {}
        for variant, canons in sorted(self.variant_to_canonical.items()):
            for c in canons:
                self.canonical_to_variants.setdefault(c, []).append(variant)

    def canonical(self, name: str) -> str | None:
        found = self.variant_to_canonical.get(normalize_name(name), [])
        return found[0] if len(found) == 1 else None

    def knows(self, name: str) -> bool:
        """A drug name of the lexicon (one or several drugs')."""
        return normalize_name(name) in self.variant_to_canonical

    def __bool__(self) -> bool:
        return bool(self.variant_to_canonical)


def load_drug_ner_lexicon() -> NameLexicon:
    """The name table of ``drug-named-entity-recognition`` (MIT; optional extra ``drugs``)."""
    try:
        from drug_named_entity_recognition import drugs_finder
    except ImportError:
        return NameLexicon()
    data = drugs_finder.drug_variant_to_variant_data
    brands = {v for v, d in data.items() if d and d.get("is_brand")}
    return NameLexicon(dict(drugs_finder.drug_variant_to_canonical), brands)


@dataclass(slots=True)
class ParsedName:
    generic: str
    components: list[str]
    synonyms: list[str]


def clean_component(part: str) -> str:
    part = _FORMS.sub("", _STRENGTH.sub("", normalize_name(part)))
    return strip_salt(re.sub(r"\s+", " ", part).strip(" ,"))


def parse_drug_name(raw: str, lexicon: NameLexicon | None = None) -> ParsedName:
    """A caption or cell naming a drug → generic name, components, synonyms.

    "Drug Prototype Table: Trimethoprim and Sulfamethoxazole (TMP/SMX)" →
    generic "trimethoprim/sulfamethoxazole", components [trimethoprim, sulfamethoxazole],
    synonyms ["tmp/smx", "trimethoprim and sulfamethoxazole (tmp/smx)"].
    """
    lexicon = lexicon or NameLexicon()
    text = re.sub(r"^(sample\s+)?drug prototype( table)?\s*:?\s*", "", raw.strip(), flags=re.IGNORECASE)
    text = re.sub(r"\s*\(sources?:.*\)\s*$", "", text, flags=re.IGNORECASE)  # citation tail
    synonyms = [normalize_name(text)]
    paren = re.search(r"\(([^()]+)\)\s*$", text)
    if paren:
        synonyms.append(normalize_name(paren.group(1)))
        text = text[: paren.start()]
    base = normalize_name(text)
    parts = [p for p in re.split(r"\s*/\s*|,?\s+and\s+|\s+with\s+", base) if p.strip()]
    if len(parts) == 1 and lexicon and not lexicon.canonical(clean_component(base)):
        # "buprenorphine-naloxone", "bupropion naltrexone": split only into known names.
        for sep in ("-", " "):
            pieces = base.split(sep)
            if len(pieces) == 2 and all(lexicon.canonical(p) for p in pieces):
                parts = pieces
                break
    components = []
    for part in parts:
        clean = clean_component(part)
        canon = lexicon.canonical(clean) if lexicon else None
        # Canonicalize single names only: a lexicon canonical is sometimes a combination.
        if canon and "," not in canon and " and " not in canon:
            clean = canon
        if clean and clean not in components:
            components.append(clean)
    generic = "/".join(components) if components else base
    synonyms = [s for s in dict.fromkeys(synonyms) if s and s != generic]
    return ParsedName(generic, components if len(components) > 1 else [], synonyms)


def parse_name_with_brands(cell: str) -> tuple[str, list[str]] | None:
    """"Celecoxib\\n(Celebrex)" → ("Celecoxib", ["Celebrex"]); None if no brand parenthesis."""
    flat = re.sub(r"\s+", " ", cell).strip()
    m = re.match(r"^(?P<name>[^()]+?)\s*\((?P<brands>[^()]+)\)\s*$", flat)
    if not m:
        return None
    brands = [b.strip() for b in re.split(r"[,;]", m.group("brands")) if b.strip()]
    brands = [b for b in brands if b.lower() not in {"generic", "others", "various", "otc"}]
    return m.group("name").strip(), brands


# ---------------------------------------------------------------- how a consultation was answered
# (pipelines/drugrag.py). Answer.metadata's keys are the field names, with today's JSON shapes.


@dataclass(frozen=True, slots=True)
class SearchCall:
    """The arguments of ``search_engine``: what the medicine database was searched for."""

    keywords: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The distiller's tool call (the RagPULSE ``search_engine(keywords)``)."""

    arguments: SearchCall
    name: str = "search_engine"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": {"keywords": self.arguments.keywords}}


@dataclass(frozen=True, slots=True)
class RankedEntry:
    """One database entry the reply mode weighed (reading/consult.EntryChoice), numbers rounded."""

    drug: str  # drug id
    type: AttributeType
    p_type: float  # P(the question asks for this attribute type)
    best_item: str | None  # the entry's item closest to the patient's words (None: no item matched)
    similarity: float | None  # ... and how close
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"drug": self.drug, "type": self.type.value, "p_type": self.p_type, "best_item": self.best_item,
                "similarity": self.similarity, "score": self.score}


@dataclass(frozen=True, slots=True)
class ConsultReply:
    """The deterministic reply (``answer: reply``, reading/consult.Reply) and the entries it weighed."""

    first_sentence: str
    matched: list[str] = field(default_factory=list)  # the entry's items the reply names
    quotes: list[str] = field(default_factory=list)  # text quoted from the cited entries
    p_none: float = 0.0  # P(no entry of the subject drug answers)
    reason: str = ""
    ranked: list[RankedEntry] = field(default_factory=list)  # the best five, best first
    condition: str | None = None  # the patient's words read as a condition they have (reading/patient_condition.py)
    terms: list[str] = field(default_factory=list)  # what the patient describes, in the LLM's medical terms

    def to_dict(self) -> dict[str, Any]:
        out = {"first_sentence": self.first_sentence, "matched": list(self.matched), "quotes": list(self.quotes),
               "p_none": self.p_none, "reason": self.reason, "ranked": [r.to_dict() for r in self.ranked]}
        # said only when read
        return out | ({"condition": self.condition} if self.condition else {}) | (
            {"terms": list(self.terms)} if self.terms else {})


@dataclass(frozen=True, slots=True)
class SupportCheck:
    """The support pass over the retrieved entries (reading/support.passage_support), when it ran."""

    score: float | None  # 1 - P(no entry answers); None when no entry number was among the alternatives
    entry: int | None  # the [n] it chose (None: none)


@dataclass(frozen=True, slots=True)
class ConsultDetail(AnswerDetail):
    """How the drug consultation pipeline answered (a free-text consultation; a multiple-choice one
    carries it in :class:`ConsultChoiceDetail`). Field order is the JSON face's key order.
    ``distill_failure`` is said (null included) whenever ``search`` is; ``support_check`` is said as
    the keys ``support`` and ``supporting_entry`` (nulls included); any other field only when set."""

    unknown_drugs: dict[str, list[str]] | None = None  # a word not in the database -> the nearest names
    search: SearchCall | None = None
    distill_failure: str | None = None  # why the tool call failed (the raw consultation was searched)
    candidates: list[str] | None = None  # drug ids the patient named, the likely subject first
    query_mode: str | None = None  # "subject": keywords from the recognised drug, no tool call
    repaired: str | None = None  # why the subject drug's name was put in front of the call ...
    model_keywords: str | None = None  # ... and the keywords the model had written
    tool_call: ToolCall | None = None
    dropped_turns: int | None = None  # dialogue lines cut to fit max_dialogue_tokens
    reply: ConsultReply | None = None  # answer: reply
    support_check: SupportCheck | None = None
    unaddressed: list[str] | None = None  # what the patient asks about that no entry mentions
    address_moved_to: int | None = None  # the entry quoted instead of the supporting one
    uncited: bool | None = None  # answer: generate, and the text cites no entry
    extractive: bool | None = None  # the answer quotes the entry ...
    quoted: str | None = None  # ... these words of it

    def to_metadata(self) -> dict[str, Any]:
        face = AnswerDetail.to_metadata(self)
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "support_check":
                if self.support_check is not None:
                    out.update(support=self.support_check.score, supporting_entry=self.support_check.entry)
            elif f.name in face or (f.name == "distill_failure" and self.search is not None):
                out[f.name] = face.get(f.name)
        return out


@dataclass(frozen=True, slots=True)
class ConsultChoiceDetail(ChoiceDetail):
    """A multiple-choice question put to the drug consultation pipeline: the letter read
    (reading/choice.py fills the ChoiceDetail fields) and the consultation's search. The JSON face
    is flat, as it always was: the read's keys, then the consultation's."""

    consult: ConsultDetail | None = None

    def to_metadata(self) -> dict[str, Any]:
        read = ChoiceDetail.to_metadata(replace(self, consult=None))
        return {**read, **(self.consult.to_metadata() if self.consult is not None else {})}


def consult_detail(detail: AnswerDetail | None) -> ConsultDetail | None:
    """The consultation detail of an answer's ``detail``, whichever way it was read; None for others."""
    if isinstance(detail, ConsultChoiceDetail):
        return detail.consult
    return detail if isinstance(detail, ConsultDetail) else None
