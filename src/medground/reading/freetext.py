"""Free-text reading: an answer from numbered passages with [n] citations, its claims checked
against what they cite, or an explicit insufficient-evidence outcome."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from medground.llm import prompts
from medground.llm.base import LLM
from medground.llm.scoring import yes_probability
from medground.reading.reader import ReaderSettings, Tally, chat_text
from medground.reading.citations import cited_numbers, fold_citations, plain_citations, with_marks, without_citations
from medground.schema import Answer, Citation, ClaimJudgement, Evidence, FreeTextDetail, Question


INSUFFICIENT = "INSUFFICIENT EVIDENCE"


def with_support_quote(answer: str, passage: Citation, *, exclude: str, budget: int) -> str:
    """The checked answer, then the cited passage's words that support its first claim
    (reading/reply.py: one reply shape, shared with the consultation reader)."""
    from medground.reading import support as sup
    from medground.reading.reply import answer_with_quote, supporting_sentence, without_repeats

    # after the checks (which read the model's own marks): "…, according to passage [2]." → "… [2]."
    answer = without_repeats(plain_citations(answer))
    if not cited_numbers(answer):  # its citation went with a cut restatement: the answer cites what it rests on
        answer = with_marks(answer, [passage.number])
    claim = sup.first_claim(answer, exclude=[exclude]) or answer
    quote = supporting_sentence(passage.text, claim, max_words=max(8, budget * 2 // 3))  # ~1.5 tokens a word
    return answer_with_quote(answer, passage.label, passage.number, quote)


def judge_first_claim(llm: LLM, text: str, question: str, cited: Sequence[Citation], kept: list[str],
                      dropped: list[str], settings: ReaderSettings, tally: Tally
                      ) -> tuple[list[str], list[str], ClaimJudgement | None]:
    """The LLM claim judge decides the first claim's fate against the passages it cites (all the
    cited ones when it cites none itself); the other sentences keep the lexical verdict."""
    from medground.reading import support as sup
    from medground.reading.claims import LLMClaimJudge

    first = sup.first_claim(text, exclude=[question])
    if first is None:
        return kept, dropped, None
    own = set(cited_numbers(first))
    passages = [c for c in cited if c.number in own] or list(cited)
    claim = without_citations(first)
    with tally.stage("claim_check"):
        p = LLMClaimJudge(llm).p_supported(claim, "\n\n".join(f"{c.label}\n{c.text}" for c in passages))
    tally.tokens["llm_calls"] += 1
    supported = p is not None and p >= settings.freetext_claim_threshold
    judged = ClaimJudgement(p=None if p is None else round(p, 4), supported=supported, lexical=first in kept)
    if supported and first in dropped:
        return [first, *kept], [d for d in dropped if d != first], judged
    if not supported and first in kept:
        return [k for k in kept if k != first], [first, *dropped], judged
    return kept, dropped, judged


def free_text_answer(llm: LLM, question: Question, evidence: Evidence, settings: ReaderSettings,
                     tally: Tally, *, count_tokens: Callable[[str], int] | None = None,
                     absent_entities: Callable[[Sequence[Citation]], list[str]] | None = None,
                     detail: FreeTextDetail | None = None) -> Answer:
    """Free-text mode: an answer from the numbered passages with [n] citations, or an explicit
    insufficient-evidence outcome. Citations that name no passage are reported, not kept.

    With a support check (``freetext_abstain_below`` set, or an extractive/checked answer) one
    forward pass first asks which passage answers; below the threshold the reader abstains.
    ``absent_entities`` (reading/entities.py): the question's specific entities that the given
    passages never name; when the passages an answer cites miss one, the reader says what they
    are about instead of answering a near-miss entity (the answer is kept in the detail).
    ``detail``: what the pipeline adds (imedrag's follow-ups); the reader fills in the rest."""
    answer = _free_text_answer(llm, question, evidence, settings, tally, count_tokens=count_tokens,
                               detail=detail or FreeTextDetail())
    said = answer.detail if isinstance(answer.detail, FreeTextDetail) else FreeTextDetail()
    # a quote the LLM read as not answering declines in general words; when its passage misses
    # the question's entity, saying so (and what the passages are about) is the better reason
    declined_quote = answer.outcome != "answered" and said.quote_answers is not None
    if absent_entities is None or (answer.outcome != "answered" and not declined_quote):
        return answer  # a reply that already declines keeps its own words
    rests_on = ([c for c in answer.citations if c.number == said.supporting_passage] or answer.citations[:1]
                if declined_quote else answer.citations)
    absent = absent_entities(rests_on) if rests_on else []
    if not absent:
        return answer
    topics = list(dict.fromkeys(c.section or c.chapter or c.title for c in rests_on))[:2]
    # of the passages the answer rested on, not of all those found nor of the books: another
    # passage shown may name it (the 1.5B cited the wrong one), or one retrieval missed
    marks = ", ".join(f"[{c.number}]" for c in rests_on)
    many = len(rests_on) > 1
    text = (f"The passage{'s' if many else ''} this answer would rest on ({marks}) "
            f"{'do' if many else 'does'} not mention {' or '.join(absent)}; {'they are' if many else 'it is'} about "
            f"{' and '.join(topics)}, so no answer is given from {'them' if many else 'it'}.")
    return Answer(outcome="insufficient_evidence", text=text, citations=rests_on,
                  detail=replace(said, entity_missing=absent, withheld=None if declined_quote else answer.text))


def _free_text_answer(llm: LLM, question: Question, evidence: Evidence, settings: ReaderSettings,
                      tally: Tally, *, count_tokens: Callable[[str], int] | None, detail: FreeTextDetail) -> Answer:
    from medground.reading import support as sup

    if not evidence.citations:
        return Answer(outcome="insufficient_evidence", text="No passage was retrieved for this question.",
                      detail=detail)
    q = question.question.strip()
    d = replace(detail, passages_shown=len(evidence.citations))
    found: sup.Support | None = None
    below_gate_quotes = settings.freetext_below_gate == "quote" and settings.freetext_quote_min is not None
    if settings.freetext_abstain_below is not None or settings.freetext_answer != "generate":
        with tally.stage("support"):
            found, result = sup.passage_support(llm, evidence, "passage_support", question=q)
        tally.count(result)
        d = replace(d, support=found.score, supporting_passage=found.passage.number if found.passage else None)
        if found.below(settings.freetext_abstain_below) and not below_gate_quotes:
            return Answer(outcome="insufficient_evidence", citations=evidence.citations, detail=d,
                          text="The passages found do not answer this question; the closest are listed.")

    def quoted(reason: str, d: FreeTextDetail) -> Answer:
        passage = (found.passage if found else None) or evidence.citations[0]
        count = count_tokens or (lambda t: len(t.split()))
        text = sup.quote(passage, q, count, settings.freetext_quote_tokens,
                         join_headings=settings.evidence_join_headings)
        d = replace(d, extractive=True, quoted=text, quote_reason=reason)
        p_answers = None
        if settings.freetext_quote_min is not None and settings.freetext_answer != "extractive":
            with tally.stage("quote_check"):
                judged = llm.chat(prompts.messages("quote_answers", question=q, passage=text),
                                  max_tokens=1, temperature=0.0, top_logprobs=20)
            tally.count(judged)
            p_answers = yes_probability(judged)
            d = replace(d, quote_answers=None if p_answers is None else round(p_answers, 4))
            if p_answers is None or p_answers < settings.freetext_quote_min:
                return Answer(outcome="insufficient_evidence", citations=evidence.citations, detail=d,
                              text="The passages found do not answer this question; the closest are listed.")
        return Answer(outcome="answered", citations=[passage], detail=d,
                      text=sup.quoted_answer(passage, text, judged_answering=p_answers is not None))

    if settings.freetext_answer == "extractive":
        return quoted("extractive mode", d)
    if found is not None and found.below(settings.freetext_abstain_below):  # below_gate_quotes
        return quoted("no passage reaches the support threshold", d)
    msgs = prompts.messages(settings.freetext_prompt, evidence=evidence.render(), question=q)
    with tally.stage("read"):
        text = chat_text(llm, msgs, tally, max_tokens=settings.freetext_max_tokens)
    by_number = {c.number: c for c in evidence.citations}
    numbers = cited_numbers(text)
    cited = [by_number[n] for n in numbers if n in by_number]
    d = replace(d, dangling_citations=[n for n in numbers if n not in by_number])
    if INSUFFICIENT in text.upper() or not text:
        return Answer(outcome="insufficient_evidence", text=text, citations=evidence.citations, detail=d)
    if settings.freetext_answer == "checked":
        d = replace(d, generated=text)

        def attributed(answer_text: str) -> Answer:
            """The answer read against every passage shown: the one that supports most of its claims."""
            found_in = sup.attribute(answer_text, evidence.citations, exclude=[q], clauses=True)
            if found_in is None:
                return quoted("generated answer cites no passage and no passage supports it",
                              replace(d, generated_supported=False))
            passage, claims, dropped = found_in
            said = replace(d, generated_supported=False, attributed_to=passage.number, dropped_sentences=dropped or None)
            if sup.first_claim(answer_text, exclude=[q]) in dropped:
                return quoted("the generated answer's first claim is not supported by any passage", said)
            reply = with_support_quote(with_marks(" ".join(claims), [passage.number]), passage, exclude=q,
                                       budget=settings.freetext_support_tokens)
            return Answer(outcome="answered", text=reply, citations=[passage], detail=said)

        if not cited:
            return attributed(text)
        # what the reader saw of each passage: its heading (book / chapter / section) and text
        kept, dropped = sup.split_supported(text, " ".join(f"{c.label} {c.text}" for c in cited), exclude=[q],
                                            clauses=True)
        if settings.freetext_recite and sup.first_claim(text, exclude=[q]) in dropped:
            # the 1.5B often cites the passage after the one it read ("8 years of age [4]" where [1]
            # says it): a first claim another passage shown supports is cited to that one
            recited = attributed(without_citations(text))
            if recited.outcome == "answered":
                return recited
        if settings.freetext_claim_check == "llm" or (settings.freetext_claim_check == "rescue"
                                                      and sup.first_claim(text, exclude=[q]) in dropped):
            kept, dropped, judged = judge_first_claim(llm, text, q, cited, kept, dropped, settings, tally)
            d = replace(d, first_claim_judged=judged)
        d = replace(d, generated_supported=not dropped, dropped_sentences=dropped or None)
        if not any(sup.makes_claim(k, exclude=[q]) for k in kept):  # no claim left
            return quoted("no sentence of the generated answer is supported by the passages it cites", d)
        if sup.first_claim(text, exclude=[q]) in dropped:
            # its answer is gone: what is left only restates the evidence ("passage [2] states
            # that …"), which would read as an answer that never names what was asked
            return quoted("the generated answer's first claim is not supported by the passages it cites", d)
        kept, restated = sup.drop_restatements(kept, question=q, passages={c.number: f"{c.label} {c.text}"
                                                                            for c in cited})
        d = replace(d, restatements_cut=restated or None)
        text = " ".join(fold_citations(kept))
        cited = [by_number[n] for n in cited_numbers(text) if n in by_number] or cited
        text = with_support_quote(text, cited[0], exclude=q, budget=settings.freetext_support_tokens)
    if not cited:
        # An answer that cites nothing is not grounded: say so, and show no evidence as if it had
        # been used (the retrieved passages stay in the detail for whoever wants to look).
        d = replace(d, uncited=True, retrieved_not_cited=[c.label for c in evidence.citations])
    if settings.freetext_answer == "generate":
        text = plain_citations(text)
    return Answer(outcome="answered", text=text, citations=cited, detail=d)
