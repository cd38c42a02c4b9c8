from __future__ import annotations

import math

import pytest

from medground.pipelines.base import ReaderSettings
from medground.pipelines.direct import DirectPipeline
from medground.pipelines.rag import RagPipeline, clean_keyword_query
from medground.reading.citations import cited_numbers
from medground.retrieve.engine import RetrievalEngine
from medground.schema import Question

from .test_scripted import ScriptedLLM, YesNoScriptedLLM


def _engine(chunks, k=3):
    return RetrievalEngine({"retrievers": ["bm25"], "fusion": "rrf", "top": 8, "final_k": k},
                           chunks=chunks, build_if_missing=True)


def test_clean_keyword_query():
    assert clean_keyword_query('Query: "isoniazid neuropathy pyridoxine"\nmore') == "isoniazid neuropathy pyridoxine"
    assert clean_keyword_query("- a b c", max_words=2) == "a b"


def test_cited_numbers():
    assert cited_numbers("Insulin lowers glucose [2]. It is made in islets [1][2], see [3, 4].") == [2, 1, 3, 4]
    assert cited_numbers("no citations") == []


def test_reformulation_is_an_extra_query(tiny_chunks, mcq):
    llm = ScriptedLLM(lambda u, k: "Query: isoniazid pyridoxine peripheral neuropathy prevention vitamin")
    ans = RagPipeline(llm, _engine(tiny_chunks), reformulate=True).answer(mcq)
    assert [q.kind for q in ans.queries] == ["original", "keywords"]
    assert ans.queries[0].text == mcq.question
    assert ans.queries[1].text.startswith("isoniazid pyridoxine")
    assert any("Isoniazid" in c.text for c in ans.citations)
    assert ans.choice == "A" and ans.outcome == "answered"
    assert set(ans.timings) >= {"reformulate", "retrieve", "read", "total"}


def test_cot_parse_failure_is_counted_not_defaulted(tiny_chunks, mcq):
    llm = ScriptedLLM(lambda u, k: "It depends on many things; I cannot say.")
    ans = RagPipeline(llm, _engine(tiny_chunks), ReaderSettings(prompt="cot")).answer(mcq)
    assert ans.outcome == "parse_failure" and ans.choice is None


def test_cot_answer_is_parsed(tiny_chunks, mcq):
    llm = ScriptedLLM(lambda u, k: "Isoniazid depletes B6.\nAnswer: B")
    ans = RagPipeline(llm, _engine(tiny_chunks), ReaderSettings(prompt="cot")).answer(mcq)
    assert ans.outcome == "answered" and ans.choice == "B"


def test_free_text_citations_resolve(tiny_chunks):
    q = Question(qid="f1", dataset="unit", question="How is isoniazid neuropathy prevented?")
    llm = ScriptedLLM(lambda u, k: "Give pyridoxine [1]. Also see [9].")
    ans = RagPipeline(llm, _engine(tiny_chunks)).answer(q)
    assert ans.outcome == "answered"
    assert len(ans.citations) == 1 and "Isoniazid" in ans.citations[0].text
    assert ans.metadata["dangling_citations"] == [9]


def test_free_text_insufficient_evidence(tiny_chunks):
    q = Question(qid="f2", dataset="unit", question="What is the capital of France?")
    llm = ScriptedLLM(lambda u, k: "INSUFFICIENT EVIDENCE")
    ans = RagPipeline(llm, _engine(tiny_chunks)).answer(q)
    assert ans.outcome == "insufficient_evidence"


def test_direct_reads_letter_distribution(mcq):
    ans = DirectPipeline(ScriptedLLM(lambda u, k: "")).answer(mcq)
    assert ans.choice == "A" and ans.citations == []
    assert abs(sum(ans.option_scores.values()) - 1) < 1e-9
    assert ans.option_scores["A"] > ans.option_scores["B"] > ans.option_scores["D"]


