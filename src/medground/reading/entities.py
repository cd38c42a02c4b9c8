"""Entity consistency for free-text replies: a reply must be about what was asked.

Asked "At what age should one receive the shingles vaccine?", a reader given a passage on the
varicella vaccine answers "12 months" with confidence: a near-miss entity answered as if it were
the one asked. The check: every *specific* named entity of the question must be named, by one of
its names, in the passages the reply rests on; otherwise the reply says what the passages cover
instead of answering.

Names and their synonyms come from data, not a hand list: MedlinePlus health topics (a title
and the names it is "also called": Shingles = Herpes zoster), MedQuAD's document focus names
(5,000 diseases, syndromes and tests) and, when a medicine database is
built, each drug's generic and brand names plus its class (a question naming midazolam is
answered by a passage on benzodiazepines) and, as a setting, each class (named in a passage by
a member drug too: reading/entities.class_groups). Names are compared as tokenizer terms (lower case,
stop words dropped, stemmed), so "vaccines" matches "vaccine". An entity is *specific* when its
rarest term occurs in at most ``max_df`` of the corpus's chunks: "shingles" and "azathioprine"
are, "pain", "blood" and "vaccine" are not, and a generic word never blocks an answer.
"""

from __future__ import annotations

import csv
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from medground.index.text import text_tokenizer
from medground.reading.class_match import part_names
from medground.reading.consult_text import questions

log = logging.getLogger(__name__)

Terms = tuple[str, ...]
WORD_RE = re.compile(r"[\w][\w'\-]*")
_MEDLINEPLUS = Path("corpora") / "medlineplus-topics" / "medline_cleaned.csv"
MAX_NAME_TERMS = 5


def _plain(text: str) -> str:
    """Typographic apostrophes and hyphens as their ASCII forms: a book writes "Crohn’s disease",
    a patient types "Crohn's disease"."""
    return text.translate(_PLAIN)


_PLAIN = str.maketrans({"\u2019": "'", "\u2018": "'", "\u2010": "-", "\u2011": "-", "\u2013": "-"})


def _words(text: str) -> list[tuple[str, str]]:
    """(word as written, its term) for every word with one: a word's first term, its whole form
    ("first-line", "crohn" of "Crohn's"), so names, questions and passages are cut alike."""
    tok = text_tokenizer()
    return [(raw, got[0][0]) for raw in WORD_RE.findall(_plain(text)) if (got := tok.tokenize_words(raw))]


def terms(text: str) -> Terms:
    return tuple(term for _, term in _words(text))


@dataclass(frozen=True, slots=True)
class Entity:
    name: str  # as written in the text it was found in
    names: frozenset[Terms]  # every name of its synonym group, as terms
    written: tuple[str, ...] = ()  # the names its groups offer (NameGroup.offered), as written


@dataclass(frozen=True, slots=True)
class NameGroup:
    """One entity's names: ``entry`` names are looked for in questions, ``also`` names only count
    as the entity when a passage uses them."""

    entry: tuple[str, ...]
    also: tuple[str, ...] = ()
    # the canonical names a question that says it another way is widened with (an extra query):
    # a topic's title, a drug's generic name — a book says "acetaminophen", seldom a brand, never
    # the chemical synonyms a label lists ("4'-hydroxyacetanilide"). None: the entry names.
    offered: tuple[str, ...] | None = None


