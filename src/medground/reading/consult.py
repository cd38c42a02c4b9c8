"""The consultation reply: which entry of the subject drug answers, and a reply that answers.

Entry choice (no word lists): every entry of the subject drug is a candidate. Its score is
``log P(its type | question)`` from the learned typer (reading/consult_typer.py, trained on
Medication QA's development part) plus a bonus for the best match, in meaning, between what the
patient describes and one item of the entry: list entries are split into items, the patient's
words into short phrases (stop words dropped, other named drugs expanded to their generic name
and class from the database), and both are embedded with the bundled MiniLM (reading/consult_items.py).
"A dry cough" then finds lisinopril's adverse-reactions item "Cough" although the typer alone
might prefer dosage. A clinical item is also matched through its MedlinePlus gloss and the plain
phrases consumer pages pair it with (corpus/lay_vocabulary.py: "Angioedema" ↔ "swelling",
"Ethanol" ↔ "alcohol"), which reach "my lips swelled" and "a glass of wine" where MiniLM alone
does not; an item is also matched through the members its parentheses name ("aged cheeses" of
"Foods high in tyramine (…)"). Two drugs asked about together: the other drug's interactions
entry is a candidate, and its warnings where a sentence names the subject or its class.
Settings: reading/consult_settings.py; what is weighed and returned: consult_types.py.

The reply is deterministic, filled from the matched items: a first sentence that answers in plain
words with its citation, the matched items quoted (not the whole list), and the drug's boxed
warning when it has one (composed in reading/consult_reply.py; the first sentence's templates:
reading/consult_sentences.py). Nothing is generated, so nothing needs a support check.

It abstains only when no entry can relate: the typer says the question is of a kind no drug
record answers (price, appearance, ingredients) and no item matches what was said, or the drug
has no entry of the type asked and nothing the patient describes matches an item.
The weights are settings, fitted on development sets only (benchmarks/consult_e2e.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from medground.drug_schema import AttributeType, Drug
from medground.reading.book_mentions import BookMentions
from medground.reading.consult_items import ItemSpace
from medground.reading.described import described_in, masked_for
from medground.reading.consult_settings import CHECKED_TYPES, TERM_TYPES, ConsultReplySettings
from medground.reading.ages import child_age, names_the_childs_age
from medground.reading.consult_checks import check_items, combined, verify
from medground.reading.consult_reframe import asking_part, asks_about_both, typer_texts
from medground.reading.consult_text import (
    WORD,
    clinical_terms,
    purpose_phrases,
    questions,
)
from medground.reading.class_match import mark_named
from medground.reading.record_facts import class_reply, sameness_reply
from medground.reading.consult_reply import answered_reply
from medground.reading.consult_offers import offered_instead
from medground.reading.consult_sentences import no_entry_text
from medground.reading.patient_condition import ConditionReader, as_condition_question, condition_named
from medground.reading.consult_types import (
    Choice,
    EntryChoice,
    ItemMatch,
    Reply,
    answering_items,
    distinct,
    held_and_elsewhere,
    no_entry_relates,
    safety_stand_in,
    part_of,
    record_citation,
    better_effect_first,
    safety_sibling_first,
    matched_entry_first,
    SAFETY_PAIR,
    EFFECT_PAIR,
    word_set,
)
from medground.reading.siblings import compounds, modifiers_only, sibling
from medground.schema import Citation

A = AttributeType

__all__ = ["CHECKED_TYPES", "Choice", "ConsultReader", "ConsultReplySettings", "EntryChoice", "ItemMatch",
           "Reply", "distinct", "held_and_elsewhere", "no_entry_relates", "part_of", "record_citation",
           "word_set"]


class ConsultReader:
    """Chooses the entry and writes the reply for one consultation."""

    def __init__(self, drugs, typer, embedder, settings: ConsultReplySettings | None = None,
                 verifier: Callable[[str, list[Citation]], dict[int, float]] | None = None,
                 item_checker: Callable[[str, list[str]], list[float]] | None = None, lay_vocabulary=None,
                 conditions: ConditionReader | None = None,
                 condition_checker: Callable[[str, str, str], float] | None = None,
                 term_writer: Callable[[str], str] | None = None,
                 book_mentions: Callable[[], BookMentions | None] | None = None,
                 book_check: Callable[[str, str], float] | None = None):
        self.drugs = drugs  # retrieve.drugs.DrugRetriever
        self.typer = typer  # reading.consult_typer.ConsultTyper
        self.embedder = embedder
        # the entries' items and the patient's phrases, matched under the reader's own settings
        self.space = ItemSpace(drugs, embedder, settings or ConsultReplySettings(), lay_vocabulary)
        # (dialogue, numbered entries) -> {number: P(that entry answers)}; the pipeline's LLM pass
        self.verifier = verifier
        # (the patient's words, items) -> P(the patient describes each item); the pipeline's LLM
        self.item_checker = item_checker
        self.conditions = conditions  # a condition or a substance named (reading/patient_condition.py)
        # (the patient's last turn, drug name, condition) -> P(they ask whether it is safe given it); the pipeline's LLM
        self.condition_checker = condition_checker
        # (the patient's words) -> what they describe in medical terms, comma-separated; the pipeline's LLM
        self.term_writer = term_writer
        # the textbook's sentences naming each drug (built on first use), and the LLM's
        # (question, sentence) -> P(it answers): reading/book_mentions.py
        self.book_mentions = book_mentions
        self.book_check = book_check

    @property
    def settings(self) -> ConsultReplySettings:
        return self.space.settings

    @settings.setter
    def settings(self, value: ConsultReplySettings) -> None:
        self.space.settings = value

    # ----------------------------------------------------------------- choice
    def choose(self, turns: Sequence[str], subject_id: str, other_ids: Sequence[str] = (),
               context_ids: Sequence[str] = (), terms: Sequence[str] = ()) -> Choice:
        """Entries of the subject drug (and the interactions of other named drugs), best first;
        P(no entry answers); P(type); the condition the patient named, if read as one.
        ``context_ids``: drugs of earlier turns, taken as the other drugs when none is named in
        the last turn and it most likely asks about an interaction. ``terms``: what the patient
        describes in medical terms (:meth:`clinical_terms`), matched as their own words are."""
        s = self.settings
        subject = self.drugs.drugs[subject_id]
        question = turns[-1] if turns else ""
        named_now = self.partners(subject_id, other_ids)
        p_type, p_none = self.type_probabilities(question, ItemSpace.drug_names(subject, named_now)[1:],
                                                 kinds=(subject.drug_class, subject.generic_name))
        both = s.both_reads_together and asks_about_both(question)
        others = self.partners(subject_id, other_ids, context_ids, p_type, both)
        names = ItemSpace.drug_names(subject, others)
        # about taking them together: both named now (when so set), or "both" pointing back
        pair_together = s.named_pair_reads == "together" or (both and not named_now)
        if others and p_type and pair_together:
            p_type = {t: p for t, p in p_type.items()}
            p_type[A.INTERACTIONS] = max(p_type.get(A.INTERACTIONS, 0.0), max(p_type.values()))
        rare = self.space.rare_words(question if s.rare_from == "turn" else " ".join(questions(question)), names)
        pairs = compounds(question, names) if s.sibling_until > s.match_at else []
        modifiers = modifiers_only(question, names) if s.modifiers_alone == "near" else set()
        named = [subject, *others]
        purpose = (purpose_phrases(question, names, self.space.substance_words()) if s.purpose_not_effect
                   else set())
        substances = self.space.substance_words() if s.substances_apart else frozenset()
        # An entry is matched against the *other* named drugs (what an interactions entry would
        # list), never against its own drug's name and class; every phrase is embedded once. Another
        # drug's entries, with partner_reads_subject, only against the subject's name and class: "Are
        # the new ones [Zetia] safe with grapefruit?" is not answered by Lipitor's "Grapefruit juice".
        per_drug = {d.drug_id: (self.space.phrases(turns, names, [o for o in named if o is not d])
                                if d is subject or not s.partner_reads_subject else ItemSpace.named_phrases([subject]))
                    for d in named}
        # the LLM's terms, where they are not the patient's own words, come last at full weight;
        # they reach only entries of TERM_TYPES
        said = {p for ps in per_drug.values() for p, _ in ps}
        term_only = {t for t in terms if t not in said}
        for ps in per_drug.values():
            ps += [(t, 1.0) for t in term_only]
        # a second medicine named by what it is ("a water pill"): asked about with the subject
        second, together = (described_in(self.space, self.embedder, subject, turns, p_type, names,
                                         s.match_at, s.hedge_at)
                            if s.described_medicines and not others and p_type else (None, False))
        if second is not None:
            if together:
                p_type = {**p_type, A.INTERACTIONS: max(p_type.values())}
            per_drug[subject.drug_id].append((second.description, 1.0))
            modifiers = modifiers - {second.description.lower()}  # "antibiotic" of "antibiotic pill" names it
        asked = " ".join(questions(question)).lower() if s.purpose_entries_from == "question" else ""
        if asked == question.strip().lower():  # nothing told before the question: nothing to keep out
            asked = ""
        texts = list(dict.fromkeys(p for ps in per_drug.values() for p, _ in ps))
        row = {t: i for i, t in enumerate(texts)}
        all_vecs = self.embedder.encode_queries(texts) if texts else None
        condition = None
        if not others and second is None and p_type and per_drug[subject.drug_id]:
            own = per_drug[subject.drug_id]
            condition = condition_named(self, question, subject, p_type, own, all_vecs[[row[p] for p, _ in own]],
                                             purpose)
            if condition is not None:
                p_type = as_condition_question(p_type)
        child = child_age(" ".join(turns)) if s.child_age_items else None
        choices: list[EntryChoice] = []
        for drug in named:
            phrases = per_drug[drug.drug_id]
            pvecs = all_vecs[[row[p] for p, _ in phrases]] if phrases else None
            weights = np.array([w for _, w in phrases], dtype=np.float32)
            items, vecs = self.space.items(drug.drug_id)
            item_names = self.space.item_names(drug.drug_id)
            member_of = self.space.member_of(drug.drug_id)
            whole_of = self.space.whole_of(drug.drug_id)
            for attr, its, iv, names_of, item_of, whole_item in zip(self.space.entries(drug.drug_id), items, vecs,
                                                                item_names, member_of, whole_of):
                # the other drug's warnings, only where a sentence names the subject (below)
                partner_warnings = s.partner_warnings and attr.type is A.WARNINGS and len(named) > 1
                if drug is not subject and attr.type is not A.INTERACTIONS and not partner_warnings:
                    continue
                matches: list[ItemMatch] = []
                if pvecs is not None and iv.shape[1]:
                    rows = iv @ pvecs.T  # rows × items × phrases
                    if rows.shape[0] > 2:  # mined phrases answer what is asked now, not earlier context
                        rows[2:] *= (weights >= 1.0)  # ("blood pressure pills" two turns back ≠ hypotension)
                    sims = rows.max(axis=0) * weights  # items × phrases, best row
                    if term_only:
                        # a term is the clinical word itself: it names an item outright or not at
                        # all ("dysgeusia" is not a hedge for "Diarrhea"), and only in TERM_TYPES
                        by_term = np.array([p in term_only for p, _ in phrases])
                        off = by_term & (attr.type not in TERM_TYPES)
                        sims = np.where(off | (by_term & (sims < s.match_at)), 0.0, sims).astype(np.float32)
                    if second is not None:  # its description and purpose meet interactions items only
                        sims = sims * masked_for(attr.type, phrases, second)
                    if purpose and drug is subject and attr.type in (A.ADVERSE_REACTIONS, A.INTERACTIONS):
                        # why the drug is taken is neither its effect nor a second substance ("on
                        # amoxicillin for a chest infection" ≠ "Aminoglycosides", an antibiotic);
                        # a phrase is a run of content words across stop words ("doctor blood pressure")
                        sims = sims * np.array([p not in purpose for p, _ in phrases],
                                               dtype=np.float32)
                    if asked and drug is subject and attr.type in (A.INDICATIONS, A.THERAPEUTIC_EFFECTS):
                        # why it is taken, told before the question, is no answer to the question
                        sims = sims * np.array([p.lower() in asked for p, _ in phrases], dtype=np.float32)
                    if condition is not None and (attr.type is A.WARNINGS or s.condition_reads != "interactions"):
                        # asked whether it is safe *with the condition*: the items are matched
                        # against that, not the rest ("on Zestril for my blood pressure" ≠
                        # "Orthostatic hypotension" when the patient is pregnant; "to quit
                        # smoking" ≠ the question when the patient has epilepsy)
                        sims = sims * np.array([p == condition.phrase for p, _ in phrases], dtype=np.float32)
                    best_phrase = sims.argmax(axis=1)
                    # the best match through the patient's other phrases: "stomach bleeding" still
                    # names "GI bleeding" when the modifier "stomach" alone was nearer
                    whole = (set(np.flatnonzero((sims * np.array([p.lower() not in modifiers for p, _ in phrases])
                                                 ).max(axis=1) >= s.match_at)) if modifiers else set())
                    for k, item in enumerate(its):
                        j = int(best_phrase[k])
                        matches.append(ItemMatch(item, float(sims[k, j]), phrases[j][0]))
                    if rare and (s.rare_in_indications or attr.type is not A.INDICATIONS):
                        # the purpose rule holds for a rare word too ("hay fever … still sneezing.
                        # can i take another one now?" is no question about what Claritin relieves)
                        purposive = asked and drug is subject and attr.type in (A.INDICATIONS, A.THERAPEUTIC_EFFECTS)
                        for m in matches:
                            hit = rare & word_set(m.text) & (word_set(asked) if purposive else rare)
                            if hit and m.similarity < s.lexical_match and not (
                                    # a study's sentence: one shared rare word says little of it
                                    s.rare_item_words is not None and attr.type is A.ADVERSE_REACTIONS
                                    and len(WORD.findall(m.text)) > s.rare_item_words):
                                m.similarity, m.phrase = s.lexical_match, sorted(hit)[0]
                    if child is not None and drug is subject and attr.type in SAFETY_PAIR:
                        # "my 9 year old" is one of "Children under age 12": numbers, not meaning
                        for m in matches:
                            if m.similarity < s.lexical_match and names_the_childs_age(m.text, child[0]):
                                m.similarity, m.phrase = s.lexical_match, child[1]
                    if attr.type is A.INTERACTIONS or partner_warnings:
                        # an item naming another named drug's class (in a warnings sentence, or
                        # the drug itself) is what was asked, whatever the embedding says
                        mark_named(matches, [o for o in named if o is not drug], s.lexical_match,
                                   prose=attr.type is not A.INTERACTIONS)
                    if (pairs or modifiers) and attr.type in TERM_TYPES:
                        # near matches that name no thing the patient asked about: through a word
                        # said only as a modifier ("drink" of "drink orange juice" near "Alcohol"),
                        # or a sibling ("cranberry juice" / "Grapefruit juice"); they still weigh
                        # in the entry's choice, but the reply does not call them what was asked
                        for k, (m, known) in enumerate(zip(matches, names_of)):
                            if s.match_at <= m.similarity < s.sibling_until:
                                m.modifier = k not in whole and m.phrase.lower() in modifiers
                                m.sibling = sibling(pairs, known, self.embedder, s.sibling_kin)
                    if attr.type in TERM_TYPES and s.substances_apart:
                        for m in matches:
                            said, listed = word_set(m.phrase) & substances, word_set(m.text) & substances
                            m.other_substance = bool(said and listed and not said & listed)
                    for m in matches:  # "aged cheeses" is Nardil's "Foods high in tyramine (…)"
                        m.text = item_of.get(m.text, m.text)
                        m.quote = whole_item.get(m.text, "")  # "Cramping" named, "Cramping/diarrhea" quoted
                    matches.sort(key=lambda m: -m.similarity)
                naming = partner_warnings and any(m.class_of for m in matches)
                if partner_warnings and drug is not subject and not naming:
                    continue
                top = matches[0].similarity if matches else 0.0
                # a warnings sentence naming the other drug answers the question about the two
                asked_as = A.INTERACTIONS if naming else attr.type
                score = float(np.log(p_type.get(asked_as, 0.0) + 1e-3)) + s.item_weight * max(0.0, top - s.item_floor)
                choices.append(EntryChoice(drug, attr, p_type.get(attr.type, 0.0), matches, score))
        # ties (no item above the floor) go to the entry whose best item is closest all the same
        choices.sort(key=lambda c: (-c.score, -(c.best.similarity if c.best else 0.0)))
        if s.safety_siblings:
            choices = safety_sibling_first(choices, s.hedge_at,
                                           (SAFETY_PAIR, EFFECT_PAIR) if s.effects_siblings else (SAFETY_PAIR,))
        if s.effects_sibling_margin is not None:
            choices = better_effect_first(choices, s.match_at, s.effects_sibling_margin, purpose, question)
        if s.matched_first != "off":
            choices = matched_entry_first(choices, s.hedge_at, s.match_at, asking_part(question, names),
                                          frozenset({A.INTERACTIONS}) if s.matched_first == "interactions" else None)
        return Choice(choices, p_none, p_type, condition.phrase if condition else None, others)

    def clinical_terms(self, turns: Sequence[str], subject_id: str, other_ids: Sequence[str] = ()) -> list[str]:
        """What the patient describes, in the medical terms an entry would use, from the LLM
        (``term_writer``); the named medicines' names are left out."""
        if self.term_writer is None or not turns:
            return []
        said = " ".join(turns)[-self.settings.clinical_terms_chars:]
        others = [self.drugs.drugs[i] for i in other_ids if i in self.drugs.drugs]
        names = ItemSpace.drug_names(self.drugs.drugs[subject_id], others)[1:]  # names, not the class
        return clinical_terms(self.term_writer(said), names, self.settings.clinical_terms_max)

    def partners(self, subject_id: str, other_ids: Sequence[str], context_ids: Sequence[str] = (),
                 p_type: dict[AttributeType, float] | None = None, both: bool = False) -> list[Drug]:
        """The drugs asked about with the subject: those named in the last turn, else (when the
        last turn most likely asks about an interaction, or ``both``: it asks about taking two at
        once) those of earlier turns; never the subject or a part of it."""
        subject = self.drugs.drugs[subject_id]

        def known(ids: Sequence[str]) -> list[Drug]:
            return [d for d in (self.drugs.drugs[i] for i in ids if i in self.drugs.drugs and i != subject_id)
                    if not part_of(subject, d)]

        now = known(other_ids)
        if now or not p_type or (max(p_type, key=p_type.get) is not A.INTERACTIONS and not both):
            return now
        return known(context_ids)

    def type_probabilities(self, turn: str, names: Sequence[str] = (), kinds: Sequence[str] = ()
                           ) -> tuple[dict[AttributeType, float], float]:
        """P(type) and P(none) of the last turn, read as ``typer_reads`` says; ``names``: the
        named drugs' names (the typer reads them as "this medicine" when it learned so);
        ``kinds``: words that name the subject by its kind (consult_reframe.attribution_question)."""
        texts = typer_texts(turn, names, kinds, self.settings)
        read = [self.typer.attribute_probabilities(t, names) for t in texts]
        if len(read) == 1:
            return read[0]
        (pt_turn, pn_turn), (pt_q, pn_q) = read
        return {t: (pt_turn.get(t, 0.0) + pt_q.get(t, 0.0)) / 2 for t in {*pt_turn, *pt_q}}, (pn_turn + pn_q) / 2

    def check_items(self, question: str, choice: EntryChoice) -> None:
        """The LLM's check of the chosen entry's closest items (reading/consult_checks.py)."""
        check_items(self.item_checker, self.settings, question, choice)

    def verify(self, turns: Sequence[str], choices: list[EntryChoice]) -> None:
        """The verifier's P(answers) for the best candidate entries (reading/consult_checks.py)."""
        verify(self.verifier, self.settings, turns, choices)

    # ------------------------------------------------------------------ reply
    def reply(self, turns: Sequence[str], subject_id: str | None, other_ids: Sequence[str] = (),
              context_ids: Sequence[str] = ()) -> Reply:
        s = self.settings
        if subject_id is None or subject_id not in self.drugs.drugs:
            text = ("Which medicine do you mean? Please give its name as on the box or the label "
                    "(brand or generic), and I will look it up.")
            return Reply("needs_clarification", text, [], text, reason="no medicine named")
        choices, p_none, p_type, condition, others = self.choose(turns, subject_id, other_ids, context_ids)
        terms: list[str] = []
        if (s.clinical_terms == "unmatched" and p_type and max(p_type, key=p_type.get) in TERM_TYPES
                and not any(m.answers(s.match_at) for m in (choices[0].items if choices else []))):
            # nothing the patient said matched an item: their words in medical terms may
            if terms := self.clinical_terms(turns, subject_id, other_ids):
                choices, p_none, p_type, condition, others = self.choose(turns, subject_id, other_ids,
                                                                          context_ids, terms)
        if s.verify_weight > 0 and self.verifier is not None and len(choices) > 1:
            self.verify(turns, choices)
            choices.sort(key=lambda c: -combined(c, s.verify_weight))
        drug = self.drugs.drugs[subject_id]
        name = drug.display_name
        if not choices:
            text = f"The medicine database has no entries for {name}."
            return Reply("insufficient_evidence", text, [], text, p_none=p_none, reason="no entries")
        if s.record_facts and not others and (same := sameness_reply(turns[-1] if turns else "", drug)):
            # two of its names asked to be one medicine: the record's names answer, not an entry
            return replace(same, ranked=choices, p_none=p_none)
        best = choices[0]

        def matched_in(choice: EntryChoice) -> list[ItemMatch]:
            """The choice's items that answer (after the LLM's item check, when on)."""
            self.check_items(turns[-1] if turns else "", choice)
            return answering_items(choice, s.match_at, s.max_items)

        matched = matched_in(best)
        held, elsewhere = held_and_elsewhere(choices, drug.drug_id, p_type)
        top_type = max(p_type, key=p_type.get) if p_type else None
        if s.safety_as_one and not matched and (stand_in := safety_stand_in(choices, drug.drug_id, top_type, held)):
            best, choices = stand_in, [stand_in, *(c for c in choices if c is not stand_in)]
            matched, held = matched_in(best), held | {top_type}
        near = best.best.similarity if best.best is not None and not best.best.names_something_else else 0.0
        if not matched and no_entry_relates(p_none, top_type, held, elsewhere, s, near):
            if s.record_class and not others and p_none < s.none_above and top_type is A.DRUG_CLASS \
                    and (facts := class_reply(drug)) is not None:
                # the typer reads a class question (not "no record answers": the pill's looks, an
                # alternative or the price have a class too, and are not answered by it)
                return replace(facts, ranked=choices, p_none=p_none)
            asked = None if p_none >= s.none_above or top_type is None else top_type
            others_hold = {d.display_name: {a.type for a in self.space.entries(d.drug_id)} for d in others}
            text, cited = no_entry_text(name, held, asked, others_hold), []
            if asked is not None and asked not in held:  # still no answer from the database
                text, cited = offered_instead(self, turns, [drug, *others], asked, text)
            return Reply("insufficient_evidence", text, cited, text, ranked=choices, p_none=p_none,
                         reason="no entry relates to the question", condition=condition, terms=terms)
        return answered_reply(turns, drug, best, matched, choices, others, p_type, s,
                              self.space.entries(drug.drug_id), p_none=p_none, condition=condition, terms=terms)
