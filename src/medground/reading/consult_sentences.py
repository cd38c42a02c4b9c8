"""The consultation reply's first sentence: the answer in plain words, built from the chosen entry
and its matched items by deterministic templates (reading/consult.py chooses the entry)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from medground.drug_schema import AttributeType, Drug
from medground.reading.class_match import names_a_group
from medground.reading.consult_text import is_yes_no, join_items, opening, split_items

if TYPE_CHECKING:
    from medground.reading.consult_settings import ConsultReplySettings
    from medground.reading.consult_types import EntryChoice, ItemMatch

A = AttributeType

# Entries that list things (one item a line): a question about one thing is answered by the item.
LIST_TYPES = frozenset({A.ADVERSE_REACTIONS, A.INTERACTIONS, A.CONTRAINDICATIONS, A.WARNINGS,
                        A.BOXED_WARNING, A.INDICATIONS, A.THERAPEUTIC_EFFECTS})
PHRASE = {A.ADVERSE_REACTIONS: "side effects (adverse reactions)", A.INTERACTIONS: "interactions",
          A.CONTRAINDICATIONS: "contraindications (when it should not be used)",
          A.WARNINGS: "warnings and precautions", A.BOXED_WARNING: "boxed warning", A.DOSAGE: "dosage",
          A.INDICATIONS: "uses (indications)", A.MECHANISM: "mechanism of action", A.DRUG_CLASS: "drug class",
          A.THERAPEUTIC_EFFECTS: "therapeutic effects", A.STORAGE: "storage",
          A.SPECIAL_POPULATIONS: "use in special populations"}


def brief(text: str, limit: int) -> str:
    """``text`` cut at a word boundary within ``limit`` characters, marked with an ellipsis."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(" ,;:") + " \u2026"


def with_class(drug: Drug) -> str:
    """"Pantoprazole (Proton-pump inhibitors, PPIs)": the name with its class, if known."""
    if not drug.drug_class:
        return drug.display_name
    flat = re.sub(r"\s*\(([^()]*)\)", r", \1", drug.drug_class)  # no parentheses within parentheses
    return f"{drug.display_name} ({flat})"


def listing(text: str, max_listed: int) -> str:
    """An entry's items, at most ``max_listed`` named and the rest counted."""
    items = list(dict.fromkeys(split_items(text.strip())))
    shown = "; ".join(i.rstrip(".") for i in items[: max_listed])
    more = len(items) - max_listed
    return shown + (f"; and {more} more" if more > 0 else "")


def heading_only(line: str) -> bool:
    """A sub-heading of an entry's text ("Extended release:", "Treatment of osteoporosis:"): a few
    words and a colon, no number — what the lines under it are about, nothing said by itself."""
    line = line.strip()
    return line.endswith(":") and len(line.split()) <= 6 and not re.search(r"\d", line)


def heading_over(line: str, lines: Sequence[str]) -> str | None:
    """The sub-heading the entry's ``line`` sits under (the nearest heading line before it), if any."""
    if line not in lines:
        return None
    return next((x for x in reversed(lines[: lines.index(line)]) if heading_only(x)), None)


