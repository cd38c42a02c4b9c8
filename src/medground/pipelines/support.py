"""Does the evidence answer the question? Shared by the textbook and the consultation readers.

- ``passage_support``: one forward pass asks which numbered passage answers ("0" = none) and
  reads the probability of every number. Support = 1 - P("0"); the most probable passage is the
  one an answer should rest on. A threshold on support (fitted on a development split, never a
  prompt that pushes the model to abstain) decides whether to answer at all.
- ``claims_supported``: every sentence of an answer has most of its content terms in the text it
  cites (the check is lexical: the BM25 tokenizer's stems, stop words and framing words removed).
- ``unaddressed_terms``: the specific things a question asks about ("potassium salt substitutes")
  when a record mentions none of them — a record about the right drug and the right kind of fact
  that is silent on what was asked must not be quoted as the answer.
- ``quote``: an extractive answer, the supporting passage's sentences most related to the
  question, so every claim is the source's own words.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

from medground.llm.base import LLM
from medground.llm.scoring import scores_from_result
from medground.llm import prompts
from medground.schema import Citation, Evidence

CITATION_MARK = re.compile(r"\[\d+(?:\s*[,;]\s*\d+)*\]")


def cited_numbers(text: str) -> list[int]:
    """The passage numbers a text cites, in first-mention order: [1], [2][3], [1, 4]."""
    return list(dict.fromkeys(int(n) for c in CITATION_MARK.findall(text) for n in re.findall(r"\d+", c)))

# Words that frame an answer rather than claim anything ("the passage says patients may ...").
FRAMING = ("include includes including common commonly may can could cause causes listed list record entry "
           "entries database passage passages textbook patient patients consult doctor clinician pharmacist "
           "healthcare provider nurse take taking use used effect effects side adverse reaction reactions "
           "indication indications contraindication contraindications interaction interactions drug "
           "medication medicine following you your it its this these they their also should support supported "
           "supports according state states stated mention mentions mentioned therefore thus hence however because "
           "recommend recommended important")

# Words that ask rather than name what is asked about ("is it safe to take it with food?", "how
# much", "I started it last week"): with FRAMING and English stop words they leave the specific
# terms of a question.
ASKING = ("could would might must may shall ok okay fine alright safe safely harm harmful bad good "
          "ask asking question wonder wondering know tell please help need want get got make makes "
          "dose doses dosage dosing much many often long time times day days daily week weeks month "
          "months year years mg milligram milligrams tablet tablets pill pills start started starting "
          "stop stopped stopping still currently already prescribed prescription together combine "
          "combined mix mixing food foods meal meals eat eating drink drinking normal usual "
          "feel feeling lately recently since ago last next morning night blood pressure one made brand "
          "generic version work works working worked person people someone")


@dataclass(slots=True)
class Support:
    score: float | None  # 1 - P(no passage answers); None when no passage number was among the alternatives
    passage: Citation | None  # the most probable answering passage
    probs: dict[str, float]  # over "0" and the passage numbers

    def below(self, threshold: float | None) -> bool:
        return threshold is not None and self.score is not None and self.score < threshold


def passage_support(llm: LLM, evidence: Evidence, prompt: str, **values: str) -> tuple[Support, object]:
    """(Support, the ChatResult for accounting) from one forward pass of ``prompt``.

    ``prompt`` is a template that shows ``$evidence`` (numbered passages) and asks for the number
    of the passage that answers, or 0. One pass only: a generated fallback gives no probability.
    """
    labels = ["0", *(str(c.number) for c in evidence.citations)]
    result = llm.chat(prompts.messages(prompt, evidence=evidence.render(), **values), max_tokens=1,
                      temperature=0.0, top_logprobs=20)
    scores = scores_from_result(result, labels)
    if scores is None or not evidence.citations:
        return Support(None, None, {}), result
    best = max(labels[1:], key=lambda x: scores.probs[x])
    passage = next(c for c in evidence.citations if str(c.number) == best)
    return Support(1.0 - scores.probs["0"], passage, dict(scores.probs)), result


# Where a sentence may be cut after its main claim: only before a non-restrictive "which"
# clause, which adds to the claim before it and never carries the claim itself. Not before
# "and" or ";" (the second clause is often the answer: "X is an allergy, and its treatment is
# Y"), nor "but", "unless", "however" (cutting those turns "safe, but not in pregnancy" into "safe").
_CLAUSE_BREAK = re.compile(r",\s+(?=which\s)")


def answer_sentences(answer: str) -> list[str]:
    """The answer's sentences, stripped, as every claim check splits them (quotation marks blanked)."""
    from medground.corpus.sentences import split_sentences

    return [s.strip() for s in split_sentences(answer.replace("\u201c", " ").replace("\u201d", " "))]