class EntityDictionary:
    """Names → synonym groups. A name in several groups (a brand shared by two products) belongs
    to all of them: any of its groups' names in the passages will do."""

    def __init__(self, groups: Iterable[NameGroup]):
        def as_terms(names: Iterable[str]) -> frozenset[Terms]:
            return frozenset(t for t in (terms(n) for n in names if n and n.strip()) if 0 < len(t) <= MAX_NAME_TERMS)

        self._groups: list[frozenset[Terms]] = []
        self._written: list[tuple[str, ...]] = []
        self._by_name: dict[Terms, list[int]] = {}
        for group in groups:
            entry = as_terms(group.entry)
            if not entry:
                continue
            self._groups.append(entry | as_terms(group.also))
            offered = group.entry if group.offered is None else group.offered
            self._written.append(tuple(dict.fromkeys(n.strip() for n in offered if n and n.strip())))
            for name in entry:
                self._by_name.setdefault(name, []).append(len(self._groups) - 1)

    def __len__(self) -> int:
        return len(self._by_name)

    def find(self, text: str) -> list[Entity]:
        """Named entities in ``text``, longest name first at each position, not overlapping."""
        words = _words(text)
        seq = [term for _, term in words]
        out, i = [], 0
        while i < len(seq):
            for n in range(min(MAX_NAME_TERMS, len(seq) - i), 0, -1):
                groups = self._by_name.get(tuple(seq[i:i + n]))
                if groups:
                    names = frozenset().union(*(self._groups[g] for g in groups))
                    written = tuple(dict.fromkeys(w for g in groups for w in self._written[g]))
                    out.append(Entity(" ".join(raw for raw, _ in words[i:i + n]), names, written))
                    i += n
                    break
            else:
                i += 1
        return out


def names_in(entity: Entity, text_terms: Sequence[str]) -> bool:
    """Some name of the entity occurs in the text as consecutive terms."""
    seq = list(text_terms)
    for name in entity.names:
        n = len(name)
        if any(tuple(seq[i:i + n]) == name for i in range(len(seq) - n + 1)):
            return True
    return False


def specific(entities: Iterable[Entity], doc_freq: Callable[[str], int | None], n_docs: int,
             max_df: float) -> list[Entity]:
    """The entities whose rarest word (of the name as written) is in at most ``max_df`` of the
    chunks. ``doc_freq(word)`` is the index's own count (its tokenizer stems differently)."""
    out = []
    for e in entities:
        counts = [d for w in e.name.split() if (d := doc_freq(w)) is not None]
        if counts and n_docs and min(counts) / n_docs <= max_df:
            out.append(e)
    return out


def missing(question_entities: Sequence[Entity], passages: Sequence[str]) -> list[Entity]:
    """The question's entities that no passage names (by any of their names)."""
    seen = [list(terms(p)) for p in passages]
    return [e for e in question_entities if not any(names_in(e, s) for s in seen)]


@lru_cache(maxsize=2)
def medlineplus_groups(data: str | None = None) -> tuple[NameGroup, ...]:
    """Each MedlinePlus topic: its title and its several-word "also called" names are entry
    names; its one-word "also called" names only count in passages, because that is where
    street and lay senses live ("Cocaine", also called "Blow", "Coke"; "Chickenpox", also called
    "Varicella" is still recognized in a passage). () without the data."""
    from medground.paths import DataNotFoundError, data_root

    try:
        path = data_root(data) / _MEDLINEPLUS
    except DataNotFoundError:
        return ()
    if not path.is_file():
        log.info("no MedlinePlus topics at %s: entity names come from the medicine database only", path)
        return ()
    out = []
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            also = [a.strip() for a in row.get("also_called", "").split(",") if a.strip()]
            out.append(NameGroup(entry=(row.get("title", ""), *(a for a in also if len(a.split()) > 1)),
                                 offered=(row.get("title", ""),),
                                 also=tuple(a for a in also if len(a.split()) == 1)))
    return tuple(out)


_FOCUS = re.compile(r"<Focus>(.*?)</Focus>|<doctitle-focus>(.*?)</doctitle-focus>", re.S)
_PAREN = re.compile(r"\s*\(([^()]*)\)\s*")


