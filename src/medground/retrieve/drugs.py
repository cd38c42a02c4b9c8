"""Hierarchical retrieval over the medicine database: entity (drug) first, then attribute.

``search("ibuprofin side effects")`` recognises the drug (exact name, brand → generic,
rapidfuzz for misspellings, BM25 over names as a last resort), then ranks that drug's
attributes: those named by the keywords' attribute words ("side effects" → adverse_reactions)
first, BM25 over the drug's attribute texts next. No drug recognised → BM25 over all
attribute texts. As in RagPULSE, an LLM can call it with distilled keywords.
"""

from __future__ import annotations

import re
from functools import lru_cache
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import bm25s
import numpy as np
import Stemmer
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from medground.corpus.english import is_english_word as _english_word
from medground.drug_schema import AttributeType, Drug, DrugAttribute, normalize_name
from medground.store.drugs import DrugStore
from medground.registry import register
from medground.retrieve.base import check_query
from medground.schema import Chunk, Passage, make_chunk_id

A = AttributeType
# Keyword cues → the attribute types they ask about (first = asked for, rest = next best).
ATTRIBUTE_CUES: list[tuple[re.Pattern[str], tuple[AttributeType, ...]]] = [
    (re.compile(r"side.?effect|adverse|reaction|toxicit|make (me|you)"), (A.ADVERSE_REACTIONS,)),
    (re.compile(r"\bdos(e|es|age|ing)\b|how (much|many|often)|\bmg\b|maximum|overdos"),
     (A.DOSAGE,)),
    (re.compile(r"pregnan|breast.?feed|nursing|lactat|child|kids?\b|infant|pediatric|elderly"
                r"|older adult"), (A.SPECIAL_POPULATIONS, A.WARNINGS, A.CONTRAINDICATIONS)),
    (re.compile(r"interact|take .{0,30}\bwith\b|together|combin|\bmix|alcohol|grapefruit"
                r"|\bfood"),
     (A.INTERACTIONS,)),
    (re.compile(r"\bstor(e|age|ing)\b|fridge|refrigerat|room temperature|expir"), (A.STORAGE,)),
    (re.compile(r"contraindicat|should not (take|use)|who (should|can) ?not|allerg"),
     (A.CONTRAINDICATIONS, A.WARNINGS)),
    (re.compile(r"boxed|black.?box"), (A.BOXED_WARNING, A.WARNINGS)),
    (re.compile(r"warning|precaution|caution|\bsafe|\brisk|danger"),
     (A.WARNINGS, A.BOXED_WARNING)),
    (re.compile(r"used? (for|to)|indicat|\btreat|what is it for"), (A.INDICATIONS,)),
    (re.compile(r"mechanism|how does .* work|mode of action"), (A.MECHANISM,)),
    (re.compile(r"\bclass\b|type of (drug|medicine)|what kind"), (A.DRUG_CLASS,)),
    (re.compile(r"therapeutic|benefit|how long .* work|onset|effective"),
     (A.THERAPEUTIC_EFFECTS,)),
]
# A brand is as exact a name as the generic: the user asking about "Zestril" asks about that drug,
# whatever generic is co-mentioned (ties are broken by who was named first, not by kind).
_KIND_SCORE = {"generic": 1.0, "brand": 1.0, "synonym": 0.9, "component": 0.7}
# the most a name met through some of its words scores ("polymyxin" of "neomycin/polymyxin b/…")
PARTIAL_NAME = 0.5
_STOP = {"side", "effects", "effect", "dose", "dosage", "with", "take", "what", "does", "drug",
         "taking", "about", "should", "pregnant", "there", "which", "interaction", "interactions"}


def attribute_intents(keywords: str) -> dict[AttributeType, float]:
    """Attribute types the keywords ask about: 1.0 for the named one, 0.5 for the next best."""
    text = keywords.lower()
    intents: dict[AttributeType, float] = {}
    for pattern, types in ATTRIBUTE_CUES:
        if pattern.search(text):
            for i, t in enumerate(types):
                intents[t] = max(intents.get(t, 0.0), 1.0 if i == 0 else 0.5)
    return intents