def split_supported(answer: str, source_text: str, *, exclude: Sequence[str] = (), min_share: float = 0.7,
                    clauses: bool = False) -> tuple[list[str], list[str]]:
    """(sentences of ``answer`` with ≥ ``min_share`` of their content terms in ``source_text``,
    the sentences without). Citations stay on the sentences; the check ignores them.

    The terms of ``exclude`` (the question, the drug's names) and of ``FRAMING`` are ignored:
    restating the question or naming the kind of fact asked about is no claim. A sentence with no
    content term left ("Consult your doctor.") makes no claim and is kept.

    With ``clauses``, an unsupported sentence keeps its longest supported part before a ", which"
    clause that makes a claim ("X is epinephrine, which is inhaled." → "X is epinephrine."); the
    clauses cut off, with their citations, are reported among the dropped.
    """
    from medground.index.text import text_tokenizer

    tok = text_tokenizer()
    source = set(tok.tokenize(source_text))
    ignore = {t for text in (*exclude, FRAMING) for t in tok.tokenize(text)}

    def content(text: str) -> list[str]:
        return [t for t in tok.tokenize(CITATION_MARK.sub(" ", text)) if t not in ignore]

    def supported(terms: list[str]) -> bool:
        return not terms or sum(t in source for t in terms) / len(terms) >= min_share

    kept, dropped = [], []
    for sentence in answer_sentences(answer):
        if supported(content(sentence)):
            kept.append(sentence)
            continue
        lead = _leading_clauses(sentence, content, supported) if clauses else None
        if lead is None:
            dropped.append(sentence)
        else:
            kept.append(lead[0])
            dropped.append(lead[1])
    return kept, dropped


def _leading_clauses(sentence: str, content, supported) -> tuple[str, str] | None:
    """(the longest supported head before a ", which" clause that makes a claim, closed with a full
    stop; the rest), or None. A citation of the part cut off stays with it: it may cite what the
    head never claimed."""
    breaks = [m.start() for m in _CLAUSE_BREAK.finditer(sentence)
              if sentence.count("[", 0, m.start()) == sentence.count("]", 0, m.start())]  # not inside [n]
    for cut in reversed(breaks):
        head = sentence[:cut].rstrip(" ,")
        terms = content(head)
        if terms and supported(terms):
            return f"{head}.", sentence[cut:].lstrip(" ,")
    return None


def without_citations(sentence: str) -> str:
    """The sentence as a claim: its [n] marks gone, with no space left before punctuation."""
    return re.sub(r"\s+([.,;:!?])", r"\1", " ".join(CITATION_MARK.sub(" ", sentence).split())).strip(" :;")


def first_claim(answer: str, *, exclude: Sequence[str] = ()) -> str | None:
    """The answer's first sentence that makes a claim (as ``split_supported`` splits and strips
    it): what a generated answer says first is its answer, what follows supports it."""
    return next((s for s in answer_sentences(answer) if makes_claim(s, exclude=exclude)), None)


# All a citation-only sentence may say ("This is supported by passage [3].", "See [2].").
_CITING_WORDS = frozenset("this that it is are was as see also supported support supports shown stated states "
                          "according to by in the a passage passages source sources evidence based on and "
                          "confirm confirmed confirms".split())


