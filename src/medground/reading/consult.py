"""The consultation reply: which entry of the subject drug answers, and a reply that answers.

Entry choice (no word lists): every entry of the subject drug is a candidate. Its score is
``log P(its type | question)`` from the learned typer (reading/consult_typer.py, trained on
Medication QA's development part) plus a bonus for the best match, in meaning, between what the
patient describes and one item of the entry: list entries are split into items, the patient's
words into short phrases (stop words dropped, other named drugs expanded to their generic name
and class from the database), and both are embedded with the bundled MiniLM. "A dry cough" then
finds lisinopril's adverse-reactions item "Cough" although the typer alone might prefer dosage.
A clinical item is also matched through its MedlinePlus gloss and the plain phrases consumer
pages pair it with (corpus/lay_vocabulary.py: "Angioedema" ↔ "swelling", "Ethanol" ↔ "alcohol"),
which reach "my lips swelled" and "a glass of wine" where MiniLM alone does not.

The reply is deterministic, filled from the matched items: a first sentence that answers in plain
words with its citation, the matched items quoted (not the whole list), and the drug's boxed
warning when it has one (the first sentence's templates: reading/consult_sentences.py). Nothing is
generated, so nothing needs a support check.

It abstains only when no entry can relate: the typer says the question is of a kind no drug
record answers (price, appearance, ingredients) and no item matches what was said, or the drug
has no entry of the type asked and nothing the patient describes matches an item.
The weights are settings, fitted on development sets only (benchmarks/consult_e2e.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from medground.corpus.drug_audit import local_route
from medground.drug_schema import AttributeType, Drug, DrugAttribute
from medground.reading.consult_text import (
    WORD,
    content_phrases,
    questions,
    split_items,
    stop_words,
    with_parts,
)
from medground.reading.class_match import named_class
from medground.reading.consult_sentences import PHRASE, first_sentence, listing
from medground.reading.patient_condition import (
    CONDITION_READS,
    LISTED_ONLY,
    ConditionNamed,
    ConditionReader,
    as_condition_question,
)
from medground.reading.reply import quote_line
from medground.schema import Citation

A = AttributeType
# Entries whose items are conditions and effects, the patient's lay words for which MiniLM misses.
# Not interactions (drug names: matched by name, generic and class, which the check cannot see
# when the other drug was named turns earlier) nor indications (what the patient mentions in
# passing, "for my hair loss", is not what they ask).
CHECKED_TYPES = frozenset({A.ADVERSE_REACTIONS, A.CONTRAINDICATIONS, A.WARNINGS, A.BOXED_WARNING})


class ConsultReplySettings(BaseModel):
    """Defaults fitted on the development sets (benchmarks/consult_e2e.py fit → consult.json e2e_fit)."""

    model_config = ConfigDict(extra="forbid")

    item_weight: float = Field(4.0, ge=0.0, description="weight of the best item match against log P(type)")
    item_floor: float = Field(0.3, ge=0.0, le=1.0, description="item similarity below which it earns nothing")
    match_at: float = Field(0.65, ge=0.0, le=1.0, description="similarity at which an item is what was asked")
    none_above: float = Field(0.4, ge=0.0, le=1.0, description="P(no entry answers) above which to abstain")
    elsewhere_above: float = Field(0.6, ge=0.0, le=1.01,
                                   description="abstain when the top type is one the drug lacks and the types it "
                                               "lacks hold this much probability (1.01: never)")
    max_items: int = Field(3, ge=1)
    earlier_turn_weight: float = Field(0.8, ge=0.0, le=1.0,
                                       description="similarity factor for phrases of earlier patient turns")
    lay_glosses: bool = Field(True, description="match items through their MedlinePlus lay gloss too")
    # A clinical item ("Angioedema") is also matched through the plain phrases consumer-health
    # pages pair it with ("swelling"; corpus/lay_vocabulary.py); 0: off.
    lay_synonyms: int = Field(2, ge=0, le=5, description="mined plain phrases matched per clinical item")
    plain_share: float = Field(0.01, gt=0.0, le=1.0,
                               description="an item is clinical when it holds a word under this share of "
                                           "MedlinePlus summaries use")
    # The LLM as a verifier over the few best entries: "which entry answers?" in one forward pass;
    # its log-probability is added with this weight (0: no LLM call at all).
    verify_weight: float = Field(0.0, ge=0.0)
    verify_candidates: int = Field(4, ge=2)
    verify_chars: int = Field(300, ge=40, description="characters of each entry the verifier reads")
    prose_quote: int = Field(2, ge=1, description="sentences quoted from a prose entry (a label section)")
    max_entry_items: int = Field(60, ge=1, description="items of one entry matched (a label section's first lines)")
    quote_chars: int = Field(320, ge=40, description="a quoted line is cut to its opening sentences within this")
    # A word of the patient's that is rare in the database and stands in an item ("spinach" in
    # "Foods that contain vitamin K (e.g., spinach, kale, broccoli)") matches it at this similarity;
    # rare = in under ``rare_share`` of all entries (so "pain" or "dose" never match this way).
    lexical_match: float = Field(0.9, ge=0.0, le=1.0)
    rare_share: float = Field(0.005, gt=0.0, le=1.0)
    # A rare word the patient says in passing ("tested positive for covid", "to quit smoking")
    # names what the drug is for, not what is asked: indications are matched in meaning only.
    rare_in_indications: bool = Field(False, description="let the rare-word match reach indications items")
    # Where the rare words come from: the whole last turn, or its question sentences only (keeps
    # "… started Latuda for bipolar depression." out, but loses "now my pee is bright orange. Is
    # that from the pills?"; dev: one written reply gained, one lost — docs/benchmarks.md, session 19).
    rare_from: Literal["turn", "question"] = "turn"
    # A yes/no question whose best item is only near what was said (under ``match_at``): from
    # ``hedge_at`` the nearest item is named as a hedge ("ankles puffed up" → "Peripheral edema",
    # 0.52); below it the reply says the entry does not list it in those words and shows the list
    # (coffee → "Irritability", 0.37, named nothing the patient asked). Fitted on the development
    # sets' 18 hedged replies (docs/benchmarks.md, session 19); 1.01: never hedge.
    hedge_at: float = Field(0.45, ge=0.0, le=1.01, description="similarity from which the nearest item is named")
    max_listed: int = Field(12, ge=1, description="items named when a list is shown whole (the rest are counted)")
    short_item: int = Field(80, ge=1, description="a line-per-item entry whose items are all at most this many "
                                                  "characters is a list, however long; else a label section")
    # What the typer reads: the whole last turn, its question sentences only (the typer learned
    # from one-sentence questions; context around the question — "Yes, 10 mg a day." — pulls it
    # towards dosage), or the mean of both distributions.
    typer_reads: Literal["turn", "question", "both"] = "turn"
    # The LLM as a judge of meaning for the closest items: "does the patient describe <item>?"
    # (one token, yes/no log-probabilities). MiniLM puts "loose stools" at 0.35 from "diarrhea";
    # the LLM knows they are one thing. An item it affirms (P(yes) > P(no)) counts as matched at
    # P(yes); one it denies earns nothing. 0: no LLM call.
    item_check: int = Field(0, ge=0, description="closest list items the LLM checks against the patient's words")
    item_check_floor: float = Field(0.3, ge=0.0, le=1.0,
                                    description="items less similar than this are never checked")
    item_check_chars: int = Field(400, ge=40, description="characters of the patient's last turn the check reads")
    # "Can I take lisinopril while pregnant?" reads as an interactions question to the typer; when
    # no second substance is named and a phrase of the patient's is nearest a condition item of
    # the database (reading/patient_condition.py) the question is about
    # the entries that say when the medicine must not be used or needs care. >1: never.
    condition_similarity: float = Field(0.6, ge=0.0, le=1.01,
                                        description="similarity to the nearest condition item at which a "
                                                    "phrase names a condition")
    # Which typed questions the reading acts on: "interactions" (the typer's reading of "can I take
    # it while pregnant?"), "safety" — interactions, indications, contraindications, warnings
    # ("I have epilepsy … is Zyban something I'm allowed to take?" reads as indications), where
    # every entry's items are then matched against the condition alone — or "listed": as safety,
    # but beyond the interactions reading only a condition the drug's own contraindications or
    # warnings list at ``match_at`` ("Is Haldol okay for someone with Parkinson's?"). Dev, session
    # 22: listed 3 replies gained, 0 lost of 506; safety 5 lost on the old sets (docs/benchmarks.md).
    # "any_listed": the record test whatever the typer's reading (a variant: 1 of 506 changed).
    condition_reads: Literal["interactions", "safety", "listed", "any_listed"] = "listed"
    # "safety": the LLM confirms a condition read from a question the typer did not read as an
    # interactions one ("is the patient asking whether X is safe for them because of <condition>?")
    condition_check: bool = False
    # A patient's misspelt word is also matched as the database's word ("pregnent" → pregnant,
    # "glacoma" → glaucoma; reading/spelling.py). Dev, session 22: 1 gained, 0 lost of 506.
    spelling: bool = True


@dataclass(slots=True)
class ItemMatch:
    text: str
    similarity: float
    phrase: str  # the patient's words it matched
    class_of: str = ""  # the named drug whose class (``phrase``) the item names, if that matched it


@dataclass(slots=True)
class EntryChoice:
    drug: Drug
    attribute: DrugAttribute
    p_type: float
    items: list[ItemMatch]  # best first
    score: float
    p_verify: float | None = None  # the LLM verifier's P(this entry answers), when it was asked
    checked: dict[str, float] = field(default_factory=dict)  # item -> the LLM's P(yes), items it checked

    @property
    def best(self) -> ItemMatch | None:
        return self.items[0] if self.items else None


@dataclass(slots=True)
class Reply:
    outcome: str  # "answered" | "insufficient_evidence" | "needs_clarification"
    text: str
    citations: list[Citation]
    first_sentence: str
    matched: list[str] = field(default_factory=list)
    quotes: list[str] = field(default_factory=list)
    chosen: EntryChoice | None = None
    ranked: list[EntryChoice] = field(default_factory=list)
    p_none: float = 0.0
    reason: str = ""
    condition: str | None = None  # the patient's words read as a condition they have (patient_condition.py)


class Choice(NamedTuple):
    choices: list[EntryChoice]  # best first
    p_none: float
    p_type: dict[AttributeType, float]
    condition: str | None  # the patient's phrase read as a condition they have


def held_and_elsewhere(choices: Sequence[EntryChoice], subject_id: str, p_type: dict[AttributeType, float]
                       ) -> tuple[set[AttributeType], float]:
    """The kinds of entry that can answer — the subject drug's, and the interactions of a second
    drug named with it (a statin with no interactions entry, asked about with fluconazole, whose
    entry lists CYP3A4 substrates) — and P(the question asks for a kind none has)."""
    held = {c.attribute.type for c in choices
            if c.drug.drug_id == subject_id or c.attribute.type is A.INTERACTIONS}
    return held, sum(p for t, p in p_type.items() if t not in held)


def no_entry_relates(p_none: float, top_type: AttributeType | None, held: set[AttributeType], elsewhere: float,
                     s: ConsultReplySettings) -> bool:
    """The abstention rule (when no item matched), shared by the reader and its fit: a question of
    a kind no record answers, or one that more likely asks for a kind of entry this drug does not
    have (statin aches, and the only entry is the dose) — say so, do not quote the dose."""
    return p_none >= s.none_above or (top_type is not None and top_type not in held
                                      and elsewhere >= s.elsewhere_above)


def word_set(text: str) -> set[str]:
    """Lower-cased words and the parts of hyphenated ones: "Reddish-orange … urine" holds "orange"."""
    out: set[str] = set()
    for w in WORD.findall(text):
        w = w.lower()
        out.add(w)
        if "-" in w:
            out.update(p for p in w.split("-") if len(p) > 1)
    return out


def part_of(a: Drug, b: Drug) -> bool:
    """One drug is a component of the other (amoxicillin of amoxicillin/clavulanate): not two
    medicines taken together."""
    return a.generic_name in b.components or b.generic_name in a.components


def distinct(matches: Sequence[ItemMatch], items: Sequence[str] = ()) -> list[ItemMatch]:
    """Matched items without an item whose matched part is also there: "diarrhea" says it,
    "Nausea/vomiting/diarrhea/flatulence" beside it only repeats it. A matched head ("Pregnancy")
    is named as the item it heads ("Pregnancy (fetal toxicity)"), one of ``items``: the
    qualifier is the why."""
    texts = {m.text for m in matches}
    out = [m for m in matches if not ("/" in m.text and any(p.strip() in texts for p in m.text.split("/")))]
    heads = {i.split(" (", 1)[0].strip(): i for i in items if " (" in i}
    named = [replace(m, text=heads[m.text]) if m.text in heads else m for m in out]
    return list({m.text: m for m in reversed(named)}.values())[::-1]  # one item named once, at its best


_ROUTE_WORDS = {"ophthalmic": "an eye (ophthalmic)", "otic": "an ear (otic)", "topical": "a skin (topical)",
                "vaginal": "a vaginal", "nasal": "a nasal"}


def record_citation(drug: Drug, attribute: DrugAttribute, number: int = 1) -> Citation:
    """A record as the reader sees it: the medicine database's citation for it."""
    return Citation(number=number, chunk_id=f"{attribute.drug_id}:{attribute.type.value}", book="Medicine database",
                    chapter=drug.display_name, section=attribute.type.value, title=drug.display_name,
                    text=attribute.text, score=1.0, char_end=len(attribute.text))


