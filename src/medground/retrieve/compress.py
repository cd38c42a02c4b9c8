"""Evidence compression: keep the sentences most related to the question and its options.

A small reader drowns in 900–1,200 tokens of loosely related text; the sentence that decides
the question is often one of forty. ``compress`` re-packs packed ``Evidence`` into a smaller
token budget out of whole sentences, keeping every citation's number, so ``[n]`` still points
at the passage the sentences came from.

Scoring is lexical and deterministic (the BM25 tokenizer: lower case, stop words removed,
Snowball stems, a Greek-derived noun's stem conflated with its adjective's:
``index.text.conflate``). A term's weight is its inverse document frequency over the sentences
of this evidence (a term in every sentence says nothing). A sentence scores

    sum over the question's words of the weight of the word's best term it contains
    + for each option: the same over that option's words (options compete fairly: a sentence
      naming the right option and the question's subject scores highest).

A word counts once: "first-line" indexes first-line, first and line, and summing all three let a
question's "first-line" outweigh its "anaphylaxis" three to one.

Two optional context terms (both off, in the shipped configs too: they keep the answer's
sentence more often, but the free-text answers did not improve; benchmarks/compression.py and
docs/benchmarks.md "Compression that keeps the deciding sentence"):

    neighbor_weight * the best lexical score of the sentence just before or after it in the same
      passage ("Contraindications include ... hypokalemia" follows the sentence naming digoxin:
      a decisive sentence often shares no term with the question, its neighbour does);
    the total multiplied by 1 + rank_weight / (passage position + 1): retrieval already ranked
      the passages, and a sentence of the first passage is likelier to answer than an equally
      worded one of the eighth.

Selection is greedy by score until the budget is spent; options get one guaranteed slot each
first (the best sentence that names the option, if any) so the reader sees evidence for and
against every option, not just for the one with the longest text. Chosen sentences are shown
in their original order within each passage, joined by " … " where something was skipped.
Passages left with no chosen sentence are dropped from the evidence (their numbers are not
reused: the remaining citations keep theirs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from medground.index.text import text_tokenizer
from medground.retrieve.fusion import reciprocal_rank
from medground.schema import Citation, Evidence

TokenCount = Callable[[str], int]
GAP = " … "


@dataclass(slots=True)
class _Sentence:
    citation: int  # index into evidence.citations
    order: int  # position within that passage
    start: int
    end: int
    text: str
    terms: frozenset[str]
    tokens: int
    score: float = 0.0


HEADING_WORDS = 8  # a line this short without a full stop, followed by a line break, is a heading


def _is_heading(text: str, gap: str) -> bool:
    """A heading line ("Salt Substitutes"): short, no closing punctuation, a line break after it."""
    t = text.strip()
    return bool(t) and "\n" in gap and len(t.split()) <= HEADING_WORDS and t[-1] not in ".?!:;,)\"'”"


def _spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans, a heading line joined to the sentence under it: alone, a heading matches
    the question's words best and says nothing ("Salt Substitutes" kept, "… made with potassium
    chloride, which can raise potassium to life-threatening levels" dropped)."""
    from medground.corpus.sentences import split_spans

    spans = split_spans(text)
    out: list[tuple[int, int]] = []
    k = 0
    while k < len(spans):
        s = spans[k][0]
        while k + 1 < len(spans) and _is_heading(text[spans[k][0]:spans[k][1]], text[spans[k][1]:spans[k + 1][0]]):
            k += 1
        out.append((s, spans[k][1]))
        k += 1
    return out


def _sentences(evidence: Evidence, count: TokenCount, tokenize: Callable[[str], list[str]],
               join_headings: bool = False) -> list[_Sentence]:
    from medground.corpus.sentences import split_spans

    out: list[_Sentence] = []
    for i, c in enumerate(evidence.citations):
        for j, (s, e) in enumerate(_spans(c.text) if join_headings else split_spans(c.text)):
            text = c.text[s:e]
            out.append(_Sentence(i, j, s, e, text, frozenset(tokenize(text)), count(text)))
    return out