def fold_citations(sentences: Sequence[str]) -> list[str]:
    """Sentences that only cite ("This is supported by passage [3].") give their citations to the
    sentence before them: "X is epinephrine [3]." reads as the answer it is. Only sentences made of
    citing words fold: "It is not recommended in pregnancy [2]." says something and stays."""
    out: list[str] = []
    for sentence in sentences:
        cites = CITATION_MARK.findall(sentence)
        words = re.findall(r"[a-z]+", CITATION_MARK.sub(" ", sentence).lower())
        if out and cites and all(w in _CITING_WORDS for w in words):
            head = out[-1].rstrip()
            stop = head[-1] if head and head[-1] in ".!?" else ""
            head = head[: len(head) - len(stop)].rstrip()
            have = set(cited_numbers(head))
            new = [n for n in cited_numbers(sentence) if n not in have]  # by number: [1] ~ [1, 2]
            out[-1] = head + "".join(f" [{n}]" for n in new) + (stop or ".")
            continue
        out.append(sentence)
    return out


# A justification that hands over to restated evidence: "This is supported by passage [2], which
# states that …". Only a head that says *supported* / *confirmed* counts: "Passage [2] states that
# …" as often brings a new fact ("… that it must not be given intravenously in children").
_RESTATES = re.compile(r",?\s+(?:which|where)\b|,?\s+that\s(?=\w+\s)|:\s")
_JUSTIFYING = frozenset("support supported supports confirm confirmed confirms".split())
_ASKED_KIND = re.compile(r"\b(?:which|what)\s+([A-Za-z][\w-]*)", re.IGNORECASE)


def drop_restatements(sentences: Sequence[str], *, question: str = "",
                      passages: dict[int, str] | None = None) -> tuple[list[str], list[str]]:
    """(the sentences with each restatement of evidence cut to its citing head, what was cut).

    After the answer's first claim, "This is supported by passage [2], which states that …" says
    again what the cited passage says (the reader shows the passage itself), and the small model's
    restatement is where it wanders: it restated a tetanus passage for a botulinum question and
    named glycine, another option. Cut only when the restated clause names no word of
    ``question`` that the answer so far lacks (else it may be the answer itself), the kind asked
    for aside ("which *neurotransmitter*"). The head's citation then folds into the claim
    (``fold_citations``), but only for a passage of ``passages`` (number -> heading and text, as
    the reader saw it) that supports that claim: a wandering restatement's passage is not the
    claim's evidence."""
    from medground.index.text import text_tokenizer

    tok = text_tokenizer()
    # "which neurotransmitter …?": the asked-for type is named by the question, not by the answer
    # (acetylcholine), so a restatement naming it is no sign that it carries the answer
    kinds = {t for m in _ASKED_KIND.finditer(question) for t in tok.tokenize(m.group(1))}
    asked = set(tok.tokenize(question)) - _asking_stems() - kinds
    out: list[str] = []
    cut: list[str] = []
    claim = None  # the last claim-making sentence kept
    for sentence in sentences:
        m = _RESTATES.search(sentence)
        head = sentence[:m.start()].rstrip(" ,") if m else ""
        words = re.findall(r"[a-z]+", CITATION_MARK.sub(" ", head).lower())
        if claim is not None and m and head.endswith("]") and _JUSTIFYING & set(words) \
                and all(w in _CITING_WORDS for w in words):
            clause = sentence[m.start():].lstrip(" ,:")
            said = set(tok.tokenize(" ".join(out)))
            if not (asked & set(tok.tokenize(clause))) - said:
                cut.append(clause)
                keep = [n for n in cited_numbers(head) if passages is None or
                        (n in passages and not split_supported(claim, passages[n], exclude=[question])[1])]
                if keep:
                    out.append("This is supported by " + "".join(f"[{n}]" for n in keep) + ".")
                continue
        if makes_claim(sentence, exclude=[question] if question else ()):
            claim = sentence
        out.append(sentence)
    return out, cut


def makes_claim(sentence: str, *, exclude: Sequence[str] = ()) -> bool:
    """The sentence has a content term left once the question's and framing words are ignored."""
    return bool(split_supported(sentence, "", exclude=exclude)[1])