@pytest.mark.slow
@pytest.mark.parametrize("prompt", ["zeroshot", "cot"])
def test_rag_end_to_end_with_real_model(small_llm, tiny_chunks, mcq, prompt):
    reader = ReaderSettings(prompt=prompt, cot_max_tokens=48)
    ans = RagPipeline(small_llm, _engine(tiny_chunks), reader, reformulate=True).answer(mcq)
    assert ans.outcome in {"answered", "parse_failure"}
    ids = {c.chunk_id for c in tiny_chunks.iter_chunks()}
    assert ans.citations and all(c.chunk_id in ids for c in ans.citations)
    if prompt == "zeroshot":
        assert ans.outcome == "answered" and abs(sum(ans.option_scores.values()) - 1) < 1e-6
    assert ans.tokens["prompt"] > 0


@pytest.mark.slow
def test_direct_and_free_text_with_real_model(small_llm, tiny_chunks, mcq):
    assert DirectPipeline(small_llm).answer(mcq).choice in mcq.options
    q = Question(qid="f3", dataset="unit", question="What does warfarin inhibit?")
    ans = RagPipeline(small_llm, _engine(tiny_chunks), ReaderSettings(freetext_max_tokens=48)).answer(q)
    assert ans.outcome in {"answered", "insufficient_evidence"}
    # cited passages, or (the 135M model cites nothing) none shown as if used, and it says so
    assert ans.citations or (ans.metadata.get("uncited") and ans.metadata["retrieved_not_cited"])


class _EvidenceSwaysLLM(ScriptedLLM):
    """Letter log-probs that depend on whether the prompt carries evidence."""

    def __init__(self, with_evidence: dict[str, float], closed: dict[str, float]):
        super().__init__(lambda u, k: "")
        self.with_evidence, self.closed = with_evidence, closed

    def chat(self, messages, **kwargs):
        self.letter_logprobs = self.with_evidence if "Passages from" in messages[-1]["content"] else self.closed
        return super().chat(messages, **kwargs)


def test_evidence_weight_tempers_the_grounded_read_with_the_closed_book_one(tiny_chunks, mcq):
    import math

    sway = {"A": math.log(0.5), "B": math.log(0.4), "C": math.log(0.05), "D": math.log(0.05)}
    prior = {"A": math.log(0.1), "B": math.log(0.7), "C": math.log(0.1), "D": math.log(0.1)}
    alone = RagPipeline(_EvidenceSwaysLLM(sway, prior), _engine(tiny_chunks)).answer(mcq)
    llm = _EvidenceSwaysLLM(sway, prior)
    mixed = RagPipeline(llm, _engine(tiny_chunks), ReaderSettings(evidence_weight=0.5)).answer(mcq)
    assert alone.choice == "A" and mixed.choice == "B"
    # sqrt(0.4 · 0.7) against sqrt(0.5 · 0.1), renormalized over the four options
    raw = {k: math.sqrt(math.exp(sway[k]) * math.exp(prior[k])) for k in sway}
    assert mixed.option_scores["B"] == pytest.approx(raw["B"] / sum(raw.values()))
    assert sum("Passages from" not in c["user"] for c in llm.calls) == 1  # one closed-book read more
    assert mixed.tokens["llm_calls"] == alone.tokens["llm_calls"] + 1
    assert mixed.citations == alone.citations  # the evidence shown is unchanged


def test_evidence_weight_above_one_counts_the_closed_book_belief_against_an_option(tiny_chunks, mcq):
    import math

    # with the passages A edges B; without them the model was sure of A: the contrast reads B
    sway = {"A": math.log(0.45), "B": math.log(0.4), "C": math.log(0.1), "D": math.log(0.05)}
    prior = {"A": math.log(0.85), "B": math.log(0.05), "C": math.log(0.05), "D": math.log(0.05)}
    alone = RagPipeline(_EvidenceSwaysLLM(sway, prior), _engine(tiny_chunks)).answer(mcq)
    contrast = RagPipeline(_EvidenceSwaysLLM(sway, prior), _engine(tiny_chunks),
                           ReaderSettings(evidence_weight=1.5)).answer(mcq)
    assert alone.choice == "A" and contrast.choice == "B"
    assert set(contrast.detail.score_parts) == {"letters", "closed_book"}