def first_sentence(turn: str, best: EntryChoice, matched: list[ItemMatch], settings: ConsultReplySettings,
                   p_type: dict[AttributeType, float] | None = None,
                   partners: Sequence[Drug] = ()) -> tuple[str, list[str]]:
    """The answer in plain words (cited [1]) and the entry's words to quote after it;
    ``partners``: the other named drugs, whose names an interactions entry would list."""
    s = settings
    t, drug = best.attribute.type, best.drug.display_name
    items = [m.text for m in matched]
    text = best.attribute.text.strip()
    all_items = list(dict.fromkeys(split_items(text)))
    # One paragraph split into sentences, or a label section of many or long lines, is prose:
    # quote its lines closest to the question. A list of short items (a prototype table's
    # adverse effects, 13 lines or 30) is a list whatever its length; a short entry of a few
    # long lines (a dose schedule) is quoted whole.
    short = "\n" in text and max((len(i) for i in all_items), default=0) <= s.short_item
    prose = len(all_items) > 1 and ("\n" not in text or
                                    (not short and (len(all_items) > s.max_listed or len(text) > 600)))
    if t in LIST_TYPES and items:
        # a label section's item can be a paragraph: the sentence names its opening words,
        # the quote after it gives its opening sentences verbatim
        if s.first_names_short:
            # a label's sentence items are quoted after it, not strung into the first sentence
            # ("Caution — Gout Flare, After initiation of ULORIC, an increase in … and In order to
            # prevent gout flares … are listed"): it names the short ones, or the first one
            items = [i for i in items if len(i) <= s.short_item] or items[:1]
        listed = join_items([brief(i, s.short_item) for i in items])
        verb = "is" if len(items) == 1 else "are"
        # a part is quoted as the whole item the source listed ("Cramping/diarrhea": abdominal)
        items = list(dict.fromkeys(opening(m.quote or m.text, s.quote_chars) for m in matched))
        if t is A.ADVERSE_REACTIONS:
            # "Yes" only when the question is a yes/no question about side effects.
            # or when the LLM affirmed that what the patient describes is the item named.
            asks_side_effects = ((bool(p_type) and max(p_type, key=p_type.get) is A.ADVERSE_REACTIONS)
                                 or any(best.checked.get(i, 0.0) > 0.5 for i in items))
            lead = "Yes \u2014 " if is_yes_no(turn) and asks_side_effects else ""
            return f"{lead}{listed} {verb} listed among {drug}'s {PHRASE[t]} [1].", items
        if t is A.INTERACTIONS:
            grouped = next((m for m in matched if m.class_of), None)
            group = f" ({grouped.class_of}'s class in the database: {grouped.phrase})" if grouped else ""
            return f"Caution \u2014 {drug}'s listed interactions include {listed} [1]{group}.", items
        named = next((m for m in matched if m.class_of), None) if t is A.WARNINGS else None
        if named is not None:
            # a warnings sentence naming the other drug (reply.partner_warnings): say whom it names
            one = f" \u2014 {named.class_of} is one" if named.phrase != named.class_of else ""
            return f"Caution \u2014 {drug}'s {PHRASE[t]} name {named.phrase} [1]{one}.", items
        if t in {A.CONTRAINDICATIONS, A.WARNINGS, A.BOXED_WARNING}:
            return f"Caution \u2014 {listed} {verb} listed in {drug}'s {PHRASE[t]} [1].", items
        return f"{drug}'s {PHRASE[t]} include {listed} [1].", items
    near = best.best
    if near is not None and near.sibling and t in LIST_TYPES:
        # "cranberry juice" met "Grapefruit juice" through "juice": the entry names the other
        # thing of that kind, which is not an answer about the patient's
        return (f"The database does not list {near.sibling} among {drug}'s {PHRASE[t]} [1]; it lists "
                f"\u201c{near.text}\u201d, which is not the same thing. Whether {near.sibling} is related is for "
                f"your pharmacist or doctor to judge. The full list: {listing(text, s.max_listed)}.", [])
    if t is A.INTERACTIONS and partners:
        names = join_items([d.display_name for d in partners])
        named = join_items([with_class(d) for d in partners])
        if all(d.drug_class for d in partners) and not any(names_a_group(i) for i in all_items):
            # a drug is matched by name, generic and class, and the entry lists only single
            # drugs and foods: unmatched is not listed
            return (f"The database does not list {named} among {drug}'s interactions [1]; "
                    f"it lists: {listing(text, s.max_listed)}.", [])
        # a listed group may hold the drug under no class the database knows (simvastatin is
        # a "CYP3A4 substrate"): the entry does not name it, which is all we know
        return (f"{drug}'s interactions [1] do not name {named}; they list: {listing(text, s.max_listed)}. "
                f"Whether {names} belongs to one of these groups is for your pharmacist or doctor to judge.",
                [])
    if prose:
        # a sub-heading line ("Extended release:", "For bacterial conjunctivitis:") says nothing by
        # itself: never quoted alone, but before a line under it, which it names the case of
        lines = [m for m in best.items if not heading_only(m.text)] or best.items
        close: list[str] = []
        for m in lines[: s.prose_quote]:
            heading = heading_over(m.text, all_items)
            close += [q for q in (heading, opening(m.quote or m.text, s.quote_chars)) if q and q not in close]
        close = close or [opening(i, s.quote_chars) for i in all_items[: s.prose_quote]]
        return f"From {drug}'s {PHRASE.get(t, t.value)} [1], the lines closest to your question:", close
    if t in {A.ADVERSE_REACTIONS, A.INTERACTIONS, A.CONTRAINDICATIONS, A.WARNINGS} and is_yes_no(turn):
        near = best.best if best.best is not None and best.best.similarity >= s.item_floor else None
        # "drink" names no drink; "potassium pills" are no "Lithium"
        if near is not None and near.similarity >= s.hedge_at and not near.names_something_else:
            what = "it is what you describe" if t is A.ADVERSE_REACTIONS else "it covers what you asked about"
            return (f"The closest item listed among {drug}'s {PHRASE[t]} is \u201c{near.text}\u201d [1]; "
                    f"whether {what} is for your pharmacist or doctor to judge.", [])
        # no item matched: not listed in those words, and the list decides. Never a flat "not
        # listed": MiniLM puts "everything looks blue" under 0.3 from "Abnormal vision" and
        # "wiped out all day" from "Fatigue" — far from an item is not far in meaning.
        return (f"The database does not list what you describe, in those words, among {drug}'s {PHRASE[t]} [1]; "
                f"it lists: {listing(text, s.max_listed)}. Whether one of these is what you mean is for your "
                f"pharmacist or doctor to judge.", [])
    if t is A.DRUG_CLASS:
        return f"{drug} is a medicine of this class: {text.rstrip('.')} [1].", []
    if t is A.INDICATIONS:
        return f"{drug} is used for: {'; '.join(i.rstrip('.') for i in all_items)} [1].", []
    if t is A.DOSAGE:
        return f"The database gives this dosage for {drug} [1]: \u201c{text}\u201d", []
    if t is A.MECHANISM:
        return f"How {drug} works [1]: \u201c{text}\u201d", []
    return f"{drug}'s {PHRASE.get(t, t.value)} [1]: {'; '.join(all_items)}.", []