@dataclass(slots=True)
class DrugMatch:
    drug_id: str
    score: float  # 0..1
    how: str  # "exact generic 'ibuprofen'", "fuzzy 'ibuprofin'→'ibuprofen' (89)", ...
    span: str  # the part of the keywords that named the drug


@dataclass(slots=True)
class DrugHit:
    drug: Drug
    attribute: DrugAttribute | None
    score: float
    matched: str  # how the drug (or, without one, the attribute) was found


class DrugRetrieverSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str | None = None  # SQLite file; default paths.home()/"drugs.sqlite"
    fuzzy_cutoff: float = 85.0  # rapidfuzz ratio (0-100) for misspelled names
    max_drugs: int = 3  # drugs considered per query
    # A word found in this many attribute texts or more is a real word, never a misspelled name
    # (the database's own curated text does not misspell drugs): "water" is not "Wal-Tussin".
    common_word_min_texts: int = Field(2, ge=1)
    # What the keywords ask about: "learned" = the softmax typer on MiniLM embeddings trained on
    # Medication QA (retrieve/drug_intent.py), "cues" = keyword patterns, "both" = either's
    # strongest signal. "learned" falls back to cues where the embedder is not installed.
    intent: Literal["cues", "learned", "both"] = "both"
    intent_top: int = Field(2, ge=1, description="learned types tried, weighted by probability")


