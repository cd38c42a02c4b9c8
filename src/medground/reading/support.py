"""Does the evidence answer the question? Shared by the textbook and the consultation readers.

- ``passage_support``: one forward pass asks which numbered passage answers ("0" = none) and
  reads the probability of every number. Support = 1 - P("0"); the most probable passage is the
  one an answer should rest on. A threshold on support (fitted on a development split, never a
  prompt that pushes the model to abstain) decides whether to answer at all.
- ``claims_supported``: every sentence of an answer has most of its content terms in the text it
  cites (the check is lexical: the BM25 tokenizer's stems, stop words and framing words removed).
- ``reading/addressing.py`` (the extractive consultation variant's address check) and
  ``reading/citations.py`` (citation marks) were split out of this module.
- ``quote``: an extractive answer, the supporting passage's sentences most related to the
  question, so every claim is the source's own words.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from medground.llm.base import LLM
from medground.llm.scoring import scores_from_result
from medground.llm import prompts
from medground.reading.citations import CITATION_MARK, CITING_WORDS, answer_sentences, cited_numbers
from medground.schema import Citation, Evidence

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

# A causal connective: what follows it is the claimed cause, the answer to a "why" question. The
# whole-sentence share can pass on the effect and a supported aside alone ("X happens because
# <unstated cause>, which can lead to <the cited sentence>"), so the cause is checked by itself.
_CAUSE = re.compile(r"\b(?:because(?:\s+of)?|due\s+to|caused\s+by|as\s+a\s+result\s+of|owing\s+to|"
                    r"results?\s+from|resulting\s+from)\s+", re.IGNORECASE)
_CAUSE_END = re.compile(r",\s+(?:which|and|but|so)\s|;|\.(?:\s|$)|\[\d")


def stated_causes(sentence: str) -> list[str]:
    """The causes a sentence claims: the words after each causal connective, up to the clause's end
    (a ", which" aside, a ";", the sentence's full stop or its citation)."""
    causes = []
    for m in _CAUSE.finditer(sentence):
        rest = sentence[m.end():]
        end = _CAUSE_END.search(rest)
        causes.append(rest[:end.start()] if end else rest)
    return causes


@functools.cache
def framing_stems() -> frozenset[str]:
    """Stems of ``FRAMING`` (tokenized once: the claim check runs per sentence and passage)."""
    from medground.index.text import text_tokenizer

    return frozenset(text_tokenizer().tokenize(FRAMING))


@functools.cache
def asking_stems() -> frozenset[str]:
    """Stems of the stop, framing and asking words (tokenized once: the check runs per entry)."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    from medground.index.text import text_tokenizer

    tok = text_tokenizer()
    return frozenset(t for text in (FRAMING, ASKING, " ".join(STOPWORDS_EN_PLUS)) for t in tok.tokenize(text))


def split_supported(answer: str, source_text: str, *, exclude: Sequence[str] = (), min_share: float = 0.7,
                    clauses: bool = False) -> tuple[list[str], list[str]]:
    """(sentences of ``answer`` with ≥ ``min_share`` of their content terms in ``source_text``,
    the sentences without). Citations stay on the sentences; the check ignores them.

    The terms of ``exclude`` (the question, the drug's names) and of ``FRAMING`` are ignored:
    restating the question or naming the kind of fact asked about is no claim. A sentence with no
    content term left ("Consult your doctor.") makes no claim and is kept. A cause the sentence
    states ("… because Y", "… due to Y"; ``stated_causes``) must also reach ``min_share`` on its
    own, the question's words counted.

    With ``clauses``, an unsupported sentence keeps its longest supported part before a ", which"
    clause that makes a claim ("X is epinephrine, which is inhaled." → "X is epinephrine."); the
    clauses cut off, with their citations, are reported among the dropped.
    """
    from medground.index.text import text_tokenizer

    tok = text_tokenizer()
    source = set(tok.tokenize(source_text))
    framing = framing_stems()
    ignore = framing.union(*(tok.tokenize(text) for text in exclude))

    def content(text: str) -> list[str]:
        return [t for t in tok.tokenize(CITATION_MARK.sub(" ", text)) if t not in ignore]

    def share_supported(terms: list[str]) -> bool:
        return not terms or sum(t in source for t in terms) / len(terms) >= min_share

    def cause_terms(cause: str) -> list[str]:
        # the question's words count here: a cause the question proposes must be the source's too
        return [t for t in tok.tokenize(CITATION_MARK.sub(" ", cause)) if t not in framing]

    def supported(text: str) -> bool:
        return share_supported(content(text)) and all(share_supported(cause_terms(c)) for c in stated_causes(text))

    kept, dropped = [], []
    for sentence in answer_sentences(answer):
        if supported(sentence):
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
        if content(head) and supported(head):
            return f"{head}.", sentence[cut:].lstrip(" ,")
    return None


def first_claim(answer: str, *, exclude: Sequence[str] = ()) -> str | None:
    """The answer's first sentence that makes a claim (as ``split_supported`` splits and strips
    it): what a generated answer says first is its answer, what follows supports it."""
    return next((s for s in answer_sentences(answer) if makes_claim(s, exclude=exclude)), None)


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
    asked = set(tok.tokenize(question)) - asking_stems() - kinds
    out: list[str] = []
    cut: list[str] = []
    claim = None  # the last claim-making sentence kept
    for sentence in sentences:
        m = _RESTATES.search(sentence)
        head = sentence[:m.start()].rstrip(" ,") if m else ""
        words = re.findall(r"[a-z]+", CITATION_MARK.sub(" ", head).lower())
        if claim is not None and m and head.endswith("]") and _JUSTIFYING & set(words) \
                and all(w in CITING_WORDS for w in words):
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


def quote(passage: Citation, question: str, count_tokens: Callable[[str], int], budget_tokens: int,
          *, join_headings: bool = False) -> str:
    """The sentences of ``passage`` most related to ``question`` within ``budget_tokens``
    (``join_headings``: a heading line only with the sentence under it, as compression does)."""
    from medground.retrieve.compress import compress

    one = Evidence(citations=[passage], token_count=count_tokens(passage.text) + 16, budget=0)
    kept = compress(one, question, budget_tokens=budget_tokens, count_tokens=count_tokens,
                    join_headings=join_headings)
    return kept.citations[0].text if kept.citations else passage.text


def quoted_answer(passage: Citation, quoted: str, *, judged_answering: bool = False) -> str:
    """A reply that could state no answer sentence: it says so, then quotes (reading/reply.py)."""
    from medground.reading.reply import closest_passage

    return closest_passage(passage.label, passage.number, quoted, judged_answering=judged_answering)


