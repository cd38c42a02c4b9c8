"""A lay ↔ clinical vocabulary mined from consumer-health text (not a hand list).

NIH consumer pages define clinical terms in passing, the plain words first and the term in
parentheses after them: "recurrent episodes of severe swelling (angioedema)", "ringing in the
ears (tinnitus)", "low blood pressure (hypotension)" — or the other way round, "ethanol (pure
alcohol)". MedlinePlus names each topic and what it is "also called" (Hives = Urticaria). Every
such pair, from MedQuAD's 5,497 documents and the 1,017 MedlinePlus topics, is one vote that the
two phrases name one thing. A drug record's item ("Angioedema") is then also matched through the
phrases the pages use for it ("severe swelling"), which the patient's words ("my lips swelled")
reach where MiniLM alone does not.

What counts as the plain phrase is cut by grammar only: the words before the parenthesis back to
the nearest clause boundary (punctuation, a conjunction, a preposition or a verb of the
"characterized by", "can cause" kind), at most ``MAX_WORDS`` long, leading determiners and degree
words dropped. Acronyms, numbers and one-letter phrases are never pairs.

The vocabulary is built once from the data directory and cached as JSON in the working home
(``lay_vocabulary.json``), keyed by the source files' sizes and times.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

MAX_WORDS = 5
VERSION = 3
_PAREN = re.compile(r"\s\(([A-Za-z][A-Za-z '\-]{2,48})\)")
_BEFORE = re.compile(r"[A-Za-z][A-Za-z ,;:'\-]*$")  # the words right before a parenthesis
# Clause boundaries: where the plain phrase before a parenthesis begins. Grammar words, not
# medical ones: conjunctions, prepositions that open a new phrase, auxiliaries and linking verbs.
_BOUNDARY = re.compile(
    r"[,;:]|\b(?:and|or|but|nor|with|without|by|for|from|into|to|than|as|at|is|are|was|were|be|been|"
    r"being|has|have|had|may|might|can|could|will|would|should|must|do|does|did|also|which|that|"
    r"who|whose|when|where|while|if|because|called|known|named|termed|cause|causes|caused|causing|"
    r"include|includes|including|such|like|leads?|led|result|results|develop|develops|experience|"
    r"experiences|show|shows|involve|involves|affect|affects|produce|produces|characterized|"
    r"marked|feature|features|referred|means|mean)\b",
    re.IGNORECASE)
_LEADING = re.compile(r"^(?:a|an|the|of|on|in|some|any|their|his|her|its|your|this|these|those|mild|moderate|severe|"
                      r"extreme|recurrent|repeated|frequent|occasional|sudden|chronic|acute|episodes? of|"
                      r"symptoms? of|signs? of|a type of|type of|form of|kind of|pure|very|often|usually|"
                      r"sometimes)\s+", re.IGNORECASE)
_WORDS = re.compile(r"[a-z][a-z'\-]*")


def key(text: str) -> str:
    """Lower-cased words, single-spaced: the form terms and phrases are compared in."""
    return " ".join(_WORDS.findall(text.lower()))


def _plain(before: str) -> str:
    """The phrase that ends right before a parenthesis, cut at the nearest clause boundary; ""
    when it is one word cut off by "and"/"or" ("yellowing of the eyes and skin (jaundice)": the
    term names the whole coordination, not "skin")."""
    pieces = _BOUNDARY.split(before)
    phrase = pieces[-1].strip()
    if len(pieces) > 1 and len(phrase.split()) == 1:
        cut = before[: len(before) - len(pieces[-1])].rstrip().lower()
        if cut.endswith((" and", " or", ",")) or cut in {"and", "or"}:
            return ""
    words = phrase.split()
    phrase = " ".join(words[-MAX_WORDS:])
    previous = None
    while previous != phrase:
        previous, phrase = phrase, _LEADING.sub("", phrase)
    return key(phrase)


def _usable(phrase: str) -> bool:
    return len(phrase) >= 3 and bool(_WORDS.fullmatch(phrase.split()[0]))


def parenthetical_pairs(text: str) -> Iterator[tuple[str, str]]:
    """(plain phrase, parenthesized term) for each "words (term)" in ``text``, both keyed."""
    for m in _PAREN.finditer(text):
        inside = m.group(1).strip()
        head = _BEFORE.search(text, max(0, m.start() - 120), m.start())
        if head is None:
            continue
        last = head.group(0).split()[-1] if head.group(0).split() else ""
        if inside.isupper() or (last.isupper() and len(last) > 1) or len(inside.split()) > 4:
            continue  # an acronym spelled out, or an aside
        term = _plain(inside)
        before = _plain(head.group(0))
        if _usable(term) and _usable(before) and term != before:
            yield before, term


def _suffixes(phrase: str) -> list[str]:
    """The phrase's shorter endings: "beverages contain ethanol" → "contain ethanol", "ethanol"."""
    words = phrase.split()
    return [" ".join(words[i:]) for i in range(1, len(words)) if _usable(" ".join(words[i:]))]