def groups_sentence(best, other, number: int) -> str | None:
    """The first sentence when neither interactions entry names the other drug, the chosen one
    (``best``, cited [1]) lists single drugs only, and the other's (``other``, cited [``number``])
    lists groups of drugs: "does not list Clopidogrel among Omeprazole's interactions" reads as a
    no, while clopidogrel's "CYP2C19 inhibitors" may hold omeprazole under a class the database
    does not know. None otherwise (a chosen entry with groups is hedged by first_sentence)."""
    groups = [i for i in split_items(other.attribute.text) if names_a_group(i)]
    if not groups or any(names_a_group(i) for i in split_items(best.attribute.text)):
        return None
    drug = best.drug
    return (f"{drug.display_name}'s interactions [1] do not name {other.drug.display_name}, but "
            f"{other.drug.display_name}'s interactions [{number}] list groups of drugs ({join_items(groups[:4])}); "
            f"whether {drug.display_name} belongs to one of them is for your pharmacist or doctor to judge.")


NO_ENTRY_TAIL = " A pharmacist or the package leaflet can answer this."


def no_entry_text(name: str, held: Iterable[AttributeType], asked: AttributeType | None,
                  others: Mapping[str, set[AttributeType]]) -> str:
    """The abstention when no entry relates: what was looked for (``asked``; None: a question no
    entry answers), and what each drug's entries cover — the other drugs asked about too, by name,
    a kind called missing only for a drug that lacks it ("their entries cover dosage" once gave
    the first drug's coverage as both's)."""
    def kinds(types: Iterable[AttributeType]) -> str:
        return ", ".join(sorted({PHRASE.get(t, t.value) for t in types}))

    tail = NO_ENTRY_TAIL
    if asked is None:
        return f"The medicine database has no entry on that for {name}; its entries cover {kinds(held)}.{tail}"
    what = PHRASE.get(asked, asked.value)
    if not others:
        return f"The medicine database has no entry on its {what} for {name}; its entries cover {kinds(held)}.{tail}"
    whose = " or ".join([name, *(other for other, types in others.items() if asked not in types)])
    each = [f"{name}'s entries cover {kinds(held)}"] + [f"{other}'s cover {kinds(types)}"
                                                        for other, types in others.items() if types]
    return f"The medicine database has no entry on the {what} of {whose}; {'; '.join(each)}.{tail}"
