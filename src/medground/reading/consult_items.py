"""The medicine database's entries as items in the embedding space, and the patient's words as
phrases to match against them (reading/consult.py weighs the matches).

A list entry is split into items ("Cough", "Angioedema"); each item is embedded with its
MedlinePlus lay gloss and the plain phrases consumer pages pair it with (corpus/lay_vocabulary.py),
so "my lips swelled" can reach "Angioedema". The patient's turns become short content phrases,
with the database's spelling of a misspelt word beside it (reading/spelling.py)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from medground.drug_schema import AttributeType, Drug, DrugAttribute
from medground.reading.consult_settings import TERM_TYPES, TITLED_TYPES, ConsultReplySettings
from medground.reading.consult_text import (
    REFERENTS,
    WORD,
    content_phrases,
    describing_words,
    members,
    sentence_phrases,
    split_items,
    stop_words,
    whole_of_parts,
    with_parts,
)
from medground.reading.consult_types import word_set
from medground.reading.label_items import is_label, label_items


# Words of a mined plain name that say "a medicine" and nothing of which one ("certain
# medications", "taking pills"): beside the referent nouns, the vaguest of determiners and the
# verbs of taking.
_VAGUE = frozenset("certain take takes taking".split())


def names_a_thing(phrase: str) -> bool:
    """Whether a mined plain name says what it names: Lithium's "certain medications" does not
    (a patient's "Doctor" met Lithium through it at 0.49), "water pills" does."""
    stop = stop_words()
    return any(w not in stop and w not in REFERENTS and w not in _VAGUE
               for w in (x.lower() for x in WORD.findall(phrase)))


class ItemSpace:
    """Entries' items and their vectors (built per drug on first use), rare words, patient phrases."""

    def __init__(self, drugs, embedder, settings: ConsultReplySettings, lay_vocabulary=None):
        self.drugs = drugs  # retrieve.drugs.DrugRetriever
        self.embedder = embedder
        self.settings = settings
        self._item_vectors: dict[str, tuple[list[list[str]], list[np.ndarray]]] = {}
        self._item_names: dict[str, list[list[list[str]]]] = {}  # drug -> entries × items × (item, plain names)
        self._members: dict[str, list[dict[str, str]]] = {}  # drug -> entries × {member: item}
        self._wholes: dict[str, list[dict[str, str]]] = {}  # drug -> entries × {part: item}
        self._entry_df: dict[str, int] | None = None  # word -> entries holding it
        self._lay = lay_vocabulary  # corpus.lay_vocabulary.LayVocabulary; the data's, loaded on first use
        self._speller = None  # reading.spelling.Speller over the database's words, built on first use
        self._substances: frozenset[str] | None = None  # words of the drug names, built on first use

    def entries(self, drug_id: str) -> list[DrugAttribute]:
        return [self.drugs.attributes[i] for i in self.drugs.by_drug.get(drug_id, [])]

    def items(self, drug_id: str) -> tuple[list[list[str]], list[np.ndarray]]:
        """Each entry's items and their vectors, rows × items × dim: the item; (item: its lay
        gloss), or else the item with its abbreviations spelled out (corpus/abbreviations.py); then
        ``lay_synonyms`` mined plain phrases (a row repeats the item where it has none)."""
        if drug_id not in self._item_vectors:
            from medground.corpus.abbreviations import expand, load_abbreviations
            from medground.reading.lay_terms import gloss, load_glossary

            s = self.settings
            glossary = load_glossary() if s.lay_glosses else {}
            vocabulary = self._vocabulary()
            # A label section can list hundreds of lines; its first ones carry its gist.
            listed = [(label_items(split_items(a.text)) if s.label_scaffolding and is_label(a.source)
                       else list(dict.fromkeys(split_items(a.text))))[: s.max_entry_items]
                      for a in self.entries(drug_id)]
            named_members = [s.item_members and a.type in TERM_TYPES for a in self.entries(drug_id)]
            # a label line's title names a caution ("Arthralgia: …"); in a side-effects entry it can
            # name the patients studied ("Postmenopausal osteoporosis: Most common adverse reactions …")
            titled = [a.type in TITLED_TYPES for a in self.entries(drug_id)]
            items = [with_parts(its, m, t) for its, m, t in zip(listed, named_members, titled)]
            # each member an item names in parentheses → that item (a member that is an item of
            # its own stays one); the reply names the item, matched through its member
            self._members[drug_id] = [
                {m: item for item in reversed(its) for m in members(item) if m not in its} if on else {}
                for its, on in zip(listed, named_members)]
            self._wholes[drug_id] = [whole_of_parts(its, t) if s.whole_items else {} for its, t in zip(listed, titled)]
            if s.item_phrases:  # a sentence item is also met through its runs of content words
                own = self.drug_names(self.drugs.drugs[drug_id], []) if drug_id in self.drugs.drugs else []
                said = [{p: item for item in reversed(its) for p in sentence_phrases(item, own) if p not in its}
                        if a.type in TERM_TYPES else {} for its, a in zip(listed, self.entries(drug_id))]
                items = [list(dict.fromkeys([*its, *ph])) for its, ph in zip(items, said)]
                self._members[drug_id] = [{**ph, **m} for ph, m in zip(said, self._members[drug_id])]
            flat = [i for its in items for i in its]
            extra: list[tuple[int, int, str]] = []  # (row, item, text)
            abbreviations = load_abbreviations() if s.spell_abbreviations else {}
            for j, item in enumerate(flat):
                if g := gloss(item, glossary):
                    extra.append((1, j, f"{item}: {g}"))
                elif spelled := expand(item, abbreviations):  # "CABG surgery" meets "a heart bypass"
                    extra.append((1, j, spelled))
                if vocabulary is not None and len(item) <= 60 and vocabulary.is_clinical(item, s.plain_share):
                    plain = [t for t in vocabulary.synonyms(item, s.lay_synonyms + 3) if names_a_thing(t)]
                    extra += [(2 + r, j, t) for r, t in enumerate(plain[: s.lay_synonyms])]
            vecs = (self.embedder.encode_passages(flat + [t for _, _, t in extra]) if flat
                    else np.zeros((0, 1), dtype=np.float32))
            rows = np.repeat(vecs[None, : len(flat)], 2 + s.lay_synonyms, axis=0)
            for k, (r, j, _) in enumerate(extra):
                rows[r, j] = vecs[len(flat) + k]
            names = [[item] for item in flat]
            for r, j, text in extra:
                if r >= 2:
                    names[j].append(text)
            out, named, k = [], [], 0
            for its in items:
                out.append(rows[:, k:k + len(its)] if its else np.zeros((2 + s.lay_synonyms, 0, 1), dtype=np.float32))
                named.append(names[k:k + len(its)])
                k += len(its)
            self._item_vectors[drug_id] = (items, out)
            self._item_names[drug_id] = named
        return self._item_vectors[drug_id]

    def member_of(self, drug_id: str) -> list[dict[str, str]]:
        """Per entry: each member an item names in parentheses → that item (consult_text.members)."""
        self.items(drug_id)
        return self._members[drug_id]

    def whole_of(self, drug_id: str) -> list[dict[str, str]]:
        """Per entry: with ``whole_items``, each part of an item → the item (consult_text.whole_of_parts)."""
        self.items(drug_id)
        return self._wholes[drug_id]

    def item_names(self, drug_id: str) -> list[list[list[str]]]:
        """Per entry, per item: the item and the plain names it is also matched through."""
        self.items(drug_id)
        return self._item_names[drug_id]

    def _vocabulary(self):
        if not self.settings.lay_synonyms:
            return None
        if self._lay is None:
            from medground.corpus.lay_vocabulary import load_vocabulary

            self._lay = load_vocabulary()
        return self._lay

    def rare_words(self, text: str, exclude: Sequence[str]) -> set[str]:
        """Content words of ``text`` held by under ``rare_share`` of the database's entries; not
        the names of the drugs (``exclude``) nor the words that describe a medicine ("ellipta" of
        "the breo ellipta inhaler"), which say which drug, not what is asked."""
        if self._entry_df is None:
            df: dict[str, int] = {}
            for a in self.drugs.attributes:
                for w in word_set(a.text):
                    df[w] = df.get(w, 0) + 1
            self._entry_df = df
        limit = self.settings.rare_share * max(1, len(self.drugs.attributes))
        drop = {w.lower() for name in exclude for w in WORD.findall(name)}
        drop |= describing_words(text, self.substance_words())  # "ellipta" of "my breo ellipta inhaler"
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
        substances = self.substance_words()
        out = [(p, 1.0) for p in content_phrases(turns[-1], names, substances=substances)] if turns else []
        out += self.named_phrases(others)
        for t in turns[:-1]:
            out += [(p, s.earlier_turn_weight) for p in content_phrases(t, names, substances=substances)]
        speller = self._spelling()
        if speller is not None:
            out += [(fixed, w) for p, w in out if (fixed := speller.corrected(p)) is not None]
        seen: dict[str, float] = {}
        for p, w in out:
            seen[p] = max(w, seen.get(p, 0.0))
        return list(seen.items())

    @staticmethod
    def named_phrases(drugs: Sequence[Drug]) -> list[tuple[str, float]]:
        """What an interactions entry would list for each of ``drugs``: its generic name and class."""
        return [p for d in drugs for p in [(d.generic_name, 1.0)] + ([(d.drug_class, 1.0)] if d.drug_class else [])]

    def substance_words(self) -> frozenset[str]:
        """Words of the database's generic names (four letters or more, no stop word): "calcium" of
        "calcium carbonate", "iron", "potassium" — what a medicine called "<word> tablets" is."""
        if self._substances is None:
            stop = stop_words()
            # generic names only: brands hold ordinary words ("… Allergy", "… Control")
            self._substances = frozenset(w.lower() for name, owners in self.drugs.names.items()
                                         if any(kind == "generic" for _, kind in owners)
                                         for w in WORD.findall(name) if len(w) >= 4 and w.lower() not in stop)
        return self._substances

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

    def listed_similarity(self, drug_id: str, vectors: np.ndarray, types: tuple[AttributeType, ...]) -> np.ndarray:
        """Per phrase vector: its best similarity to an item of the drug's entries of ``types`` (0: none)."""
        best = np.zeros(len(vectors), dtype=np.float32)
        items, vecs = self.items(drug_id)
        for attr, iv in zip(self.entries(drug_id), vecs):
            if attr.type in types and iv.shape[1]:
                best = np.maximum(best, (iv @ vectors.T).max(axis=(0, 1)))
        return best