@dataclass
class LayVocabulary:
    """Phrase → the phrases the sources use for the same thing, with how often they paired."""

    pairs: dict[str, Counter] = field(default_factory=dict)
    # word -> MedlinePlus topic summaries using it, and how many summaries there are: a word that
    # plain-language pages seldom use is not the patient's word, and only such items are expanded
    plain_df: dict[str, int] = field(default_factory=dict)
    plain_docs: int = 0

    def add(self, a: str, b: str, weight: int = 1) -> None:
        if a == b:
            return
        self.pairs.setdefault(a, Counter())[b] += weight
        self.pairs.setdefault(b, Counter())[a] += weight

    def is_clinical(self, text: str, share: float = 0.01) -> bool:
        """Whether ``text`` holds a word that under ``share`` of the plain-language summaries use
        ("angioedema", "pruritus", "hypotension": 0–1 of 1,017; "rash", "swelling": 45, 115)."""
        if not self.plain_docs:
            return True
        limit = share * self.plain_docs
        return any(len(w) > 3 and self.plain_df.get(w, 0) < limit for w in key(text).split())

    def knows(self, text: str) -> bool:
        """Whether the sources pair ``text`` with another name ("pre-eclampsia" as "preeclampsia",
        "pregnancy-induced high blood pressure"): a word of medicine's vocabulary. The sources are
        consumer health pages about conditions, so drug brands they never mention are not known."""
        k = key(text)
        return any(v in self.pairs for v in (k, k.replace("-", ""), k.replace("-", " ")))

    def synonyms(self, text: str, limit: int = 3) -> list[str]:
        """The phrases most often paired with ``text`` as a whole ("Angioedema" → "swelling"), at
        most ``limit``. Never those of a part of a longer item: "renal" in "Renal toxicity" or
        "Moderate renal impairment study" is not what the item names."""
        k = key(text)
        pairs = self.pairs.get(k) or (self.pairs.get(k[:-1]) if k.endswith("s") else None)
        return [other for other, _ in pairs.most_common(limit)] if pairs else []

    def equivalent(self, phrase: str, min_votes: int = 2) -> str | None:
        """The one phrase the sources use for ``phrase`` when each is the other's most frequent
        partner ("salt" ↔ "sodium", "shingles" ↔ "herpes zoster", "hair loss" ↔ "alopecia"),
        paired at least ``min_votes`` times; None otherwise. A word paired most often with
        another's piece ("blood" → "hypokalemia", from "low potassium in the blood
        (hypokalemia)") is not mutual, so not an equivalent."""
        def best(k: str) -> tuple[str | None, int]:
            pairs = self.pairs.get(k)
            return pairs.most_common(1)[0] if pairs else (None, 0)

        k = key(phrase)
        other, votes = best(k)
        if other is None or votes < min_votes or best(other)[0] != k:
            return None
        return other

    def equivalents(self, text: str, longest: int = 3, min_votes: int = 2) -> dict[str, str]:
        """Each phrase of ``text`` (runs of up to ``longest`` words) that has an
        :meth:`equivalent`, mapped to it; a word inside a longer phrase that has one is left to it."""
        words = key(text).split()
        out: dict[str, str] = {}
        taken: set[int] = set()
        for n in range(longest, 0, -1):
            for i in range(len(words) - n + 1):
                if taken & set(range(i, i + n)):
                    continue
                phrase = " ".join(words[i:i + n])
                if (other := self.equivalent(phrase, min_votes)) is not None:
                    out[phrase] = other
                    taken.update(range(i, i + n))
        return out

    def book_words(self, text: str, doc_freq: Callable[[str], int | None], n_docs: int,
                   max_share: float = 0.002, ratio: float = 10.0) -> dict[str, str]:
        """The :meth:`equivalents` of ``text`` that a corpus can find where the phrase itself is not:
        the phrase is in under ``max_share`` of its chunks and its equivalent in ``ratio`` times as
        many ("pee": 0 chunks of the textbooks, "urinate": 502; "shot" 15, "injection" 300). A word
        the corpus uses already ("child", "heart") keeps its own retrieval, whatever it pairs with."""
        out = {}
        for phrase, other in self.equivalents(text).items():
            ours, theirs = doc_freq(phrase), doc_freq(other)
            if ours is None or theirs is None:
                continue
            if ours <= max_share * n_docs and theirs >= ratio * max(ours, 1):
                out[phrase] = other
        return out

    def to_json(self) -> dict:
        return {"version": VERSION, "pairs": {k: dict(v) for k, v in self.pairs.items()},
                "plain_df": self.plain_df, "plain_docs": self.plain_docs}

    @classmethod
    def from_json(cls, data: dict) -> LayVocabulary:
        return cls({k: Counter(v) for k, v in data.get("pairs", {}).items()},
                   dict(data.get("plain_df", {})), int(data.get("plain_docs", 0)))