Words = set[frozenset[str]]  # each word's terms (``MedicalTokenizer.tokenize_words``)


def words_of(tok, text: str, minus: frozenset[str] = frozenset()) -> Words:
    """The distinct words of ``text`` as term sets, without the terms in ``minus``."""
    return {w for w in (frozenset(terms) - minus for terms in tok.tokenize_words(text)) if w}


def with_equivalents(tok, words: Words, equivalents: Mapping[str, str]) -> Words:
    """``words`` with each phrase's equivalent's terms joined to the phrase's last word: "salt"
    meets "sodium", and "high blood pressure" still scores its three words where it is said."""
    out = set(words)
    for phrase, other in equivalents.items():
        said = tok.tokenize_words(phrase)
        extra = terms_of(words_of(tok, other))
        if not said or not extra:
            continue
        head = frozenset(said[-1])
        if head in out:
            out.discard(head)
            out.add(head | extra)
    return out


def terms_of(words: Words) -> frozenset[str]:
    return frozenset().union(*words)


def score_sentences(sentences: list[_Sentence], question_words: Words,
                    option_words: Mapping[str, Words], *, neighbor_weight: float = 0.0,
                    rank_weight: float = 0.0) -> None:
    """Set each sentence's score (see the module docstring); ``sentences`` in passage order."""
    n = len(sentences)
    df: dict[str, int] = {}
    for s in sentences:
        for t in s.terms:
            df[t] = df.get(t, 0) + 1
    idf = {t: math.log(1 + n / d) for t, d in df.items()}

    def matched(words: Words, terms: frozenset[str]) -> float:
        return sum(max((idf[t] for t in w & terms), default=0.0) for w in words)

    for s in sentences:
        s.score = matched(question_words, s.terms) + sum(matched(w, s.terms) for w in option_words.values())
    if not (neighbor_weight or rank_weight):
        return
    lexical = [s.score for s in sentences]
    for k, s in enumerate(sentences):
        beside = [lexical[j] for j in (k - 1, k + 1)
                  if 0 <= j < n and sentences[j].citation == s.citation]
        s.score = (lexical[k] + neighbor_weight * max(beside, default=0.0)) * (1 + rank_weight / (s.citation + 1))


def fuse_in_meaning(sentences: list[_Sentence], close: Sequence[float], rrf_k: float) -> None:
    """Each sentence's score becomes 1/(k + its lexical rank) (none without a lexical match) +
    1/(k + its rank in meaning); ties share the better rank."""
    lexical = [s.score for s in sentences]
    by_words = {k: r for r, k in enumerate(sorted(range(len(sentences)), key=lambda k: -lexical[k]))}
    by_meaning = {k: r for r, k in enumerate(sorted(range(len(sentences)), key=lambda k: -float(close[k])))}
    for k, s in enumerate(sentences):
        s.score = ((reciprocal_rank(by_words[k] + 1, rrf_k) if lexical[k] > 0 else 0.0)
                   + reciprocal_rank(by_meaning[k] + 1, rrf_k))


