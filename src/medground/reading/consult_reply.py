"""The consultation reply once an entry answers (reading/consult.py chose it): the first sentence
and the matched items quoted, then what else the patient must see — the other drug's interactions
list where neither names the other, the other drug's entry where it names the subject, a note when
the only product described is for a local route, and the drug's boxed warning."""

from __future__ import annotations

from collections.abc import Sequence

from medground.corpus.drug_audit import local_route
from medground.drug_schema import AttributeType, Drug, DrugAttribute
from medground.reading.consult_sentences import first_sentence, groups_sentence, listing
from medground.reading.consult_settings import ConsultReplySettings
from medground.reading.consult_text import split_items
from medground.reading.consult_types import _ROUTE_WORDS, EntryChoice, ItemMatch, Reply, record_citation
from medground.reading.reply import quote_line

A = AttributeType


def answered_reply(turns: Sequence[str], drug: Drug, best: EntryChoice, matched: list[ItemMatch],
                   choices: list[EntryChoice], others: list[Drug], p_type: dict[AttributeType, float],
                   s: ConsultReplySettings, entries: Sequence[DrugAttribute], *, p_none: float,
                   condition: str | None, terms: list[str]) -> Reply:
    """The reply from ``best`` (the chosen entry of ``drug``, the subject) and its ``matched`` items;
    ``choices``: every entry weighed, best first; ``others``: the other drugs asked about;
    ``entries``: the subject's entries (its boxed warning is among them)."""
    name = drug.display_name
    citations = [record_citation(best.drug, best.attribute, 1)]
    # what an interactions entry is asked to list: the other drugs with an entry among the
    # choices, else the other drugs asked about (a statin with no entry of its own, named with
    # amiodarone, is named in "does not list Simvastatin …", not called "what you describe")
    partners = (list({c.drug.drug_id: c.drug for c in choices if c.drug is not best.drug}.values())
                or [d for d in others if d is not best.drug])
    first, quotes = first_sentence(turns[-1] if turns else "", best, matched, s, p_type, partners)
    parts = [first]
    if quotes:
        parts.append(quote_line(citations[0].label, 1, quotes))
    if best.attribute.type is A.INTERACTIONS and not matched and partners:
        # Neither name is in this entry: the other drug's own list is the rest of the evidence
        # (clopidogrel's "CYP2C19 inhibitors" is what a patient adding Prilosec must see).
        other = next((c for c in choices if c.drug is partners[0] and c.attribute.type is A.INTERACTIONS
                      and c.attribute.text.strip()), None)
        if other is not None:
            citations.append(record_citation(other.drug, other.attribute, len(citations) + 1))
            hedged = groups_sentence(best, other, citations[-1].number)
            if hedged is not None:
                first, parts = hedged, [hedged]
            else:
                parts.append(f"{other.drug.display_name}'s interactions list: "
                             f"{listing(other.attribute.text, s.max_listed)} [{citations[-1].number}].")
    # The other named drug's own interactions entry, when it lists the subject (or its class).
    second = next((c for c in choices[1:] if c.drug is not drug and c.attribute.type is A.INTERACTIONS
                   and c.best is not None and c.best.answers(s.match_at)), None)
    if best.drug is drug and second is not None:
        citations.append(record_citation(second.drug, second.attribute, len(citations) + 1))
        parts.append(f"{second.drug.display_name}'s interactions also list \u201c{second.best.text}\u201d "
                     f"[{citations[-1].number}].")
    companion = companion_entry(best, drug, entries) if s.effects_with_mechanism else None
    if companion is not None:
        # "What does Plavix actually do?" asks what it does for the patient and how, in one: the
        # typer reads it as how it works (Medication QA's "Action"), a patient means what it is for
        citations.append(record_citation(drug, companion, len(citations) + 1))
        number = citations[-1].number
        if companion.type is A.THERAPEUTIC_EFFECTS:
            effects = "; ".join(i.rstrip(".") for i in split_items(companion.text))
            parts.append(f"What it does (its therapeutic effects) [{number}]: {effects}.")
        else:
            parts.append(f"How it works [{number}]: \u201c{' '.join(companion.text.split())}\u201d")
    route = local_route(drug)
    if route:  # the only product described is, say, an eye ointment: a patient on tablets must know
        parts.append(f"Note: the database's entries for {name} describe {_ROUTE_WORDS.get(route, route)} "
                     f"product ({drug.drug_class}); they may not apply to another form of it.")
    boxed = next((a for a in entries if a.type is A.BOXED_WARNING), None)
    if boxed is not None and best.attribute is not boxed:
        citations.append(record_citation(drug, boxed, len(citations) + 1))
        warn = split_items(boxed.text)[0]
        parts.append(f"{name} carries a boxed warning: \u201c{warn}\u201d [{citations[-1].number}].")
    return Reply("answered", " ".join(parts), citations, first, matched=[m.text for m in matched],
                 quotes=quotes, chosen=best, ranked=choices, p_none=p_none, condition=condition,
                 terms=terms)


def companion_entry(best: EntryChoice, drug: Drug, entries: Sequence[DrugAttribute]) -> DrugAttribute | None:
    """The subject's other entry of the pair "how it works" / "what it does" (mechanism, therapeutic
    effects) when the chosen entry is one of them and the record holds the other; else None."""
    pair = {A.MECHANISM: A.THERAPEUTIC_EFFECTS, A.THERAPEUTIC_EFFECTS: A.MECHANISM}
    other = pair.get(best.attribute.type)
    if other is None or best.drug is not drug:
        return None
    return next((a for a in entries if a.type is other and a.text.strip()), None)
