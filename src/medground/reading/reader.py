"""The reader's settings and accounting: how a reader reads (prompt, scoring, debiasing, free-text
mode and checks) and what one answer cost (per-stage seconds, tokens, LLM calls)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from medground.llm.base import LLM, ChatResult, Message
from medground.reading.claims import LLM_THRESHOLD
from medground.schema import Answer, Evidence, Query

if TYPE_CHECKING:
    from medground.retrieve.engine import RetrievalEngine


class ReaderSettings(BaseModel):
    """How the final answer is read: the study's zero-shot vs chain-of-thought axis."""

    model_config = ConfigDict(extra="forbid")

    prompt: Literal["zeroshot", "cot"] = "zeroshot"
    # zero-shot: "logprob" reads the option letters' log-probabilities in one forward pass;
    # "generate" writes a short answer and parses it. Chain-of-thought always generates.
    # "verify" asks of each option on its own whether it is correct (P(yes) over one cached
    # prefix): no letters are shown, so no letter bias can enter.
    scoring: Literal["logprob", "generate", "verify"] = "logprob"
    calibration: dict[str, float] | None = Field(
        None, description="per-letter mean log-probability to subtract (see llm.scoring.calibrate)"
    )
    # Small models prefer some letters whatever the content, and evidence in the prompt can
    # amplify that. "permute" scores the letters once per cyclic shift of the option texts and
    # averages per option (the shifts share the evidence and question as a cached prefix).
    debias: Literal["none", "permute"] = "none"
    permutations: int | None = Field(None, ge=1, description="permute: shifts to use (default: one per option)")
    # The shifts repair a letter preference the reader shows when unsure; a first pass that puts
    # at least this much on one option is taken as it is (each shift skipped saves ~1 s on 2 cores).
    permute_stop_at: float | None = Field(None, gt=0.0, le=1.0,
                                          description="permute: a first pass this sure ends the shifts")
    # Compress evidence to the sentences most related to the question and options
    # (retrieve.compress) within this many tokens; None = read the packed passages whole.
    evidence_tokens: int | None = Field(None, ge=32)
    # A free-text question's budget, when it differs (None: ``evidence_tokens``): 250 tokens
    # serve a letter choice as well as 350, but a free-text reply then abstains more often
    # (dev new-chapter items: wrong abstention 2 → 6 of 24; docs/benchmarks.md, session 22).
    freetext_evidence_tokens: int | None = Field(None, ge=32)
    # Compression context (retrieve.compress): a sentence also scores this share of its best
    # neighbour's score, and sentences of passage i are weighted 1 + rank_weight / i.
    evidence_neighbor_weight: float = Field(0.0, ge=0.0)
    evidence_rank_weight: float = Field(0.0, ge=0.0)
    # A heading line ("Salt Substitutes") is kept only with the sentence under it, never alone.
    evidence_join_headings: bool = False
    # The question's plain words also meet what the sources call them when the evidence is cut to
    # its closest sentences ("salt" → "sodium", "shingles" → "herpes zoster": mutual pairs of the
    # lay vocabulary mined from MedlinePlus and MedQuAD, corpus/lay_vocabulary.py).
    evidence_lay_terms: bool = False
    # How the evidence's sentences are ranked for compression: by the question's and options'
    # words ("lexical"), or by reciprocal-rank fusion of that ranking and the sentences' similarity
    # in meaning to the question from the dense retriever's embedder ("rrf", k = 60).
    evidence_ranking: Literal["lexical", "rrf"] = "lexical"
    # Weigh the grounded option scores against the same reader's closed-book ones (one more read,
    # no evidence): argmax of w·log p(option | evidence) + (1 − w)·log p(option | none). 1.0 =
    # the evidence alone; below 1 the prior tempers the evidence (docs/reports/grounding,
    # "evidence_prior_mixture"); above 1 the evidence is contrasted with the prior — context-aware
    # decoding (Shi et al. 2023): what the evidence adds counts, what the model believed without it
    # counts against (benchmarks/rewording.py contrast).
    evidence_weight: float = Field(1.0, ge=0.0, le=3.0)
    # Multiple choice, read per option (reading/options.py): retrieve with the question alone and
    # with each option joined to it, fused, so every option can bring its own passage ...
    option_queries: bool = False
    # An extra query: the question followed by the other names of its specific entities
    # (reading/entities.py: MedlinePlus "also called", MedQuAD focus names, the medicine
    # database's generic and brand names), so "Tylenol" also finds the book's "acetaminophen".
    # Needs the entity check's data (``freetext_entity_max_df`` names what is specific).
    synonym_query: bool = False
    # Free text: one more query, the question with what the consumer-health sources also call its
    # lay phrases ("pee" → urinate; corpus/lay_vocabulary.py), so the book's clinical words are found.
    lay_query: bool = False
    # Free text: a generated first claim its cited passages do not support, but another passage
    # shown does, is cited to that one (as an answer that cites nothing is) instead of declined.
    freetext_recite: bool = False
    # ... and weigh the letter read against a per-option check that shows no letters (P(yes)
    # that option X is correct, over one cached prefix): w·log p_check + (1 − w)·log p_letters.
    check_weight: float = Field(0.0, ge=0.0, le=1.0)
    # Multiple choice: of two opposite-polarity options ("Hyperkalemia" / "Hypokalemia") of which
    # the evidence names exactly one, the named one ranks first (reading/options.evidence_decides_twins).
    twin_evidence: bool = False
    cot_max_tokens: int = Field(384, ge=16)
    freetext_max_tokens: int = Field(160, ge=16)
    # The answer's prompt: "freetext" (its own system line and framing), or one that opens with the
    # support check's very words (system, passages, question) and asks for the answer after them,
    # so llama.cpp reuses the passages it has just read for the check instead of reading them again.
    freetext_prompt: Literal["freetext", "freetext_after_support"] = "freetext"
    # Free text. "generate": an answer citing passages as [n]. "extractive": the sentences of the
    # supporting passage most related to the question, quoted. "checked": generate, then check
    # every sentence against the passages it cites (pipelines.support.split_supported): the
    # unsupported ones are dropped (and reported), and when no claim is left the supporting
    # passage is quoted instead.
    freetext_answer: Literal["generate", "extractive", "checked"] = "generate"
    # Abstain when 1 - P(no passage answers) falls below this (one forward pass before
    # answering; fit it on a development split: benchmarks/reader.py freetext). None = never.
    freetext_abstain_below: float | None = Field(None, ge=0.0, le=1.0)
    freetext_quote_tokens: int = Field(120, ge=16)
    # When no generated claim survives the checks the closest passage is quoted instead; with this
    # set the LLM is first asked whether the quote answers the question (P(yes), one forward pass
    # of ``quote_answers``) and below it the reader abstains: a quote that only shares a word with
    # the question ("tetanus booster" → a diphenhydramine dosage line) reads as an answer and is
    # worse than none. 0.5 is the judge's own decision point, not a fitted value. None = no check.
    freetext_quote_min: float | None = Field(None, ge=0.0, le=1.0)
    # Below ``freetext_abstain_below``: "abstain" at once, or "quote": the passage the support pass
    # ranked best is quoted when the ``quote_answers`` check (``freetext_quote_min``) reads it as
    # answering. A quote is the book's own sentence, so a low gate adds no generated claim.
    freetext_below_gate: Literal["abstain", "quote"] = "abstain"
    # Free text: the first that many passages (retrieval's best) each keep their best sentence
    # through compression (retrieve/compress.py ``passage_slots``); 0 = sentences by score alone.
    freetext_passage_slots: int = Field(0, ge=0)
    # checked answers: the cited passage's words quoted after the answer, within this many tokens
    freetext_support_tokens: int = Field(60, ge=16)
    # Entity consistency (reading/entities.py): a named entity of the question whose rarest term
    # is in at most this share of the corpus's chunks must be named by the passages the answer
    # rests on, else the reader says what they are about instead. None = no check.
    freetext_entity_max_df: float | None = Field(None, gt=0.0, le=1.0)
    # The entity check also holds the question's rare words that are no ordinary English and that
    # no dictionary names ("glimepiride" answered from a levomilnacipran passage; reading/entities.py).
    freetext_entity_words: bool = False
    # The entity check also holds the medicine database's drug classes ("ACE inhibitor"), named in
    # a passage by the class or by a member drug (reading/entities.class_groups).
    freetext_entity_classes: bool = False
    # Which of the question's words the entity check reads: all of it ("question"), or only its
    # question sentences ("asking": those ending in "?", else the last), so context told before the
    # question ("My husband takes warfarin … how far down do I push in CPR?") is not held against
    # a passage that answers what is asked.
    freetext_entity_scope: Literal["question", "asking"] = "question"
    # Free text: the ranked passages that name every specific entity of the question (by any of
    # its names, as the entity check reads them) are packed first ("first"), or alone ("only"),
    # when any does: the reader then cannot answer "usual dose of simvastatin" from a diltiazem
    # passage ranked beside simvastatin's. Needs the entity check (``freetext_entity_max_df``).
    freetext_entity_passages: Literal["any", "first", "only"] = "any"
    # "checked" answers: who decides whether the first claim (the answer) is stated by the
    # passages it cites. "lexical": the share of its content terms found there, the question's
    # own words excused — blind to synonyms ("pyridoxine" for "vitamin B6") and fooled by a claim
    # about another drug that reuses the question's words. "llm": the claim judge of the eval lab
    # (reading/claims.py, P(yes) ≥ ``freetext_claim_threshold``), one more forward pass; the
    # other sentences keep the lexical check. "rescue": the lexical check decides, and the judge is
    # asked only about a first claim it dropped ("… looks directly for hepatitis C viral RNA" where
    # the passage says "HCV RNA"), which it keeps at the threshold — a pass where the reader would
    # otherwise quote the passage and ask whether the quote answers.
    freetext_claim_check: Literal["lexical", "llm", "rescue"] = "lexical"
    freetext_claim_threshold: float = Field(LLM_THRESHOLD, ge=0.0, le=1.0)