def attribute(answer: str, passages: Sequence[Citation], *, exclude: Sequence[str] = (), clauses: bool = False
              ) -> tuple[Citation, list[str], list[str]] | None:
    """An answer that cites nothing: (the passage that supports most of its claim-making sentences
    (the earlier-ranked on a tie), those sentences, the sentences it does not support), or None when
    no passage supports any claim. The small reader often answers right and forgets the [n]; the
    passage it used is then found from what it said, not guessed from the support pass."""
    best: tuple[Citation, list[str], list[str]] | None = None
    for passage in passages:
        kept, dropped = split_supported(answer, f"{passage.label} {passage.text}", exclude=exclude, clauses=clauses)
        claims = [k for k in kept if makes_claim(k, exclude=exclude)]
        if claims and (best is None or len(claims) > len(best[1])):
            best = (passage, claims, dropped)
    return best


def claims_supported(answer: str, source_text: str, *, exclude: Sequence[str] = (), min_share: float = 0.7) -> bool:
    """Every sentence of ``answer`` is supported by ``source_text`` (see ``split_supported``)."""
    return not split_supported(answer, source_text, exclude=exclude, min_share=min_share)[1]


def quote(passage: Citation, question: str, count_tokens: Callable[[str], int], budget_tokens: int) -> str:
    """The sentences of ``passage`` most related to ``question`` within ``budget_tokens``."""
    from medground.retrieve.compress import compress

    one = Evidence(citations=[passage], token_count=count_tokens(passage.text) + 16, budget=0)
    kept = compress(one, question, budget_tokens=budget_tokens, count_tokens=count_tokens)
    return kept.citations[0].text if kept.citations else passage.text


def quoted_answer(passage: Citation, quoted: str) -> str:
    """A reply that could state no answer sentence: it says so, then quotes (reading/reply.py)."""
    from medground.reading.reply import closest_passage

    return closest_passage(passage.label, passage.number, quoted)


def asking_sentences(turn: str) -> str:
    """The sentences of a patient's turn that ask (end in "?"); all of it when none does."""
    from medground.corpus.sentences import split_sentences

    asks = [x for x in split_sentences(turn) if x.strip().endswith("?")]
    return " ".join(asks) if asks else turn


@functools.cache
def _asking_stems() -> frozenset[str]:
    """Stems of the stop, framing and asking words (tokenized once: the check runs per entry)."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    from medground.index.text import text_tokenizer

    tok = text_tokenizer()
    return frozenset(t for text in (FRAMING, ASKING, " ".join(STOPWORDS_EN_PLUS)) for t in tok.tokenize(text))


def unaddressed_terms(question: str, record: str, *, exclude: Sequence[str] = (),
                      vocabulary: Collection[str] | None = None) -> list[str]:
    """The specific words of ``question`` (as written) when ``record`` mentions none of them; []
    when it mentions one, or when the question names nothing specific ("what is the dose?").

    Specific = not a stop, framing or asking word, not a number, not in ``exclude`` (the drug's
    names) and, with ``vocabulary`` (stems of every record of the source), a word the source uses
    somewhere: a typo ("wht") or a word no record ever uses is no evidence either way.
    Matching is by the BM25 tokenizer's stems ("coughing" ~ "cough").
    """
    from medground.index.text import text_tokenizer

    tok = text_tokenizer()
    ignore = _asking_stems() | {t for text in exclude for t in tok.tokenize(text)}
    record_terms = set(tok.tokenize(record))
    specific: dict[str, str] = {}  # stem -> the word as written
    for word in re.findall(r"[^\W\d_][\w'-]*", question):
        for stem in tok.tokenize(word):
            if stem not in ignore and not stem.isdigit() and len(stem) > 1 and \
                    (vocabulary is None or stem in vocabulary):
                specific.setdefault(stem, word)
    if not specific or any(stem in record_terms for stem in specific):
        return []
    return list(specific.values())


def vocabulary(texts: Iterable[str]) -> frozenset[str]:
    """The stems ``unaddressed_terms`` matches with, over a source's records."""
    from medground.index.text import text_tokenizer

    tok = text_tokenizer()
    return frozenset(t for text in texts for t in tok.tokenize(text))