def compress(evidence: Evidence, question: str, options: Mapping[str, str] | None = None, *,
             budget_tokens: int = 350, count_tokens: TokenCount | None = None, neighbor_weight: float = 0.0,
             rank_weight: float = 0.0, join_headings: bool = False,
             equivalents: Mapping[str, str] | None = None,
             similarity: Callable[[str, list[str]], Sequence[float]] | None = None,
             rrf_k: float = 60.0, passage_slots: int = 0) -> Evidence:
    """The evidence cut down to its most question-related sentences within ``budget_tokens``.
    ``equivalents``: phrases of the question and what the sources also call them ("salt" →
    "sodium"; corpus/lay_vocabulary.py); a sentence naming either meets the phrase's last word.
    ``similarity`` (question, sentences) → each sentence's similarity in meaning (an embedder's
    cosine): when given, sentences are ranked by reciprocal-rank fusion (``rrf_k``) of the
    lexical ranking and the ranking in meaning, as hybrid retrieval fuses BM25 and dense — so
    "Because lithium is tied to sodium resorption …" (one question word, nearest in meaning) can
    outrank "… keep insulin levels steady …" (three question words) for a question on salt intake.
    A sentence sharing no word with the question and options gets the meaning's share only.

    ``passage_slots``: the first that many passages (retrieval's best) each keep their best
    sentence, after the options' slots: a top-ranked passage is never dropped whole because
    another passage repeats the question's words more often.

    The budget counts what the reader sees: each kept citation's header ``[n] (label) `` plus
    its sentences. Evidence already within budget is returned unchanged.
    """
    if not evidence.citations or evidence.token_count <= budget_tokens:
        return evidence
    if count_tokens is None:
        from medground.retrieve.pack import default_token_counter

        count_tokens = default_token_counter()
    tok = text_tokenizer()
    sentences = _sentences(evidence, count_tokens, tok.tokenize, join_headings)
    q_words = with_equivalents(tok, words_of(tok, question), equivalents or {})
    q_terms = terms_of(q_words)
    opt_words = {k: words_of(tok, v, q_terms) for k, v in (options or {}).items()}
    opt_terms = {k: terms_of(w) for k, w in opt_words.items()}
    score_sentences(sentences, q_words, opt_words, neighbor_weight=neighbor_weight, rank_weight=rank_weight)
    if similarity is not None and sentences:
        fuse_in_meaning(sentences, similarity(question, [s.text for s in sentences]), rrf_k)
    header_cost = {i: count_tokens(f"[{c.number}] ({c.label}) ") for i, c in enumerate(evidence.citations)}

    ranked = sorted(range(len(sentences)), key=lambda k: (-sentences[k].score, k))
    # One guaranteed slot per option: its best sentence, options in letter order.
    first: list[int] = []
    for terms in opt_terms.values():
        best = next((k for k in ranked if terms & sentences[k].terms and k not in first), None)
        if best is not None:
            first.append(best)
    for i in range(min(passage_slots, len(evidence.citations))):
        best = next((k for k in ranked if sentences[k].citation == i and sentences[k].score > 0), None)
        if best is not None and best not in first:
            first.append(best)
    order = first + [k for k in ranked if k not in first]

    chosen: set[int] = set()
    used_headers: set[int] = set()
    used = 0
    for k in order:
        s = sentences[k]
        if s.score <= 0:
            continue
        cost = s.tokens + 1 + (0 if s.citation in used_headers else header_cost[s.citation])
        if used + cost > budget_tokens:
            continue
        chosen.add(k)
        used_headers.add(s.citation)
        used += cost
    if not chosen:
        return evidence  # nothing matched the question at all: leave the reader the passages

    citations: list[Citation] = []
    for i, c in enumerate(evidence.citations):
        picked = sorted((sentences[k] for k in chosen if sentences[k].citation == i), key=lambda s: s.order)
        if not picked:
            continue
        parts = [picked[0].text]
        for prev, cur in zip(picked, picked[1:]):
            parts.append((GAP if cur.order != prev.order + 1 else " ") + cur.text)
        citations.append(Citation(
            number=c.number, chunk_id=c.chunk_id, book=c.book, chapter=c.chapter, section=c.section,
            title=c.title, text="".join(parts), score=c.score,
            char_start=c.char_start + picked[0].start if c.char_end > c.char_start else c.char_start,
            char_end=c.char_start + picked[-1].end if c.char_end > c.char_start else c.char_end,
        ))
    total = sum(count_tokens(f"[{c.number}] ({c.label}) {c.text}") for c in citations)
    return Evidence(citations=citations, token_count=total, budget=budget_tokens, queries=list(evidence.queries),
                    dropped=evidence.dropped + len(evidence.citations) - len(citations))