class ConsultReader:
    """Chooses the entry and writes the reply for one consultation."""

    def __init__(self, drugs, typer, embedder, settings: ConsultReplySettings | None = None,
                 verifier: Callable[[str, list[Citation]], dict[int, float]] | None = None,
                 item_checker: Callable[[str, list[str]], list[float]] | None = None, lay_vocabulary=None,
                 conditions: ConditionReader | None = None,
                 condition_checker: Callable[[str, str, str], float] | None = None):
        self.drugs = drugs  # retrieve.drugs.DrugRetriever
        self.typer = typer  # reading.consult_typer.ConsultTyper
        self.embedder = embedder
        self.settings = settings or ConsultReplySettings()
        # (dialogue, numbered entries) -> {number: P(that entry answers)}; the pipeline's LLM pass
        self.verifier = verifier
        # (the patient's words, items) -> P(the patient describes each item); the pipeline's LLM
        self.item_checker = item_checker
        self._item_vectors: dict[str, tuple[list[list[str]], list[np.ndarray]]] = {}
        self._entry_df: dict[str, int] | None = None  # word -> entries holding it
        self._lay = lay_vocabulary  # corpus.lay_vocabulary.LayVocabulary; the data's, loaded on first use
        self._speller = None  # reading.spelling.Speller over the database's words, built on first use
        self.conditions = conditions  # a condition or a substance named (reading/patient_condition.py)
        # (the patient's last turn, drug name, condition) -> P(they ask whether it is safe given it); the pipeline's LLM
        self.condition_checker = condition_checker

    # ----------------------------------------------------------------- choice
    def entries(self, drug_id: str) -> list[DrugAttribute]:
        return [self.drugs.attributes[i] for i in self.drugs.by_drug.get(drug_id, [])]

    def _items(self, drug_id: str) -> tuple[list[list[str]], list[np.ndarray]]:
        """Each entry's items and their vectors, rows × items × dim: the item, (item: its lay
        gloss), then ``lay_synonyms`` mined plain phrases (a row repeats the item where it has none)."""
        if drug_id not in self._item_vectors:
            from medground.reading.lay_terms import gloss, load_glossary

            s = self.settings
            glossary = load_glossary() if s.lay_glosses else {}
            vocabulary = self._vocabulary()
            # A label section can list hundreds of lines; its first ones carry its gist.
            items = [with_parts(list(dict.fromkeys(split_items(a.text)))[: s.max_entry_items])
                     for a in self.entries(drug_id)]
            flat = [i for its in items for i in its]
            extra: list[tuple[int, int, str]] = []  # (row, item, text)
            for j, item in enumerate(flat):
                if g := gloss(item, glossary):
                    extra.append((1, j, f"{item}: {g}"))
                if vocabulary is not None and len(item) <= 60 and vocabulary.is_clinical(item, s.plain_share):
                    extra += [(2 + r, j, t) for r, t in
                              enumerate(vocabulary.synonyms(item, s.lay_synonyms))]
            vecs = (self.embedder.encode_passages(flat + [t for _, _, t in extra]) if flat
                    else np.zeros((0, 1), dtype=np.float32))
            rows = np.repeat(vecs[None, : len(flat)], 2 + s.lay_synonyms, axis=0)
            for k, (r, j, _) in enumerate(extra):
                rows[r, j] = vecs[len(flat) + k]
            out, k = [], 0
            for its in items:
                out.append(rows[:, k:k + len(its)] if its else np.zeros((2 + s.lay_synonyms, 0, 1), dtype=np.float32))
                k += len(its)
            self._item_vectors[drug_id] = (items, out)
        return self._item_vectors[drug_id]

    def _vocabulary(self):
        if not self.settings.lay_synonyms:
            return None
        if self._lay is None:
            from medground.corpus.lay_vocabulary import load_vocabulary

            self._lay = load_vocabulary()
        return self._lay

    def rare_words(self, text: str, exclude: Sequence[str]) -> set[str]:
        """Content words of ``text`` held by under ``rare_share`` of the database's entries."""
        if self._entry_df is None:
            df: dict[str, int] = {}
            for a in self.drugs.attributes:
                for w in word_set(a.text):
                    df[w] = df.get(w, 0) + 1
            self._entry_df = df
        limit = self.settings.rare_share * max(1, len(self.drugs.attributes))
        drop = {w.lower() for name in exclude for w in WORD.findall(name)}
        stop = stop_words()
        return {w for w in word_set(text)
                if len(w) > 3 and w not in drop and w not in stop and 0 < self._entry_df.get(w, 0) < limit}

    @staticmethod
    def drug_names(subject: Drug, others: Sequence[Drug]) -> list[str]:
        """Words that say which drug, not what is asked: every name of the named drugs, and the subject's class."""
        return [subject.drug_class,
                *(n for d in (subject, *others) for n in (d.generic_name, *d.brand_names, *d.synonyms))]

    def phrases(self, turns: Sequence[str], names: Sequence[str], others: Sequence[Drug]) -> list[tuple[str, float]]:
        """(phrase, weight): the last turn's content phrases at 1.0, earlier turns' lower; another
        drug named in the last turn adds its generic name and class (what an entry would list)."""
        s = self.settings
        out = [(p, 1.0) for p in content_phrases(turns[-1], names)] if turns else []
        for d in others:
            out += [(d.generic_name, 1.0)] + ([(d.drug_class, 1.0)] if d.drug_class else [])
        for t in turns[:-1]:
            out += [(p, s.earlier_turn_weight) for p in content_phrases(t, names)]
        speller = self._spelling()
        if speller is not None:
            out += [(fixed, w) for p, w in out if (fixed := speller.corrected(p)) is not None]
        seen: dict[str, float] = {}
        for p, w in out:
            seen[p] = max(w, seen.get(p, 0.0))
        return list(seen.items())

    def _spelling(self):
        if not self.settings.spelling:
            return None
        if self._speller is None:
            from medground.reading.spelling import Speller, embedder_vocabulary

            known = embedder_vocabulary(self.embedder)
            if known is None:  # no word list to tell a misspelling from a word the database lacks
                return None
            self._speller = Speller([a.text for a in self.drugs.attributes], known)
        return self._speller

    def choose(self, turns: Sequence[str], subject_id: str, other_ids: Sequence[str] = (),
               context_ids: Sequence[str] = ()) -> Choice:
        """Entries of the subject drug (and the interactions of other named drugs), best first;
        P(no entry answers); P(type); the condition the patient named, if read as one.
        ``context_ids``: drugs of earlier turns, taken as the other drugs when none is named in
        the last turn and it most likely asks about an interaction."""
        s = self.settings
        subject = self.drugs.drugs[subject_id]
        question = turns[-1] if turns else ""
        named_now = self.partners(subject_id, other_ids)
        p_type, p_none = self.type_probabilities(question, self.drug_names(subject, named_now)[1:])
        others = self.partners(subject_id, other_ids, context_ids, p_type)
        names = self.drug_names(subject, others)
        if others and p_type:  # two drugs named: a question about taking them together
            p_type = {t: p for t, p in p_type.items()}
            p_type[A.INTERACTIONS] = max(p_type.get(A.INTERACTIONS, 0.0), max(p_type.values()))
        rare = self.rare_words(question if s.rare_from == "turn" else " ".join(questions(question)), names)
        named = [subject, *others]
        # An entry is matched against the *other* named drugs (what an interactions entry would
        # list), never against its own drug's name and class; every phrase is embedded once.
        per_drug = {d.drug_id: self.phrases(turns, names, [o for o in named if o is not d]) for d in named}
        texts = list(dict.fromkeys(p for ps in per_drug.values() for p, _ in ps))
        row = {t: i for i, t in enumerate(texts)}
        all_vecs = self.embedder.encode_queries(texts) if texts else None
        condition = None
        if not others and p_type and per_drug[subject.drug_id]:
            own = per_drug[subject.drug_id]
            condition = self.condition_named(question, subject, p_type, own, all_vecs[[row[p] for p, _ in own]])
            if condition is not None:
                p_type = as_condition_question(p_type)
        choices: list[EntryChoice] = []
        for drug in named:
            phrases = per_drug[drug.drug_id]
            pvecs = all_vecs[[row[p] for p, _ in phrases]] if phrases else None
            weights = np.array([w for _, w in phrases], dtype=np.float32)
            items, vecs = self._items(drug.drug_id)
            for attr, its, iv in zip(self.entries(drug.drug_id), items, vecs):
                if drug is not subject and attr.type is not A.INTERACTIONS:
                    continue
                matches: list[ItemMatch] = []
                if pvecs is not None and iv.shape[1]:
                    rows = iv @ pvecs.T  # rows × items × phrases
                    if rows.shape[0] > 2:  # mined phrases answer what is asked now, not earlier context
                        rows[2:] *= (weights >= 1.0)  # ("blood pressure pills" two turns back ≠ hypotension)
                    sims = rows.max(axis=0) * weights  # items × phrases, best row
                    if condition is not None and (attr.type is A.WARNINGS or s.condition_reads != "interactions"):
                        # asked whether it is safe *with the condition*: the items are matched
                        # against that, not the rest ("on Zestril for my blood pressure" ≠
                        # "Orthostatic hypotension" when the patient is pregnant; "to quit
                        # smoking" ≠ the question when the patient has epilepsy)
                        sims = sims * np.array([p == condition.phrase for p, _ in phrases], dtype=np.float32)
                    best_phrase = sims.argmax(axis=1)
                    for k, item in enumerate(its):
                        j = int(best_phrase[k])
                        matches.append(ItemMatch(item, float(sims[k, j]), phrases[j][0]))
                    if rare and (s.rare_in_indications or attr.type is not A.INDICATIONS):
                        for m in matches:
                            hit = rare & word_set(m.text)
                            if hit and m.similarity < s.lexical_match:
                                m.similarity, m.phrase = s.lexical_match, sorted(hit)[0]
                    if attr.type is A.INTERACTIONS:
                        self._match_classes(matches, [o for o in named if o is not drug])
                    matches.sort(key=lambda m: -m.similarity)
                top = matches[0].similarity if matches else 0.0
                score = float(np.log(p_type.get(attr.type, 0.0) + 1e-3)) + s.item_weight * max(0.0, top - s.item_floor)
                choices.append(EntryChoice(drug, attr, p_type.get(attr.type, 0.0), matches, score))
        # ties (no item above the floor) go to the entry whose best item is closest all the same
        choices.sort(key=lambda c: (-c.score, -(c.best.similarity if c.best else 0.0)))
        return Choice(choices, p_none, p_type, condition.phrase if condition else None)

    def _match_classes(self, matches: list[ItemMatch], others: Sequence[Drug]) -> None:
        """An interactions item that names another named drug's class ("statin drugs" for
        simvastatin, :mod:`medground.reading.class_match`) is what was asked, whatever the
        embedding says."""
        for m in matches:
            for other in others:
                label = named_class(other.drug_class, m.text) if other.drug_class else None
                if label is not None and m.similarity < self.settings.lexical_match:
                    m.similarity, m.phrase, m.class_of = self.settings.lexical_match, label, other.display_name
                    break

    def condition_named(self, question: str, subject: Drug, p_type: dict[AttributeType, float],
                        phrases: list[tuple[str, float]], vectors: np.ndarray) -> ConditionNamed | None:
        """The condition the patient names when asking whether the subject drug is safe for them
        ("Can I take it while pregnant?"; no second substance named), or None. Only a question the
        typer reads as one of ``condition_reads`` is read so; a condition the drug is for is never
        it (on Glucophage "for my diabetes", diabetes is why they take it)."""
        s = self.settings
        top = max(p_type, key=p_type.get)
        if s.condition_similarity > 1.0 or self.conditions is None or top not in CONDITION_READS[s.condition_reads]:
            return None
        treated = self.listed_similarity(subject.drug_id, vectors, (A.INDICATIONS,)) >= s.hedge_at
        condition = self.conditions.named(phrases, s.condition_similarity, vectors, exclude=treated)
        if condition is not None and s.condition_reads in LISTED_ONLY and top is not A.INTERACTIONS:
            # read past the typer only where the drug's own record names the condition as a
            # reason for care: "Is Haldol okay for someone with Parkinson's?" (typed: what is it
            # for) against haloperidol's contraindications "Parkinson's disease"
            k = [p for p, _ in phrases].index(condition.phrase)
            listed = self.listed_similarity(subject.drug_id, vectors[k:k + 1], (A.CONTRAINDICATIONS, A.WARNINGS))
            if listed[0] < s.match_at:
                return None
        if condition is not None and s.condition_check and self.condition_checker is not None \
                and top is not A.INTERACTIONS:
            # beyond the typer's interactions reading a named condition is as often what the
            # medicine is asked to treat or a side effect: the LLM says which
            if self.condition_checker(question[: s.item_check_chars], subject.display_name, condition.phrase) < 0.5:
                return None
        return condition

    def listed_similarity(self, drug_id: str, vectors: np.ndarray, types: tuple[AttributeType, ...]) -> np.ndarray:
        """Per phrase vector: its best similarity to an item of the drug's entries of ``types`` (0: none)."""
        best = np.zeros(len(vectors), dtype=np.float32)
        items, vecs = self._items(drug_id)
        for attr, iv in zip(self.entries(drug_id), vecs):
            if attr.type in types and iv.shape[1]:
                best = np.maximum(best, (iv @ vectors.T).max(axis=(0, 1)))
        return best

    def partners(self, subject_id: str, other_ids: Sequence[str], context_ids: Sequence[str] = (),
                 p_type: dict[AttributeType, float] | None = None) -> list[Drug]:
        """The drugs asked about with the subject: those named in the last turn, else (when the
        last turn most likely asks about an interaction) those of earlier turns; never the subject
        or a part of it."""
        subject = self.drugs.drugs[subject_id]

        def known(ids: Sequence[str]) -> list[Drug]:
            return [d for d in (self.drugs.drugs[i] for i in ids if i in self.drugs.drugs and i != subject_id)
                    if not part_of(subject, d)]

        now = known(other_ids)
        if now or not p_type or max(p_type, key=p_type.get) is not A.INTERACTIONS:
            return now
        return known(context_ids)

    def type_probabilities(self, turn: str, names: Sequence[str] = ()) -> tuple[dict[AttributeType, float], float]:
        """P(type) and P(none) of the last turn, read as ``typer_reads`` says; ``names``: the
        named drugs' names (the typer reads them as "this medicine" when it learned so)."""
        mode = self.settings.typer_reads
        asked = " ".join(questions(turn))
        if mode == "turn" or not asked or asked == turn.strip():
            return self.typer.attribute_probabilities(turn, names)
        if mode == "question":
            return self.typer.attribute_probabilities(asked, names)
        (pt_turn, pn_turn), (pt_q, pn_q) = (self.typer.attribute_probabilities(t, names) for t in (turn, asked))
        return {t: (pt_turn.get(t, 0.0) + pt_q.get(t, 0.0)) / 2 for t in {*pt_turn, *pt_q}}, (pn_turn + pn_q) / 2

    def check_items(self, question: str, choice: EntryChoice) -> None:
        """The LLM checks the chosen list entry's ``item_check`` closest short items against the
        patient's last turn: an affirmed item's similarity becomes its P(yes), a denied one's 0.
        It decides which items the reply names, never which entry: asked across entries it
        affirms what the patient mentions in passing ("for my hair loss" → the indication), not
        what they ask about."""
        s = self.settings
        if (not s.item_check or self.item_checker is None or not question.strip()
                or choice.attribute.type not in CHECKED_TYPES):
            return
        # a label section's long lines are quoted by closeness, not matched as one thing
        short = [m for m in choice.items if m.similarity >= s.item_check_floor and len(m.text) <= 80]
        ask = short[: s.item_check]
        if not ask:
            return
        for m, p in zip(ask, self.item_checker(question[: s.item_check_chars], [m.text for m in ask])):
            choice.checked[m.text] = p
            m.similarity = p if p > 0.5 else 0.0
        choice.items.sort(key=lambda m: -m.similarity)

    def verify(self, turns: Sequence[str], choices: list[EntryChoice]) -> None:
        """Ask the verifier about the best ``verify_candidates`` entries; set their ``p_verify``."""
        if self.verifier is None or not choices:
            return
        top = choices[: self.settings.verify_candidates]
        cits = [record_citation(c.drug, c.attribute, k + 1) for k, c in enumerate(top)]
        for c in cits:  # a label section can run to pages: its opening says what kind of entry it is
            if len(c.text) > self.settings.verify_chars:
                c.text = c.text[: self.settings.verify_chars].rsplit(" ", 1)[0] + " …"
        probs = self.verifier("\n".join(f"Patient: {t}" for t in turns), cits)
        for k, c in enumerate(top):
            c.p_verify = probs.get(k + 1, 0.0)
        for c in choices[len(top):]:
            c.p_verify = 0.0

    @staticmethod
    def combined(c: EntryChoice, weight: float) -> float:
        return c.score + (weight * float(np.log(c.p_verify + 1e-3)) if weight and c.p_verify is not None else 0.0)

    # ------------------------------------------------------------------ reply
    def reply(self, turns: Sequence[str], subject_id: str | None, other_ids: Sequence[str] = (),
              context_ids: Sequence[str] = ()) -> Reply:
        s = self.settings
        if subject_id is None or subject_id not in self.drugs.drugs:
            text = ("Which medicine do you mean? Please give its name as on the box or the label "
                    "(brand or generic), and I will look it up.")
            return Reply("needs_clarification", text, [], text, reason="no medicine named")
        choices, p_none, p_type, condition = self.choose(turns, subject_id, other_ids, context_ids)
        others = self.partners(subject_id, other_ids, context_ids, p_type)  # as choose decided them
        if s.verify_weight > 0 and self.verifier is not None and len(choices) > 1:
            self.verify(turns, choices)
            choices.sort(key=lambda c: -self.combined(c, s.verify_weight))
        drug = self.drugs.drugs[subject_id]
        name = drug.display_name
        if not choices:
            text = f"The medicine database has no entries for {name}."
            return Reply("insufficient_evidence", text, [], text, p_none=p_none, reason="no entries")
        best = choices[0]
        self.check_items(turns[-1] if turns else "", best)
        matched = distinct([m for m in best.items if m.similarity >= s.match_at], [m.text for m in best.items])[: s.max_items]
        held, elsewhere = held_and_elsewhere(choices, drug.drug_id, p_type)
        top_type = max(p_type, key=p_type.get) if p_type else None
        if not matched and no_entry_relates(p_none, top_type, held, elsewhere, s):
            covers = ", ".join(sorted(PHRASE.get(t, t.value) for t in held))
            asked = None if p_none >= s.none_above or top_type is None else PHRASE.get(top_type, top_type.value)
            if asked is None:
                text = f"The medicine database has no entry on that for {name}; its entries cover "
            elif others:  # the other drug asked about was looked up too: say so
                whose = " or ".join([name, *(d.display_name for d in others)])
                text = f"The medicine database has no entry on the {asked} of {whose}; their entries cover "
            else:
                text = f"The medicine database has no entry on its {asked} for {name}; its entries cover "
            text += f"{covers}. A pharmacist or the package leaflet can answer this."
            return Reply("insufficient_evidence", text, [], text, ranked=choices, p_none=p_none,
                         reason="no entry relates to the question", condition=condition)
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
                parts.append(f"{other.drug.display_name}'s interactions list: "
                             f"{listing(other.attribute.text, s.max_listed)} [{citations[-1].number}].")
        # The other named drug's own interactions entry, when it lists the subject (or its class).
        second = next((c for c in choices[1:] if c.drug is not drug and c.attribute.type is A.INTERACTIONS
                       and c.best is not None and c.best.similarity >= s.match_at), None)
        if best.drug is drug and second is not None:
            citations.append(record_citation(second.drug, second.attribute, len(citations) + 1))
            parts.append(f"{second.drug.display_name}'s interactions also list \u201c{second.best.text}\u201d "
                         f"[{citations[-1].number}].")
        route = local_route(drug)
        if route:  # the only product described is, say, an eye ointment: a patient on tablets must know
            parts.append(f"Note: the database's entries for {name} describe {_ROUTE_WORDS.get(route, route)} "
                         f"product ({drug.drug_class}); they may not apply to another form of it.")
        boxed = next((a for a in self.entries(drug.drug_id) if a.type is A.BOXED_WARNING), None)
        if boxed is not None and best.attribute is not boxed:
            citations.append(record_citation(drug, boxed, len(citations) + 1))
            warn = split_items(boxed.text)[0]
            parts.append(f"{name} carries a boxed warning: \u201c{warn}\u201d [{citations[-1].number}].")
        return Reply("answered", " ".join(parts), citations, first, matched=[m.text for m in matched],
                     quotes=quotes, chosen=best, ranked=choices, p_none=p_none, condition=condition)