@lru_cache(maxsize=2)
def medquad_groups(data: str | None = None) -> tuple[NameGroup, ...]:
    """Each MedQuAD document's focus (a disease, syndrome, test: 5,000 names), a parenthesised
    part as a second name ("Marburg hemorrhagic fever (Marburg HF)"). () without the data."""
    from medground.paths import DataNotFoundError, data_root

    try:
        root = data_root(data) / "corpora" / "medquad"
    except DataNotFoundError:
        return ()
    seen: set[str] = set()
    out = []
    for path in sorted(root.glob("*/*.xml")):
        with path.open(encoding="utf-8", errors="ignore") as f:
            m = _FOCUS.search(f.read(4000))  # the focus opens the document
        focus = " ".join((m.group(1) or m.group(2) or "").split()) if m else ""
        if focus and focus.lower() not in seen:
            seen.add(focus.lower())
            inner = _PAREN.findall(focus)
            out.append(NameGroup(entry=(_PAREN.sub(" ", focus).strip(), *inner),
                                 offered=(_PAREN.sub(" ", focus).strip(),)))
    return tuple(out)


def drug_groups(drugs: Iterable[object]) -> list[NameGroup]:
    """Each drug (``corpus.drugs.Drug``): its generic and brand names are entry names; its class
    also counts in a passage (a passage on benzodiazepines speaks of midazolam)."""
    return [NameGroup(entry=(d.generic_name, *d.generic_name.split("/"), *d.brand_names, *d.synonyms),
                      also=(d.drug_class,) if d.drug_class else (), offered=(d.generic_name,)) for d in drugs]


def class_names(label: str) -> list[str]:
    """The names a drug-class label of the medicine database gives its class: each of its
    ";"-separated parts, and a part's abbreviation in the words it abbreviates' place
    ("Angiotensin-converting enzyme (ACE) inhibitor" → that without "(ACE)", "ACE inhibitor";
    "Proton-pump inhibitors (PPIs)" → "Proton-pump inhibitors", "PPIs"); a parenthesis that is no
    abbreviation is a qualifier, left out (reading/class_match.part_names)."""
    out = [n for part in label.split(";") if part.strip() for n in part_names(part, abbreviations_only=True)]
    return list(dict.fromkeys(out))


