"""Builders that fill the drug database (:mod:`medground.drug_schema`) from the shared data.

Sources (see :func:`build_catalog`):
- ``openstax-prototype``: Pharmacology for Nurses "Drug Prototype Table"s (cells of bold
  headings followed by lines);
- ``openstax-dosage-table``: the same book's "Drug | Routes and Dosage Ranges" tables, whose
  first cell is "generic\\n(Brand, Brand)" — the book's own brand↔generic links;
- ``fda-tac2017``: FDA label sections, keyed by brand (label_id), linked to a generic name;
- ``drug-ner`` (optional extra ``drugs``): the name→synonyms lexicon, used only to link and
  enrich names (:func:`~medground.drug_schema.load_drug_ner_lexicon`).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

from medground.corpus.base import BadInputError
from medground.corpus.drug_audit import is_partial_name
from medground.corpus.drug_classes import caption_class, class_label, expand_abbreviation
from medground.corpus.prose_brands import PAREN_AFTER, lower_case_words, new_brands
from medground.corpus.sentences import sentences_of
from medground.drug_schema import (
    AttributeType,
    Drug,
    DrugAttribute,
    DrugCatalog,
    NameLexicon,
    ParsedName,
    UnknownHeading,
    attribute_for_heading,
    clean_component,
    load_drug_ner_lexicon,
    normalize_heading,
    normalize_name,
    parse_drug_name,
    parse_name_with_brands,
    slugify,
)

# ---------------------------------------------------------------- catalog assembly


class CatalogBuilder:
    """Merges drugs from several sources by normalized generic name (deterministic)."""

    def __init__(self, lexicon: NameLexicon | None = None):
        self.lexicon = lexicon or NameLexicon()
        self.drugs: dict[str, Drug] = {}
        self.attributes: list[DrugAttribute] = []
        self.unknown: list[UnknownHeading] = []
        self.problems: list[str] = []
        self.counts: Counter[str] = Counter()
        # drug_id → the class labels of the tables the drug is listed in (see finish)
        self.table_classes: dict[str, list[str]] = {}
        self.definition_texts: list[str] = []  # where an abbreviated class is spelled out

    def drug(self, parsed: ParsedName, source_kind: str) -> Drug:
        generic = parsed.generic
        # Order-free key: "trimethoprim/sulfamethoxazole" is "sulfamethoxazole/trimethoprim".
        key = "-".join(sorted(parsed.components)) if parsed.components else generic
        drug_id = slugify(key)
        d = self.drugs.get(drug_id)
        if d is None:
            d = self.drugs[drug_id] = Drug(drug_id, generic, components=list(parsed.components))
        for s in parsed.synonyms:
            if s not in d.synonyms:
                d.synonyms.append(s)
        if source_kind not in d.sources:
            d.sources.append(source_kind)
        return d

    def add_brands(self, drug: Drug, brands: list[str]) -> None:
        known = {b.lower() for b in drug.brand_names}
        for b in brands:
            if normalize_name(b) != drug.generic_name and b.lower() not in known:
                drug.brand_names.append(b)
                known.add(b.lower())

    def add_attribute(self, drug: Drug, type_: AttributeType, text: str, source: str,
                      heading: str = "") -> None:
        text = text.strip()
        if not text:
            return
        if type_ is AttributeType.DRUG_CLASS and not drug.drug_class:
            drug.drug_class = re.sub(r"\s*\n\s*", "; ", text)
        self.attributes.append(DrugAttribute(drug.drug_id, type_, text, source, heading))

    def enrich_from_lexicon(self) -> None:
        """Lexicon variants of each generic become brand names or synonyms."""
        if not self.lexicon:
            return
        for d in self.drugs.values():
            for variant in self.lexicon.canonical_to_variants.get(d.generic_name, []):
                if (variant == d.generic_name or len(variant) < 4 or len(variant.split()) > 4
                        or len(self.lexicon.variant_to_canonical.get(variant, [])) != 1
                        or is_partial_name(variant, d.generic_name)):
                    continue
                if variant in self.lexicon.brands:
                    self.add_brands(d, [variant.title()])
                elif variant not in d.synonyms and variant not in {normalize_name(b) for b in d.brand_names}:
                    d.synonyms.append(variant)
                self.counts["lexicon_names"] += 1

    def confirm_brands_from_prose(self) -> None:
        """A lexicon synonym the book's prose names as the drug's brand becomes a brand: in
        parentheses right after the generic ("bupropion hydrochloride (Aplenzin, Wellbutrin,
        Zyban)") or after "brand name(s)" in a sentence naming the generic ("… with the brand name
        Zetia"). A name no source links to any drug is added as a brand only from the first form
        (:meth:`new_brands_from_prose`: "Phenytoin (Dilantin)", which no lexicon holds)."""
        owner: dict[str, Drug | None] = {}
        for d in self.drugs.values():
            for syn in d.synonyms:
                key = normalize_name(syn)
                owner[key] = d if owner.get(key, d) is d else None  # a name two drugs share: neither
        known = {normalize_name(n) for d in self.drugs.values() for n in (d.generic_name, *d.brand_names, *d.synonyms)}
        lowered = lower_case_words(self.definition_texts)
        for text in self.definition_texts:
            for sentence in sentences_of(text):
                low = sentence.lower()
                found = [(m.group(1).lower(), m.group(2)) for m in PAREN_AFTER.finditer(sentence)]
                self.new_brands_from_prose(sentence, known, lowered)
                found += [(low, m.group(1)) for m in _BRAND_NAMED.finditer(sentence)]
                for before, listed in found:
                    for name in (n.strip(" .") for n in re.split(r",|\band\b|\bor\b", listed)):
                        # a salt ("Cromolyn sodium") or an abbreviation ("TMP/SMX") is no brand
                        d = owner.get(normalize_name(name)) if name[:1].isupper() and "/" not in name else None
                        generic = d.generic_name.split("/")[0] if d is not None else ""
                        if (d is not None and generic in before and generic not in name.lower()
                                and name not in d.brand_names):
                            self.add_brands(d, [name])
                            d.synonyms = [x for x in d.synonyms if normalize_name(x) != normalize_name(name)]
                            self.counts["brands_from_prose"] += 1

    def new_brands_from_prose(self, sentence: str, known: set[str], lowered: frozenset[str]) -> None:
        """Names no source links to any drug, in parentheses right after one generic of the
        database (corpus/prose_brands.py: "Phenytoin (Dilantin)"), become its brands."""
        for drug, name in new_brands(sentence, self.drugs, known, lowered):
            self.add_brands(drug, [name])
            known.add(normalize_name(name))
            self.counts["new_brands_from_prose"] += 1

    def add_table_classes(self) -> None:
        """A drug with no "Drug class" cell of its own takes the classes of the tables that list
        it (:mod:`medground.corpus.drug_classes`) as its class: what its name is matched by in
        another drug's interactions list. No drug-class *entry* is made of them: on the Medication
        QA development part such entries answered questions of other kinds ("what milligrams
        does olanzapine come in" → its class; 10 replies lost, none gained)."""
        spelled: dict[str, str] = {}  # one caption labels many drugs: spell it out once
        for drug_id, labels in sorted(self.table_classes.items()):
            drug = self.drugs[drug_id]
            if drug.drug_class:
                continue
            for label in labels:
                if label not in spelled:
                    spelled[label] = expand_abbreviation(label, self.definition_texts)
            names = dict.fromkeys(spelled[label] for label in labels)
            drug.drug_class = "; ".join(names)
            self.counts["drug_classes_from_tables"] += 1

    def merge_duplicates(self) -> None:
        """A drug that is another under a second record joins it: a source's misspelling of its name
        ("Latanaprost (Xalatan)" of a dosage table is latanoprost, so a patient on Xalatan gets
        latanoprost's side effects too), or a drug table's dose-only row naming it
        ("Valproic acid, divalproex (Depakote)"). Its name becomes a synonym; brands and entries
        move over."""
        from medground.corpus.drug_audit import misspelt_generics, same_drug_records

        misspelt = misspelt_generics(list(self.drugs.values()), self.lexicon)
        types: dict[str, set[str]] = defaultdict(set)
        for a in self.attributes:
            types[a.drug_id].add(a.type.value)
        same = {k: v for k, v in same_drug_records(list(self.drugs.values()), types).items()
                if k not in misspelt and v not in misspelt}
        for (gone_id, kept_id), why in [*((m, "a misspelling in a source") for m in misspelt.items()),
                                        *((m, "a second record of it") for m in same.items())]:
            gone, kept = self.drugs.pop(gone_id), self.drugs[kept_id]
            for n in [gone.generic_name, *gone.synonyms]:
                # "estrogen" of a dose-only row is a fragment of "conjugated estrogen", no name of it
                if n not in kept.synonyms and n != kept.generic_name and not is_partial_name(n, kept.generic_name):
                    kept.synonyms.append(n)
            self.add_brands(kept, gone.brand_names)
            brands = {normalize_name(b) for b in kept.brand_names}  # a brand is never also a synonym
            kept.synonyms = [n for n in kept.synonyms if normalize_name(n) not in brands]
            kept.sources.extend(k for k in gone.sources if k not in kept.sources)
            kept.drug_class = kept.drug_class or gone.drug_class
            for a in self.attributes:
                if a.drug_id == gone_id:
                    a.drug_id = kept_id
            self.problems.append(f"{gone.generic_name!r} read as {kept.generic_name!r} ({why})")
            self.counts["misspellings_merged" if why.startswith("a misspelling") else "second_records_merged"] += 1

    def finish(self) -> DrugCatalog:
        from medground.corpus.drug_audit import resolve_brand_conflicts

        self.enrich_from_lexicon()
        self.confirm_brands_from_prose()
        self.add_table_classes()  # after every prototype table has given its class
        self.merge_duplicates()
        drugs = sorted(self.drugs.values(), key=lambda d: d.drug_id)
        resolved = resolve_brand_conflicts(drugs, self.lexicon)  # one name, one drug
        self.problems += resolved
        self.counts["name_conflicts_resolved"] += len(resolved)
        for d in drugs:
            d.brand_names.sort(key=str.lower)
        return DrugCatalog(drugs, self.attributes, self.unknown, self.problems, dict(self.counts))


def read_fda_records(path: Path) -> list[dict]:
    """``[{label_id, section_name, section_text, ...}]``; a malformed record names its index."""
    try:
        records = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise BadInputError(path, "whole file", "a JSON list of label sections", str(exc)) from None
    if not isinstance(records, list):
        raise BadInputError(path, "top level", "a JSON list", type(records).__name__)
    for i, r in enumerate(records):
        for key in ("label_id", "section_name", "section_text"):
            if not isinstance(r, dict) or not isinstance(r.get(key), str):
                raise BadInputError(path, f"record {i} field {key!r}", "a string",
                                    repr(r.get(key) if isinstance(r, dict) else r)[:60])
    return records


# ---------------------------------------------------------------- builders

PHARMACOLOGY_BOOK = Path("corpora/openstax/pharmacology-for-nurses")
FDA_LABELS = Path("drugs/fda-labels-tac2017")
_DRUG_COLUMN = {"drug", "name", "classification/drug"}


def _looks_like_heading(line: str) -> bool:
    line = line.strip()
    return (0 < len(line.split()) <= 5 and not re.search(r"\d", line)
            and not line.endswith((".", ",", ";")) and line[:1].isupper())


def split_cell(cell: str, source: str, unknown: list[UnknownHeading]
               ) -> list[tuple[str, AttributeType | None, str]]:
    """A prototype-table cell → [(heading, type, text)]: groups of lines separated by a blank
    line; a group whose first line is a known heading starts an attribute, any other group
    continues the previous one (its heading-like first line is reported)."""
    out: list[tuple[str, AttributeType | None, str]] = []
    for group in (g for g in re.split(r"\n\s*\n", cell) if g.strip()):
        lines = [ln.strip() for ln in group.split("\n") if ln.strip()]
        first, rest = lines[0], lines[1:]
        type_ = attribute_for_heading(first)
        if type_ is None and ":" in first:  # "Caution: Renal impairment"
            head, _, inline = first.partition(":")
            if (t := attribute_for_heading(head)) is not None:
                type_, first, rest = t, head, [inline.strip(), *rest]
        if type_ is not None:
            out.append((first.rstrip(":"), type_, "\n".join(rest)))
            continue
        if _looks_like_heading(first):
            unknown.append(UnknownHeading(source, first))
        if out:
            h, t, text = out[-1]
            out[-1] = (h, t, f"{text}\n\n{group.strip()}".strip())
        else:
            out.append((first, None, group.strip()))
    return out


def add_prototype_table(builder: CatalogBuilder, table, source: str) -> bool:
    """One "Drug Prototype Table" (no header row, cells of headed groups) → one drug."""
    parsed = parse_drug_name(table.caption or table.title, builder.lexicon)
    if not parsed.generic:
        builder.problems.append(f"{source}: caption names no drug: {table.caption!r}")
        return False
    drug = builder.drug(parsed, "openstax-prototype")
    for row in table.rows:
        for cell in row:
            for heading, type_, text in split_cell(cell, source, builder.unknown):
                if type_ is None:
                    builder.problems.append(f"{source}: text before any heading: {text[:60]!r}")
                    continue
                builder.add_attribute(drug, type_, text, source, heading)
    return True


def add_drug_list_table(builder: CatalogBuilder, table, source: str) -> int:
    """A "Drug | Routes and Dosage Ranges | ..." table: one drug per row, brands in parens."""
    columns = [attribute_for_heading(h) for h in table.header]
    for h, t in zip(table.header[1:], columns[1:]):
        if t is None:
            builder.unknown.append(UnknownHeading(source, h))
    table_class = caption_class(table.caption or table.title)
    group = None
    added = 0
    for row in table.rows:
        if not row or not any(c.strip() for c in row[1:]):
            # a group row ("Penicillin", "Other Anthracyclines") names the class of those below
            group = class_label(row[0]) if row and row[0].strip() else None
            continue
        # one cell may name several products of a drug, a blank line apart: "Carbidopa/levodopa
        # immediate-release tablet (Sinemet)" and "… oral disintegrating tablet (Parcopa)"
        drugs: list = []
        for product in (p for p in re.split(r"\n\s*\n", row[0]) if p.strip()):
            named = parse_name_with_brands(product)
            if named is None:
                name = re.sub(r"\s+", " ", product).strip()
                if len(name.split()) > 4 or not builder.lexicon.canonical(clean_component(name)):
                    continue
                named = (name, [])
            drug = builder.drug(parse_drug_name(named[0], builder.lexicon), "openstax-dosage-table")
            builder.add_brands(drug, named[1])
            if drug not in drugs:
                drugs.append(drug)
        for drug in drugs:
            for cell, type_, heading in zip(row[1:], columns[1:], table.header[1:]):
                if type_ is not None:
                    builder.add_attribute(drug, type_, cell, source, heading)
            for label in (group, table_class):
                if label:
                    builder.table_classes.setdefault(drug.drug_id, []).append(label)
            added += 1
    return added


def with_header_row(table):
    """A drug table that marks no header row but opens with one ("Drug | Routes and Dosage
    Ranges", six of the book's "Drug Emphasis Tables"), with that row as its header: its products
    and their brands are the book's own links ("Albuterol (Accuneb, Proventil, Ventolin)";
    Ventolin had been only a lexicon synonym)."""
    if not table.header and table.rows and normalize_heading(table.rows[0][0]) in _DRUG_COLUMN:
        return replace(table, header=table.rows[0], rows=table.rows[1:])
    return table


def add_openstax_book(builder: CatalogBuilder, book_dir: Path) -> None:
    from medground.corpus.openstax import iter_module_tables, parse_cnxml

    modules = sorted(Path(book_dir).glob("modules/*/index.cnxml"))
    if not modules:
        raise BadInputError(book_dir, "modules/*/index.cnxml", "OpenStax CNXML modules", "none")
    for path in modules:
        builder.definition_texts.append(re.sub(r"\s+", " ", " ".join(parse_cnxml(path).itertext())))
        for i, table in enumerate(iter_module_tables(path)):
            source = f"{table.module_id}#{table.table_id or f'table-{i}'}"
            caption = (table.caption or table.title).strip()
            table = with_header_row(table)
            first_col = normalize_heading(table.header[0]) if table.header else ""
            if caption.lower().startswith("sample"):
                continue  # the book's blank template
            if re.match(r"drug prototype", caption, re.IGNORECASE) and not table.header:
                if add_prototype_table(builder, table, f"openstax-prototype:{source}"):
                    builder.counts["prototype_tables"] += 1
            elif first_col in _DRUG_COLUMN:
                n = add_drug_list_table(builder, table, f"openstax-dosage-table:{source}")
                builder.counts["dosage_table_rows"] += n
                builder.counts["dosage_tables"] += bool(n)


# "generic (Brand, Brand)" and "… brand name(s) Brand and Brand" in the book's prose
_BRAND_NAMED = re.compile(r"brand names?\s+((?:[A-Z][\w-]*)(?:\s*(?:,|and|or)\s*[A-Z][\w-]*)*)")

_FDA_SECTIONS = {"adverse reactions", "warnings and precautions", "boxed warnings"}


def _clean_label_text(text: str) -> str:
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def link_brand(label_id: str, text: str, lexicon: NameLexicon) -> tuple[str, str] | None:
    """Brand label → (generic, how): the lexicon, else "BRAND [WORD] (generic ...)" in the text."""
    if canon := lexicon.canonical(label_id):
        return canon, "lexicon"
    pattern = rf"\b{re.escape(label_id)}(?:\s+[A-Z]+)?\s*\(([^()]{{3,120}})\)"
    for m in re.finditer(pattern, text, flags=re.IGNORECASE):
        inner = re.sub(r"\d[\d.,]*\s*(mg|mcg|g|ml|%)?", " ", m.group(1), flags=re.IGNORECASE)
        parts = [clean_component(p) for p in re.split(r"/|,| and ", inner) if p.strip()]
        known = [lexicon.canonical(p) or p for p in parts if lexicon.canonical(p)]
        if known:
            return "/".join(dict.fromkeys(known)), "label text"
    return None


def add_fda_labels(builder: CatalogBuilder, labels_dir: Path) -> None:
    files = sorted(Path(labels_dir).glob("*.json"))
    if not files:
        raise BadInputError(labels_dir, "*.json", "FDA label section files", "none")
    by_label: dict[str, list[tuple[str, dict]]] = {}
    for path in files:
        for r in read_fda_records(path):
            by_label.setdefault(r["label_id"], []).append((path.stem, r))
    for label_id in sorted(by_label):
        records = by_label[label_id]
        linked = link_brand(label_id, " ".join(r["section_text"] for _, r in records),
                            builder.lexicon)
        if linked is None:
            builder.problems.append(f"fda-tac2017:{label_id}: no generic name found; "
                                    "kept under its brand name")
            builder.counts["fda_unlinked"] += 1
            parsed = ParsedName(normalize_name(label_id), [], [])
        else:
            builder.counts[f"fda_linked_by_{linked[1].replace(' ', '_')}"] += 1
            parsed = parse_drug_name(linked[0].replace(" and ", "/"), builder.lexicon)
        drug = builder.drug(parsed, "fda-tac2017")
        builder.add_brands(drug, [label_id])
        for stem, r in records:
            name = normalize_name(r["section_name"])
            type_ = attribute_for_heading(name)
            source = f"fda-tac2017:{stem}/{label_id}"
            if type_ is None or name not in _FDA_SECTIONS:
                builder.unknown.append(UnknownHeading(source, r["section_name"]))
            if type_ is not None:
                builder.add_attribute(drug, type_, _clean_label_text(r["section_text"]), source,
                                      r["section_name"])
        builder.counts["fda_labels"] += 1


def build_catalog(data_root: Path, lexicon: NameLexicon | None = None) -> DrugCatalog:
    """The whole database from the shared data directory (deterministic: sorted inputs)."""
    builder = CatalogBuilder(load_drug_ner_lexicon() if lexicon is None else lexicon)
    add_openstax_book(builder, Path(data_root) / PHARMACOLOGY_BOOK)
    add_fda_labels(builder, Path(data_root) / FDA_LABELS)
    return builder.finish()