@lru_cache(maxsize=1)
def _drug_name_lexicon():
    """The drug-name lexicon (the optional ``drugs`` extra; empty without it)."""
    from medground.drug_schema import load_drug_ner_lexicon

    return load_drug_ner_lexicon()


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9][a-z0-9\-']*", normalize_name(text))


class DrugRetriever:
    def __init__(self, store: DrugStore, settings: DrugRetrieverSettings | None = None):
        store.require_built()
        self.settings = settings or DrugRetrieverSettings()
        self.store = store
        self.drugs = {d.drug_id: d for d in store.drugs()}
        self.names: dict[str, list[tuple[str, str]]] = {}
        for name, drug_id, kind in store.names():
            self.names.setdefault(name, []).append((drug_id, kind))
        self.max_name_words = max(len(_tokens(n)) for n in self.names)
        self.fuzzy_names = [n for n in self.names if len(n) >= 5]
        self.fuzzy_by_initial: dict[str, list[str]] = {}
        for n in self.fuzzy_names:
            self.fuzzy_by_initial.setdefault(n[0], []).append(n)
        self.attributes = store.attributes()
        self.by_drug: dict[str, list[int]] = {}
        for i, a in enumerate(self.attributes):
            self.by_drug.setdefault(a.drug_id, []).append(i)
        self._stemmer = Stemmer.Stemmer("english")
        self._attr_bm25 = self._index([f"{a.heading}\n{a.text}" for a in self.attributes])
        # Words common in attribute texts ("medical", "pain") are not misspelled drug names.
        df: Counter[str] = Counter()
        for a in self.attributes:
            df.update(set(self._stemmer.stemWords(_tokens(a.text))))
        limit = self.settings.common_word_min_texts
        self._common_stems = {w for w, n in df.items() if n >= limit}
        self._typer = None
        if self.settings.intent != "cues":
            from medground.retrieve.drug_intent import load_typer

            self._typer = load_typer()
        self._name_list = sorted(self.names)
        self._name_bm25 = self._index(self._name_list)

    def unknown_names(self, keywords: str, *, min_ratio: float = 60.0, n: int = 3,
                      beside: float | None = None) -> dict[str, list[str]]:
        """Words of ``keywords`` that look like a drug name the database lacks → the nearest names.

        Only when no drug is recognised (with ``beside``: none above that match score, so a name met
        through one of its words, :data:`PARTIAL_NAME`, does not count): a rare word (not a
        database word, ≥ 5 letters) whose closest name scores between ``min_ratio`` and the fuzzy
        cutoff ("zolgensma" → "zolpidem" …) is reported with the ``n`` nearest drugs' display names.
        """
        found = self.find_drugs(keywords)
        if any(beside is None or m.score > beside for m in found):
            return {}
        # a word of a name met in part is that name's ("norethisterone" of "norethisterone acetate")
        covered = {w for m in found for w in _tokens(m.span)}
        out: dict[str, list[str]] = {}
        for word in dict.fromkeys(_tokens(keywords)):
            # ("aren't": a contraction is no name)
            if (len(word) < 5 or "'" in word or word in covered or self.is_common(word) or word.isdigit()
                    or _english_word(word)):
                continue
            near = process.extract(word, self.fuzzy_names, scorer=fuzz.ratio, limit=12)
            if not near or near[0][1] < min_ratio:
                continue
            names: list[str] = []
            for name, ratio, _ in near:
                if ratio < 0.75 * min_ratio:  # nearest, not merely the next in line
                    break
                for drug_id, _ in self.names[name]:
                    display = self.drugs[drug_id].display_name
                    if display not in names:
                        names.append(display)
            out[word] = names[:n]
        return out

    def names_another_drug(self, span: str, near: str) -> bool:
        """``span`` is a drug's own name in the name lexicon, and not a name of the drug(s) that the
        database name ``near`` belongs to: a drug the database lacks ("hydrocodone", nearest name
        "hydrocortisone"), never to be read as its nearest name."""
        lex = _drug_name_lexicon()
        canon = lex.variant_to_canonical.get(normalize_name(span), []) if lex else []
        if not canon:
            return False
        owners = {self.drugs[d].generic_name for d, _ in self.names.get(near, []) if d in self.drugs}
        return not any(c in owners or any(c in o.split("/") for o in owners) for c in canon)

    def is_common(self, word: str) -> bool:
        """An ordinary word (a stop word, or its stem in enough attribute texts) and not a name."""
        return word not in self.names and (word in _STOP or self._stemmer.stemWord(word) in self._common_stems)

    def _index(self, texts: list[str]) -> bm25s.BM25:
        index = bm25s.BM25()
        index.index(self._tokenize(texts), show_progress=False)
        return index

    def _tokenize(self, texts: list[str]):
        return bm25s.tokenize(texts, stopwords="en", stemmer=self._stemmer, show_progress=False)

    def _query_tokens(self, text: str) -> list[str]:
        return bm25s.tokenize([text], stopwords="en", stemmer=self._stemmer,
                              show_progress=False, return_ids=False)[0]

    # ------------------------------------------------------------ entity

    def find_drugs(self, keywords: str) -> list[DrugMatch]:
        words = _tokens(keywords)
        found: dict[str, DrugMatch] = {}
        covered: set[int] = set()

        def add(drug_id: str, score: float, how: str, span: str) -> None:
            if drug_id not in found or found[drug_id].score < score:
                found[drug_id] = DrugMatch(drug_id, score, how, span)

        # Exact names, longest n-gram first ("insulin glargine" before "insulin").
        for n in range(min(self.max_name_words, len(words)), 0, -1):
            for i in range(len(words) - n + 1):
                if covered & set(range(i, i + n)):
                    continue
                span = " ".join(words[i:i + n])
                # "Glyburide/Metformin" is one name: the combination, not its two components.
                for form in (span, "/".join(words[i:i + n])) if n > 1 else (span,):
                    for drug_id, kind in self.names.get(form, []):
                        add(drug_id, _KIND_SCORE[kind], f"exact {kind} {form!r}", span)
                        covered |= set(range(i, i + n))
        # Misspellings: uncovered words (and word pairs) against all names.
        def fuzzy(best: tuple, span: str, i: int, n: int) -> None:
            name, ratio, _ = best
            for drug_id, kind in self.names[name]:
                add(drug_id, 0.8 * ratio / 100 * _KIND_SCORE[kind], f"fuzzy {span!r}→{name!r} ({ratio:.0f})", span)
            covered.update(range(i, i + n))

        ordinary: list[tuple[tuple, str, int, int]] = []  # fuzzy matches of dictionary words, held back
        for n in (2, 1):
            for i in range(len(words) - n + 1):
                span_words = words[i:i + n]
                span = " ".join(span_words)
                if (covered & set(range(i, i + n)) or len(span) < 5
                        or any(self.is_common(w) for w in span_words)):
                    continue
                # Misspellings keep the first letter ("ibuprofin", "gabbentine"); a word that only
                # resembles a name's tail is an ordinary word ("inject" is not "Twinject").
                pool = self.fuzzy_by_initial.get(span[0], [])
                best = process.extractOne(span, pool, scorer=fuzz.ratio, score_cutoff=self.settings.fuzzy_cutoff)
                if not best and len(span) >= 6 and not _english_word(span):
                    # One slip of the finger: two letters swapped ("lyrcia") or one wrong, missing
                    # or extra — the ratio punishes a swap in a short name below the cutoff.
                    slip = process.extractOne(span, pool, scorer=OSA.distance, score_cutoff=1)
                    if slip:
                        best = (slip[0], 100.0 * (1 - 1 / max(len(span), len(slip[0]))), slip[2])
                if best and self.names_another_drug(span, best[0]):
                    continue  # "hydrocodone" is a drug the database lacks, not a misspelt hydrocortisone
                if best and all(_english_word(w) for w in span_words):
                    # an ordinary word is a misspelt name only when nothing else names a drug:
                    # "singular 10 mg" is Singulair, "my grandpa is on morphine" names no Grandipam
                    ordinary.append((best, span, i, n))
                elif best:
                    fuzzy(best, span, i, n)
        if not found:
            for best, span, i, n in ordinary:
                if not covered & set(range(i, i + n)):
                    fuzzy(best, span, i, n)
        rare = [w for w in words if len(w) >= 4 and not self.is_common(w)]
        if not found and rare:  # partial names ("polymyxin" in "neomycin/polymyxin b/...")
            scores = self._name_bm25.get_scores(self._query_tokens(" ".join(rare)))
            for j in np.argsort(-scores, kind="stable")[:3]:
                name = self._name_list[j]
                if scores[j] > 0 and set(rare) & set(name.split()):
                    for drug_id, kind in self.names[name]:
                        add(drug_id, PARTIAL_NAME * float(scores[j] / scores.max()),
                            f"bm25 name {name!r}", name)
        text = " ".join(words)
        ranked = sorted(found.values(), key=lambda m: (-m.score, text.find(m.span), m.drug_id))
        return ranked[: self.settings.max_drugs]

    # ------------------------------------------------------------ attribute

    def intents(self, text: str) -> dict[AttributeType, float]:
        """Attribute types ``text`` asks about, weighted 0..1 (the top type 1.0)."""
        cues = attribute_intents(text) if self.settings.intent != "learned" or self._typer is None else {}
        if self._typer is None:
            return cues
        top = self._typer.top(text, self.settings.intent_top)
        learned = {t: p / top[0][1] for t, p in top}
        return {t: max(cues.get(t, 0.0), learned.get(t, 0.0)) for t in {*cues, *learned}}

    def search(self, keywords: str, k: int = 10) -> list[DrugHit]:
        keywords = check_query(keywords)
        intents = self.intents(keywords)
        matches = self.find_drugs(keywords)
        if sum(m.how.startswith("exact") for m in matches) >= 2:  # two drugs named together
            intents[A.INTERACTIONS] = max(intents.get(A.INTERACTIONS, 0.0), 1.0)
        if not matches:
            return self._search_all_attributes(keywords, k)
        rest = keywords.lower()
        for m in matches:
            rest = rest.replace(m.span, " ")
        return self._rank(matches, intents, rest, k)

    def search_subject(self, drug_ids: Sequence[str], question: str, k: int = 10) -> list[DrugHit]:
        """Records of the given drugs (the consultation's subject first) for what ``question`` asks."""
        question = check_query(question)
        matches = [DrugMatch(d, 1.0 - 0.1 * i, "subject", "") for i, d in enumerate(drug_ids) if d in self.drugs]
        if not matches:
            return self._search_all_attributes(question, k)
        rest = question.lower()
        for d in drug_ids[:1]:
            for name in (self.drugs[d].display_name, *self.drugs[d].brand_names):
                rest = rest.replace(name.lower(), " ")
        return self._rank(matches, self.intents(question), rest, k)

    def _rank(self, matches: list[DrugMatch], intents: dict[AttributeType, float], rest: str,
              k: int) -> list[DrugHit]:
        query_tokens = self._query_tokens(rest)
        scores = self._attr_bm25.get_scores(query_tokens) if query_tokens else None
        hits: list[DrugHit] = []
        for m in matches:
            drug = self.drugs[m.drug_id]
            idx = self.by_drug.get(m.drug_id, [])
            if not idx:
                hits.append(DrugHit(drug, None, m.score, m.how))
                continue
            bm = np.array([scores[i] for i in idx]) if scores is not None else np.zeros(len(idx))
            bm = bm / bm.max() if bm.max() > 0 else bm
            for i, b in zip(idx, bm):
                a = self.attributes[i]
                attr_score = intents.get(a.type, 0.0) + 0.5 * float(b)
                hits.append(DrugHit(drug, a, m.score * (1.0 + attr_score), m.how))
        hits.sort(key=lambda h: -h.score)  # stable: ties keep database order
        return hits[:k]

    def _search_all_attributes(self, keywords: str, k: int) -> list[DrugHit]:
        tokens = self._query_tokens(keywords)
        if not tokens:
            return []
        scores = self._attr_bm25.get_scores(tokens)
        order = np.argsort(-scores, kind="stable")[:k]
        return [DrugHit(self.drugs[self.attributes[i].drug_id], self.attributes[i],
                        float(scores[i]), "bm25 attributes") for i in order if scores[i] > 0]


def to_passages(hits: Sequence[DrugHit], source: str = "drugs") -> list[Passage]:
    """Hits as citable passages: book "Medicine database", chapter = drug, section = type."""
    out = []
    for rank, h in enumerate(hits, 1):
        a = h.attribute
        section = (a.type.value,) if a else ()
        text = a.text if a else f"{h.drug.display_name}: {', '.join(h.drug.brand_names)}"
        origin = a.source if a else "drugs"
        chunk = Chunk(
            chunk_id=make_chunk_id(origin, section, text, 0), doc_id=f"drugs/{h.drug.drug_id}",
            corpus="drugs", source_path=origin, text=text, title=h.drug.display_name,
            book="Medicine database", chapter=h.drug.display_name, section_path=section,
            char_end=len(text),
            metadata={"drug_id": h.drug.drug_id, "brand_names": h.drug.brand_names,
                      "matched": h.matched, "heading": a.heading if a else ""})
        out.append(Passage(chunk, h.score, source, rank))
    return out


class DrugPassageRetriever:
    """The :class:`~medground.retrieve.base.Retriever` face of :class:`DrugRetriever`."""

    name = "drugs"

    def __init__(self, retriever: DrugRetriever):
        self.retriever = retriever

    def search(self, query: str, k: int = 10) -> list[Passage]:
        return to_passages(self.retriever.search(query, k))

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Passage]]:
        return [self.search(q, k) for q in queries]


@register("retriever", "drugs")
def make_drug_retriever(settings: DrugRetrieverSettings | None = None,
                        store: DrugStore | None = None, **_chunk_store_args: object) -> DrugPassageRetriever:
    # The engine passes chunk-store arguments (corpora, build_if_missing) to every retriever;
    # the medicine database is its own store, built by `medground drugs build`.
    settings = settings or DrugRetrieverSettings()
    return DrugPassageRetriever(DrugRetriever(store or DrugStore(settings.path), settings))