def class_groups(drugs: Iterable[object]) -> list[NameGroup]:
    """Each drug class of the medicine database as an entity: its names are looked for in
    questions, and a passage names it by any of them or by a member drug's name (asked why a
    new ACE-inhibitor user must stand up slowly, a passage on a bladder drug's dizziness does
    not speak of the class; one on lisinopril does). A class spelt out and abbreviated in one
    label part is one class ("ACE inhibitor" = "angiotensin-converting enzyme inhibitor")."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    names: dict[str, list[str]] = {}
    members: dict[str, set[str]] = {}
    for d in drugs:
        label = getattr(d, "drug_class", "") or ""
        for part in (p for p in label.split(";") if p.strip()):
            keyed = [(" ".join(terms(n)), n) for n in class_names(part)]
            keyed = [(k, n) for k, n in keyed if k]
            for k, n in keyed:
                names.setdefault(k, []).append(n)
                members.setdefault(k, set()).update([d.generic_name, *d.brand_names])
                parent[root(k)] = root(keyed[0][0])
    merged: dict[str, tuple[list[str], set[str]]] = {}
    for k in names:
        entry, also = merged.setdefault(root(k), ([], set()))
        entry += names[k]
        also |= members[k]
    return [NameGroup(entry=tuple(dict.fromkeys(e)), also=tuple(sorted(a))) for e, a in merged.values()]


class EntityGate:
    """The check a free-text reader runs: which of the question's specific entities do the
    given passages never name? Built once per corpus (dictionary + document frequencies)."""

    def __init__(self, dictionary: EntityDictionary, doc_freq: Callable[[str], int | None], n_docs: int,
                 max_df: float, names_outside: bool = False,
                 consumer_df: Callable[[str], int] | None = None, asking_only: bool = False):
        self.dictionary, self.doc_freq, self.n_docs, self.max_df = dictionary, doc_freq, n_docs, max_df
        # a specific word of the question that no dictionary names is an entity too (rare_names),
        # when no consumer-health page uses it (``consumer_df``: pages using a word; None: none known)
        self.names_outside = names_outside and consumer_df is not None
        self.consumer_df = consumer_df
        self.asking_only = asking_only

    def entities(self, question: str) -> list[Entity]:
        if self.asking_only:  # the question sentences, not the context told before them
            question = " ".join(questions(question))
        found = specific(self.dictionary.find(question), self.doc_freq, self.n_docs, self.max_df)
        return found + self.rare_names(question, found) if self.names_outside else found

    def rare_names(self, question: str, found: Sequence[Entity] = ()) -> list[Entity]:
        """Words of the question that are names though no dictionary lists them: not ordinary
        English (corpus/english.py: "glimepiride", "oxcarbazepine"), used by no consumer-health
        page (so a patient's "tummy", "chemo" or "cramps" — no whole WordPiece words — are not
        names), and in at most ``max_df`` of the chunks, or in none (a name the books never use
        cannot be answered from them). Words of an entity already found, and words in
        parentheses, are left out."""
        from medground.corpus.english import english_words, is_english_derivation

        if not english_words():  # no word list (the [dense] extra is missing): no way to tell a name
            return []
        taken = {t for e in found for name in e.names for t in name}
        # a word in parentheses is the question's own aside or alias ("phenytoin (Dilantin)"):
        # the name before it is what must be found
        aside = {term for inner in re.findall(r"\(([^()]*)\)", question) for _, term in _words(inner)}
        out: list[Entity] = []
        for raw, term in _words(question):
            if term in aside:
                continue
            word = raw.lower()
            if (len(word) < 5 or not word.isalpha() or term in taken or is_english_derivation(word)
                    or self.consumer_df(word)):
                continue
            df = self.doc_freq(word) or 0
            if not self.n_docs or df / self.n_docs <= self.max_df:
                out.append(Entity(raw, frozenset({(term,)})))
                taken.add(term)
        return out

    def other_names(self, question: str, per_entity: int = 2) -> list[str]:
        """The canonical names of the question's specific entities where it names them another
        way ("Tylenol" → acetaminophen; "preterm birth" → Preterm Labor): what a book may call
        the thing. Names the question already holds, and combinations holding the name, are left out."""
        asked = set(terms(question))
        out: list[str] = []
        for e in self.entities(question):
            own = set(terms(e.name))
            # not a combination the name is part of ("naloxone" is no "buprenorphine/naloxone")
            others = [w for w in e.written if not own <= set(terms(w)) and not set(terms(w)) <= asked]
            out += others[:per_entity]
        return list(dict.fromkeys(out))

    def names_all(self, question: str, passages: Sequence[str]) -> list[bool]:
        """Per passage: whether it names every specific entity of the question (all False when
        the question has none: nothing to prefer)."""
        asked = self.entities(question)
        return [bool(asked) and not missing(asked, [p]) for p in passages]

    def absent(self, question: str, passages: Sequence[str]) -> list[str]:
        """The names, as the question writes them, that no passage names by any synonym."""
        return [e.name for e in missing(self.entities(question), passages)]


def entity_gate(doc_freq: Callable[[str], int | None], n_docs: int, max_df: float, drugs: Iterable[object] = (),
                data: str | None = None, names_outside: bool = False, asking_only: bool = False,
                classes: bool = False) -> EntityGate:
    """The gate over MedlinePlus topics, MedQuAD's focus names and the given medicine database's
    drugs; ``names_outside``: the question's rare non-English words that no consumer page uses
    (the mined lay vocabulary's MedlinePlus word counts) count as entities too."""
    drugs = list(drugs)
    groups = [*medlineplus_groups(data), *medquad_groups(data), *drug_groups(drugs),
              *(class_groups(drugs) if classes else ())]
    consumer_df = None
    if names_outside:
        from medground.corpus.lay_vocabulary import load_vocabulary

        vocabulary = load_vocabulary(data)
        if vocabulary.plain_docs:
            consumer_df = lambda word: vocabulary.plain_df.get(word, 0)  # noqa: E731
        else:
            log.warning("no consumer-health word counts in the data: the entity check keeps to its dictionary")
    return EntityGate(EntityDictionary(groups), doc_freq, n_docs, max_df, names_outside, consumer_df, asking_only)