def test_evidence_weight_one_is_the_plain_grounded_read(tiny_chunks, mcq):
    llm = ScriptedLLM(lambda u, k: "")
    RagPipeline(llm, _engine(tiny_chunks), ReaderSettings(evidence_weight=1.0)).answer(mcq)
    assert all("Passages from" in c["user"] for c in llm.calls)


DIGOXIN = Question(qid="dig", dataset="unit", question="Which electrolyte disturbance raises the risk of toxicity "
                   "from the cardiac glycoside?",
                   options={"A": "Hyperkalemia", "B": "Hypokalemia", "C": "Hypernatremia", "D": "Hypercalcemia"},
                   answer="B")


def test_option_queries_retrieve_per_option_and_record_which_options_the_evidence_holds(tiny_chunks):
    llm = ScriptedLLM(lambda u, k: "B")
    ans = RagPipeline(llm, _engine(tiny_chunks), ReaderSettings(option_queries=True)).answer(DIGOXIN)
    assert [q.kind for q in ans.queries] == ["original"] + ["option"] * 4
    covered = ans.metadata["options_in_evidence"]
    assert covered["B"] and not covered["A"]  # the digoxin and diuretic passages name hypokalemia
    assert any("digoxin" in c.text.lower() for c in ans.citations)


class VerifyingLLM(YesNoScriptedLLM):
    """Letters favour A; the per-option check says yes only to ``right``."""

    def __init__(self, right: str):
        super().__init__(lambda u, k: "A", {"A": -0.2, "B": -1.9, "C": -4.0, "D": -4.0})
        self.right = right

    marker = "Proposed answer:"

    def yes_no(self, user: str) -> tuple[float, float]:
        yes = -0.05 if user.rstrip().split("Proposed answer:")[1].split("\n")[0].strip() == self.right else -3.0
        return yes, -3.05 - yes


@pytest.mark.parametrize("weight, expected", [(0.0, "A"), (0.7, "B")])
def test_check_weight_mixes_the_letter_read_with_a_per_option_check(tiny_chunks, weight, expected):
    llm = VerifyingLLM(right="Hypokalemia")
    ans = RagPipeline(llm, _engine(tiny_chunks), ReaderSettings(check_weight=weight)).answer(DIGOXIN)
    assert ans.choice == expected
    assert set(ans.metadata.get("score_parts", {})) == ({"letters", "check"} if weight else set())
    checks = [c for c in llm.calls if "Proposed answer:" in c["user"]]
    assert len(checks) == (4 if weight else 0)
    assert all("A." not in c["user"] and "B." not in c["user"] for c in checks)  # no letters shown


def test_free_text_names_the_near_miss_instead_of_answering_it(tiny_chunks):
    from medground.pipelines.base import Tally, free_text_answer

    q = Question(qid="z", dataset="unit", question="How is zidovudine neuropathy prevented?")
    engine = _engine(tiny_chunks)
    evidence = engine.evidence("isoniazid neuropathy pyridoxine")
    llm = ScriptedLLM(lambda u, k: "Give pyridoxine [1].")
    seen = []

    def absent(passages):
        seen.append([c.number for c in passages])
        return ["zidovudine"]

    ans = free_text_answer(llm, q, evidence, ReaderSettings(), Tally(), absent_entities=absent)
    assert ans.outcome == "insufficient_evidence"
    assert ans.text.startswith("The passage this answer would rest on ([1]) does not mention zidovudine; it is "
                               "about Tuberculosis")
    assert ans.metadata["withheld"] == "Give pyridoxine [1]." and ans.metadata["entity_missing"] == ["zidovudine"]
    assert seen == [[1]]  # checked against what the answer cited
    kept = free_text_answer(llm, q, evidence, ReaderSettings(), Tally(), absent_entities=lambda p: [])
    assert kept.outcome == "answered" and kept.text == "Give pyridoxine [1]."