def mine(texts: Iterable[str], also_called: Iterable[tuple[str, list[str]]] = (),
         plain_texts: Sequence[str] = ()) -> LayVocabulary:
    """The vocabulary of parenthetical pairs in ``texts`` and (title, also-called names) rows;
    ``plain_texts`` (plain-language summaries) give each word's document frequency."""
    vocab = LayVocabulary()
    counts: Counter = Counter()
    for text in texts:
        counts.update(parenthetical_pairs(text))
    for (before, term), n in counts.items():
        vocab.add(before, term, n)
        # "…beverages contain ethanol (pure alcohol)": the term before the parenthesis is its last
        # words, which the cut by grammar alone cannot find; each ending points at the term.
        for ending in _suffixes(before):
            if ending != term:
                vocab.pairs.setdefault(ending, Counter())[term] += n
    for title, names in also_called:
        t = key(title)
        for name in names:
            n = key(name)
            if _usable(t) and _usable(n) and not name.isupper():
                vocab.add(t, n, 1)
    for text in plain_texts:
        for w in set(key(text).split()):
            vocab.plain_df[w] = vocab.plain_df.get(w, 0) + 1
    vocab.plain_docs = len(plain_texts)
    return vocab


def _source_texts(data: Path) -> tuple[list[str], list[tuple[str, list[str]]], list[str]]:
    """All text blocks, MedlinePlus (title, also-called) rows, and the MedlinePlus summaries."""
    from medground.corpus.base import ErrorPolicy
    from medground.corpus.readers import MedlinePlusReader, MedQuADReader

    texts: list[str] = []
    also: list[tuple[str, list[str]]] = []
    plain: list[str] = []
    quiet = ErrorPolicy(skip=True)  # a vocabulary is built from what reads; bad files are skipped
    for reader, root in ((MedQuADReader(), data / "corpora" / "medquad"),
                         (MedlinePlusReader(), data / "corpora" / "medlineplus-topics")):
        if not root.is_dir():
            continue
        for unit in reader.discover(root):
            for doc in reader.read(unit, quiet):
                blocks = [b.text for b in doc.blocks]
                texts.extend(blocks)
                if isinstance(reader, MedlinePlusReader):
                    plain.append(" ".join(blocks))
                if doc.metadata.get("also_called"):
                    also.append((doc.title, list(doc.metadata["also_called"])))
    return texts, also, plain


def _fingerprint(data: Path) -> str:
    parts = []
    for root in (data / "corpora" / "medquad", data / "corpora" / "medlineplus-topics"):
        if root.is_dir():
            files = sorted(p for p in root.rglob("*") if p.is_file())
            parts.append(f"{root.name}:{len(files)}:{sum(p.stat().st_size for p in files)}")
    return ";".join(parts)


def load_vocabulary(data: str | Path | None = None, cache: Path | None = None) -> LayVocabulary:
    """The vocabulary for the data directory, from the home's cache when its sources are unchanged
    (mining MedQuAD takes ~15 s); empty when the data holds neither source."""
    from medground import paths

    try:
        root = paths.data_root(data)
    except paths.DataNotFoundError:
        return LayVocabulary()
    cache = cache or paths.home() / "lay_vocabulary.json"
    stamp = _fingerprint(root)
    if not stamp:
        return LayVocabulary()
    if cache.is_file():
        try:
            stored = json.loads(cache.read_text(encoding="utf-8"))
            if stored.get("version") == VERSION and stored.get("sources") == stamp:
                return LayVocabulary.from_json(stored)
        except (OSError, ValueError):
            log.warning("unreadable lay vocabulary cache %s: rebuilding it", cache)
    texts, also, plain = _source_texts(root)
    vocab = mine(texts, also, plain)
    tmp = cache.with_suffix(".tmp")
    tmp.write_text(json.dumps({**vocab.to_json(), "sources": stamp}), encoding="utf-8")
    tmp.replace(cache)
    log.info("lay vocabulary: %d phrases mined from %s", len(vocab.pairs), root)
    return vocab


__all__ = ["LayVocabulary", "key", "load_vocabulary", "mine", "parenthetical_pairs"]