@dataclass
class Tally:
    """Per-stage seconds and token counts of one answer."""

    timings: dict[str, float] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=lambda: {"prompt": 0, "completion": 0, "llm_calls": 0})

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        t = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t

    def count(self, result: ChatResult | None) -> None:
        if result is None:
            return
        self.tokens["prompt"] += result.prompt_tokens
        self.tokens["completion"] += result.completion_tokens
        self.tokens["llm_calls"] += 1

    def evidence(self, engine: RetrievalEngine, queries: list[Query], prefer=None, preferred_only: bool = False
                 ) -> Evidence:
        """Retrieve and pack evidence, recording the engine's per-stage seconds as retrieve.*
        (``prefer``, ``preferred_only``: RetrievalEngine.evidence's, passed on)."""
        with self.stage("retrieve"):
            evidence = engine.evidence(queries, prefer=prefer, preferred_only=preferred_only)
        for stage, seconds in engine.timings.items():
            self.timings[f"retrieve.{stage}"] = self.timings.get(f"retrieve.{stage}", 0.0) + seconds
        return evidence

    def finish(self, answer: Answer, started: float) -> Answer:
        self.timings["total"] = time.perf_counter() - started
        answer.timings = dict(self.timings)
        answer.tokens = dict(self.tokens)
        return answer


def chat_text(llm: LLM, messages: list[Message], tally: Tally, *, max_tokens: int) -> str:
    result = llm.chat(messages, max_tokens=max_tokens, temperature=0.0)
    tally.count(result)
    return result.text.strip()