@pytest.mark.parametrize("named, fires", [("Zidovudine", True), ("Infections", False)])
def test_the_entity_check_reads_whole_passages_with_their_headings(tiny_chunks, named, fires):
    from medground.reading.entities import EntityDictionary, EntityGate, NameGroup

    q = Question(qid="e", dataset="unit", question=f"Does {named} need pyridoxine with isoniazid?")
    llm = ScriptedLLM(lambda u, k: "Give pyridoxine [1].")
    pipe = RagPipeline(llm, _engine(tiny_chunks, k=1), ReaderSettings(freetext_entity_max_df=0.5, evidence_tokens=32))
    pipe._gate = EntityGate(EntityDictionary([NameGroup(entry=(named,))]), lambda t: 1, 100, 0.5)
    ans = pipe.answer(q)
    # "Infections" is only the chapter of the passage found: a heading counts as mentioning it
    assert (ans.outcome == "insufficient_evidence") is fires
    assert ans.metadata.get("entity_missing") == ([named] if fires else None)


class ClaimJudgingLLM(YesNoScriptedLLM):
    """Writes ``answer``; as the claim judge says yes with probability ``p_yes``."""

    def __init__(self, answer: str, p_yes: float):
        super().__init__(lambda u, k: answer)
        self.p_yes = p_yes

    marker = "Claim:"

    def yes_no(self, user: str) -> tuple[float, float]:
        return math.log(self.p_yes), math.log(1 - self.p_yes)


@pytest.mark.parametrize("check, p_yes, kept", [
    ("lexical", 0.9, False),  # "B6" is not a word of the passage: the lexical check drops a true claim
    ("llm", 0.9, True),       # the judge reads "pyridoxine" as vitamin B6
    ("llm", 0.2, False),
    ("rescue", 0.9, True),    # asked only because the lexical check dropped it (session 37; measured, off)
    ("rescue", 0.2, False),
])
def test_the_llm_claim_judge_decides_the_first_claim(tiny_chunks, check, p_yes, kept):
    from medground.pipelines.base import Tally, free_text_answer

    q = Question(qid="b6", dataset="unit", question="What vitamin prevents neuropathy on isoniazid?")
    evidence = _engine(tiny_chunks).evidence("isoniazid neuropathy pyridoxine")
    llm = ClaimJudgingLLM("Give vitamin B6 supplements [1].", p_yes)
    ans = free_text_answer(llm, q, evidence, ReaderSettings(freetext_answer="checked", freetext_claim_check=check),
                           Tally())
    judged = [c for c in llm.calls if "Claim:" in c["user"]]
    assert len(judged) == (0 if check == "lexical" else 1)
    if judged:
        assert "Claim: Give vitamin B6 supplements." in judged[0]["user"]  # without its citation mark
        assert ans.metadata["first_claim_judged"]["supported"] is kept
    assert ans.text.startswith("Give vitamin B6 supplements [1]") is kept
    assert ans.outcome == "answered" and (kept or ans.metadata.get("extractive"))


def test_the_rescue_judge_is_not_asked_about_a_claim_the_lexical_check_keeps(tiny_chunks):
    from medground.pipelines.base import Tally, free_text_answer

    q = Question(qid="b6", dataset="unit", question="What vitamin prevents neuropathy on isoniazid?")
    evidence = _engine(tiny_chunks).evidence("isoniazid neuropathy pyridoxine")
    llm = ClaimJudgingLLM("Giving pyridoxine prevents it [1].", 0.1)
    ans = free_text_answer(llm, q, evidence, ReaderSettings(freetext_answer="checked", freetext_claim_check="rescue"),
                           Tally())
    assert not [c for c in llm.calls if "Claim:" in c["user"]]
    assert ans.text.startswith("Giving pyridoxine prevents it [1]")


@pytest.mark.parametrize("prompt", ["freetext", "freetext_after_support"])
def test_the_answer_prompt_is_a_setting(tiny_chunks, prompt):
    from medground.llm import prompts
    from medground.pipelines.base import Tally, free_text_answer

    q = Question(qid="b6", dataset="unit", question="What vitamin prevents neuropathy on isoniazid?")
    evidence = _engine(tiny_chunks).evidence("isoniazid neuropathy pyridoxine")
    llm = ScriptedLLM(lambda u, k: "Pyridoxine prevents isoniazid neuropathy [1].")
    free_text_answer(llm, q, evidence, ReaderSettings(freetext_prompt=prompt), Tally())
    expected = prompts.messages(prompt, evidence=evidence.render(), question=q.question)[-1]["content"]
    assert llm.calls[-1]["user"] == expected
