"""The free-text support gate, extractive and checked answers, and the lexical claim check
(reading/support.py, reading/citations.py, reading/addressing.py), tested here because they run
through the pipelines' fixtures (tiny_chunks, ScriptedLLM)."""

from __future__ import annotations

import math

from medground.pipelines.base import ReaderSettings
from medground.pipelines.rag import RagPipeline
from medground.reading.support import claims_supported, passage_support
from medground.retrieve.engine import RetrievalEngine
from medground.schema import Citation, Evidence, Question
from .conftest import TEXTS
from .test_scripted import ScriptedLLM

Q = Question(qid="f1", dataset="unit", question="How is isoniazid neuropathy prevented?")


TB_QUOTE = "Tiny Textbook / Infections / Tuberculosis: \u201cIsoniazid treats tuberculosis; peripheral neuropathy is prevented by giving pyridoxine (vitamin B6).\u201d [1]"

def _engine(chunks, k=3):
    return RetrievalEngine({"retrievers": ["bm25"], "fusion": None, "top": 8, "final_k": k},
                           chunks=chunks, build_if_missing=True)


def _numbers(p0: float, p1: float, p2: float, p3: float) -> dict[str, float]:
    return {"0": math.log(p0), "1": math.log(p1), "2": math.log(p2), "3": math.log(p3)}


def test_claim_check_ignores_the_question_and_framing_words():
    source = "Isoniazid treats tuberculosis; peripheral neuropathy is prevented by giving pyridoxine (vitamin B6)."
    assert claims_supported("Patients should take pyridoxine (vitamin B6) [1].", source, exclude=[Q.question])
    # A claim the source does not make: most of its content terms are not in it.
    assert not claims_supported("Give vitamin B6. Avoid alcohol and grapefruit juice entirely.", source)
    assert claims_supported("Consult your doctor.", source)  # no content term, no claim


def test_support_is_one_forward_pass_over_passage_numbers(tiny_chunks):
    llm = ScriptedLLM(lambda u, k: "unused", letter_logprobs=_numbers(0.1, 0.2, 0.6, 0.1))
    citations = [Citation(number=i + 1, chunk_id=f"c{i}", book="Tiny Textbook", chapter=chapter, section=section,
                          title=section, text=text, score=1.0) for i, (chapter, section, text) in enumerate(TEXTS[:3])]
    evidence = Evidence(citations=citations, token_count=60, budget=0)
    support, _ = passage_support(llm, evidence, "passage_support", question=Q.question)
    assert abs(support.score - 0.9) < 1e-9 and support.passage.number == 2
    assert len(llm.calls) == 1 and llm.calls[0]["max_tokens"] == 1 and "0 if no passage" in llm.calls[0]["user"]


def test_low_support_abstains_and_lists_the_passages(tiny_chunks):
    llm = ScriptedLLM(lambda u, k: "Give pyridoxine [1].", letter_logprobs=_numbers(0.7, 0.1, 0.1, 0.1))
    ans = RagPipeline(llm, _engine(tiny_chunks), ReaderSettings(freetext_abstain_below=0.5)).answer(Q)
    assert ans.outcome == "insufficient_evidence" and ans.citations
    assert ans.metadata["support"] < 0.5  # 1 - P("0") over the numbers of the passages shown
    assert not any(c["max_tokens"] > 1 for c in llm.calls)  # nothing was generated


def test_extractive_quotes_the_supporting_passage(tiny_chunks):
    llm = ScriptedLLM(lambda u, k: "never asked", letter_logprobs=_numbers(0.05, 0.9, 0.03, 0.02))
    ans = RagPipeline(llm, _engine(tiny_chunks), ReaderSettings(freetext_answer="extractive")).answer(Q)
    assert ans.outcome == "answered" and ans.metadata["extractive"]
    assert len(ans.citations) == 1 and ans.citations[0].number == 1 and "pyridoxine" in ans.text
    assert ans.metadata["quoted"] in ans.citations[0].text
    # says first that no answer sentence is stated, then quotes (reading/reply.py), never a bare quote
    assert ans.text.startswith("The sources do not state this in so many words; the closest is Tiny Textbook")
    assert ans.text.endswith(f"[1]: \u201c{ans.metadata['quoted']}\u201d")


def test_a_quote_the_llm_reads_as_not_answering_becomes_an_abstention(tiny_chunks):
    from .test_scripted import YesNoScriptedLLM

    class Reader(YesNoScriptedLLM):
        marker = "Does this passage answer the question?"

        def __init__(self, p_yes: float):
            super().__init__(lambda u, k: "Stop the drug and give intravenous magnesium sulfate [1].",
                             letter_logprobs=_numbers(0.05, 0.9, 0.03, 0.02))
            self.p_yes = p_yes

        def yes_no(self, user: str) -> tuple[float, float]:
            assert Q.question in user and "pyridoxine" in user  # the question and the quote itself
            return math.log(self.p_yes), math.log(1 - self.p_yes)

    settings = ReaderSettings(freetext_answer="checked", freetext_quote_min=0.5)
    off = Reader(0.2)
    ans = RagPipeline(off, _engine(tiny_chunks), settings).answer(Q)
    assert ans.outcome == "insufficient_evidence" and ans.citations
    assert ans.text == "The passages found do not answer this question; the closest are listed."
    assert ans.metadata["quote_answers"] == 0.2 and "pyridoxine" in ans.metadata["quoted"]
    assert sum(off.marker in c["user"] for c in off.calls) == 1

    # read as answering: quoted, and not introduced as failing to state it
    ans = RagPipeline(Reader(0.8), _engine(tiny_chunks), settings).answer(Q)
    assert ans.outcome == "answered" and ans.metadata["quote_answers"] == 0.8
    assert ans.text.startswith("The passage closest to your question is Tiny Textbook") and "pyridoxine" in ans.text
    assert "so many words" not in ans.text

    # no check asked for: the quote as before, and no extra call
    plain = Reader(0.2)
    ans = RagPipeline(plain, _engine(tiny_chunks), ReaderSettings(freetext_answer="checked")).answer(Q)
    assert ans.outcome == "answered" and "so many words" in ans.text and "quote_answers" not in ans.metadata
    assert not any(plain.marker in c["user"] for c in plain.calls)


def test_below_the_gate_the_best_passage_is_quoted_only_when_judged_answering(tiny_chunks):
    from .test_scripted import YesNoScriptedLLM

    class Reader(YesNoScriptedLLM):
        marker = "Does this passage answer the question?"

        def __init__(self, p_yes: float):
            # P(no passage answers) 0.5: support 0.5, under a 0.78 gate; passage [1] ranked best
            super().__init__(lambda u, k: "never generated", letter_logprobs=_numbers(0.5, 0.4, 0.05, 0.05))
            self.p_yes = p_yes

        def yes_no(self, user: str) -> tuple[float, float]:
            return math.log(self.p_yes), math.log(1 - self.p_yes)

    gate = dict(freetext_answer="checked", freetext_abstain_below=0.78, freetext_quote_min=0.5)
    ans = RagPipeline(Reader(0.9), _engine(tiny_chunks), ReaderSettings(**gate)).answer(Q)
    assert ans.outcome == "insufficient_evidence"  # "abstain", the default: no quote is judged
    quoting = ReaderSettings(**gate, freetext_below_gate="quote")
    ans = RagPipeline(Reader(0.9), _engine(tiny_chunks), quoting).answer(Q)
    assert ans.outcome == "answered" and ans.citations[0].number == 1 and "pyridoxine" in ans.text
    assert ans.metadata["quote_reason"] == "no passage reaches the support threshold"
    declined = Reader(0.2)
    ans = RagPipeline(declined, _engine(tiny_chunks), quoting).answer(Q)
    assert ans.outcome == "insufficient_evidence" and ans.metadata["quote_answers"] == 0.2
    assert not any(c["max_tokens"] > 1 for c in declined.calls)  # nothing generated below the gate


def test_checked_keeps_a_supported_answer_and_quotes_instead_of_an_unsupported_one(tiny_chunks):
    numbers = _numbers(0.05, 0.9, 0.03, 0.02)
    good = ScriptedLLM(lambda u, k: "Giving pyridoxine (vitamin B6) prevents it [1].", letter_logprobs=numbers)
    ans = RagPipeline(good, _engine(tiny_chunks), ReaderSettings(freetext_answer="checked")).answer(Q)
    assert ans.text.startswith("Giving pyridoxine") and ans.metadata["generated_supported"] is True

    bad = ScriptedLLM(lambda u, k: "Stop the drug and give intravenous magnesium sulfate [1].", letter_logprobs=numbers)
    ans = RagPipeline(bad, _engine(tiny_chunks), ReaderSettings(freetext_answer="checked")).answer(Q)
    assert ans.metadata["generated_supported"] is False and ans.metadata["extractive"]
    assert "magnesium" not in ans.text and "pyridoxine" in ans.text  # the passage's own words
    assert "no sentence" in ans.metadata["quote_reason"]

    # A supported sentence survives; the unsupported one is dropped and reported.
    mixed = ScriptedLLM(lambda u, k: "Pyridoxine (vitamin B6) prevents it [1]. Stop the drug and give "
                                     "intravenous magnesium sulfate [1].", letter_logprobs=numbers)
    ans = RagPipeline(mixed, _engine(tiny_chunks), ReaderSettings(freetext_answer="checked")).answer(Q)
    # the answer, then the words of its passage that support it (reading/reply.py)
    assert ans.text == "Pyridoxine (vitamin B6) prevents it [1]. " + TB_QUOTE and "extractive" not in ans.metadata
    assert ans.metadata["dropped_sentences"] == ["Stop the drug and give intravenous magnesium sulfate [1]."]


def test_an_uncited_answer_is_attributed_to_the_passage_that_supports_it_not_to_the_support_pick(tiny_chunks):
    # The support pass points at passage 2; the reader answered right from passage 1 but cited nothing.
    numbers = _numbers(0.05, 0.03, 0.9, 0.02)
    right = ScriptedLLM(lambda u, k: "Giving pyridoxine (vitamin B6) prevents it. It also cures everything else "
                                     "known to medicine.", letter_logprobs=numbers)
    ans = RagPipeline(right, _engine(tiny_chunks), ReaderSettings(freetext_answer="checked")).answer(Q)
    assert ans.text == "Giving pyridoxine (vitamin B6) prevents it [1]. " + TB_QUOTE
    assert [c.number for c in ans.citations] == [1] and "pyridoxine" in ans.citations[0].text
    assert ans.metadata["attributed_to"] == 1 and "extractive" not in ans.metadata
    assert ans.metadata["dropped_sentences"] == ["It also cures everything else known to medicine."]

    # Supported by no passage: the support pick is quoted, as before.
    wrong = ScriptedLLM(lambda u, k: "Stop the drug and give intravenous magnesium sulfate.", letter_logprobs=numbers)
    ans = RagPipeline(wrong, _engine(tiny_chunks), ReaderSettings(freetext_answer="checked")).answer(Q)
    assert ans.metadata["extractive"] and "magnesium" not in ans.text
    assert ans.metadata["quote_reason"] == "generated answer cites no passage and no passage supports it"


def test_unaddressed_terms_names_what_a_record_never_mentions():
    from medground.reading.addressing import asking_sentences, unaddressed_terms

    lists = "Aliskiren\nLithium\nSacubitril"
    assert unaddressed_terms("Can I use potassium salt substitutes?", lists, exclude=["Zestril"]) == \
        ["potassium", "salt", "substitutes"]
    assert unaddressed_terms("Can I take lithium with Zestril?", lists, exclude=["Zestril"]) == []
    # Stems match ("coughing" ~ "Cough"); the drug's own name and asking words are not specific.
    assert unaddressed_terms("Could Zestril be why I keep coughing?", "Angioedema\nCough", exclude=["Zestril"]) == []
    assert unaddressed_terms("What is the usual daily dose of Zestril?", "10-40 mg", exclude=["Zestril"]) == []
    # Only the asking sentence carries the question's object.
    assert asking_sentences("I take it for my heart. Can I drink coffee?") == "Can I drink coffee?"
    assert asking_sentences("Tell me about the dose") == "Tell me about the dose"


def test_clause_check_keeps_a_supported_main_clause_and_never_cuts_before_but():
    from medground.reading.support import split_supported

    source = "Epinephrine. For anaphylaxis: 0.3-0.5 mg intramuscularly."
    q = "What is the first-line drug for anaphylaxis?"
    answer = "The first-line drug for anaphylaxis is epinephrine, which is given as an inhaled nebulizer treatment [3]."
    assert split_supported(answer, source, exclude=[q]) == ([], [answer])  # sentence by sentence: dropped
    kept, dropped = split_supported(answer, source, exclude=[q], clauses=True)
    assert kept == ["The first-line drug for anaphylaxis is epinephrine."]
    assert dropped == ["which is given as an inhaled nebulizer treatment [3]."]  # its citation stays with it
    # only before ", which": "but" carries a condition ("safe, but not in pregnancy" must never become
    # "safe"), and a clause after "and" or ";" is often the answer itself
    assert split_supported("Warfarin is safe, but not in pregnancy.", "Warfarin is safe.", clauses=True)[0] == []
    assert split_supported("Anaphylaxis is a severe allergy, and its treatment is diphenhydramine.",
                           "Anaphylaxis is a severe allergy.", clauses=True)[0] == []
    # never cut inside a citation
    assert split_supported("Epinephrine is given intramuscularly [1, which is wrong].", "Epinephrine is given "
                           "intramuscularly.", clauses=True)[0] == []


def test_citation_only_sentences_fold_into_the_claim_before_them():
    from medground.reading.citations import fold_citations

    assert fold_citations(["It is epinephrine.", "This is supported by passage [3]."]) == ["It is epinephrine [3]."]
    assert fold_citations(["This is supported by passage [3].", "It is epinephrine."]) == \
        ["This is supported by passage [3].", "It is epinephrine."]  # nothing before it to cite
    # a short warning says something, even in words the question used: it is never folded away
    warning = ["Ibuprofen is an NSAID [1].", "It is not recommended in pregnancy [2]."]
    assert fold_citations(warning) == warning


def _checked(generated: str, question: str, chapter: str, section: str, text: str):
    """The checked free-text answer to ``question`` when the reader writes ``generated`` from one
    passage (support pass: passage 1 answers)."""
    from medground.pipelines.base import Tally, free_text_answer

    numbers = {"0": math.log(0.05), "1": math.log(0.95)}
    cite = Citation(number=1, chunk_id="c1", book="Pharmacology", chapter=chapter, section=section, title=section,
                    text=text, score=1.0)
    llm = ScriptedLLM(lambda u, k: generated, letter_logprobs=numbers)
    return free_text_answer(llm, Question(qid="q", dataset="unit", question=question),
                            Evidence(citations=[cite], token_count=20, budget=0),
                            ReaderSettings(freetext_answer="checked"), Tally())


def test_checked_answer_may_rest_on_the_passage_heading_the_reader_saw(tiny_chunks):
    ans = _checked("The drug for anaphylaxis is epinephrine, which is inhaled. This is supported by passage [1].",
                   "What is the first-line drug for anaphylaxis?", "Shock Drugs", "Epinephrine",
                   "For anaphylaxis: 0.3-0.5 mg intramuscularly.")
    assert ans.text == ("The drug for anaphylaxis is epinephrine [1]. Pharmacology / Shock Drugs / Epinephrine: "
                        "\u201cFor anaphylaxis: 0.3-0.5 mg intramuscularly.\u201d [1]") and "extractive" not in ans.metadata
    assert ans.metadata["dropped_sentences"] == ["which is inhaled."]


def test_an_answer_whose_first_claim_is_unsupported_is_quoted_not_left_as_its_justification():
    ans = _checked("The electrolyte to monitor is potassium. Passage [1] states that clients taking furosemide and "
                   "digoxin must be monitored for digoxin toxicity.",
                   "Which electrolyte should be monitored with furosemide?", "Diuretics", "Loop Diuretics",
                   "Clients taking furosemide and digoxin must be monitored for digoxin toxicity, including bradycardia.")
    assert ans.metadata["extractive"] and "first claim" in ans.metadata["quote_reason"]
    assert ans.metadata["dropped_sentences"] == ["The electrolyte to monitor is potassium."]
    assert "potassium" not in ans.text and ans.text.startswith("The sources do not state this")



def test_a_restatement_of_the_evidence_after_the_answer_is_cut_to_its_citation():
    from medground.reading.citations import fold_citations
    from medground.reading.support import drop_restatements

    answer = ["Botulinum toxin blocks the release of acetylcholine.",
              "This is supported by passage [2], which states that tetanus toxin binds to interneurons."]
    kept, cut = drop_restatements(answer, question="What does botulinum toxin do?")
    assert fold_citations(kept) == ["Botulinum toxin blocks the release of acetylcholine [2]."]
    assert cut == ["which states that tetanus toxin binds to interneurons."]
    # a lead-in to a claim is no restatement; nor is anything before the answer's first claim
    lead = ["According to passage [3], the nurse should avoid potassium salt substitutes."]
    assert drop_restatements(lead) == (lead, [])
    first = ["This is supported by passage [2], which states that Y is Z.", "Y is Z [1]."]
    assert drop_restatements(first) == (first, [])
    # a sentence that says something of its own keeps its clause
    warning = ["X is Z [1].", "It is not recommended in pregnancy [2], which matters."]
    assert drop_restatements(warning) == (warning, [])


def test_what_brings_a_new_fact_or_the_answer_is_never_cut():
    from medground.reading.support import drop_restatements

    claim = "The treatment of choice is epinephrine [1]."
    for new_fact in ["Also, passage [2] states that it must not be given intravenously in children.",
                     "It is also stated in passage [2] that the dose is 0.01 mg/kg intramuscularly.",
                     "See passage [2]: the dose in children is 0.01 mg/kg.",
                     "Passage [2] states that, in patients on beta-blockers, glucagon should be given instead.",
                     "This is supported by passage [2] and that passage also warns of arrhythmia."]:
        assert drop_restatements([claim, new_fact], question="What treats anaphylaxis?") == ([claim, new_fact], [])
    # the first sentence is background; the "restatement" holds what was asked: it stays
    answer = ["Botulinum toxin is produced by Clostridium botulinum [1].",
              "This is supported by passage [1], which states that it blocks the release of acetylcholine."]
    q = "Which neurotransmitter release does botulinum toxin block?"
    assert drop_restatements(answer, question=q) == (answer, [])


def test_a_wandering_restatement_gives_its_citation_only_if_that_passage_supports_the_claim():
    from medground.reading.citations import fold_citations
    from medground.reading.support import drop_restatements

    passages = {1: "Clostridia Botulinum toxin blocks the release of acetylcholine.",
                2: "Clostridia Tetanus toxin blocks the release of glycine."}
    answer = ["Botulinum toxin blocks the release of acetylcholine [1].",
              "This is supported by passage [2], which states that tetanus toxin blocks the release of glycine."]
    kept, cut = drop_restatements(answer, question="What does botulinum toxin do?", passages=passages)
    assert fold_citations(kept) == ["Botulinum toxin blocks the release of acetylcholine [1]."]
    assert cut == ["which states that tetanus toxin blocks the release of glycine."]
    both = [answer[0], "This is supported by passages [1, 2], which say so."]
    assert fold_citations(drop_restatements(both, question="What does botulinum toxin do?",
                                            passages=passages)[0]) == [answer[0]]


def test_folded_citations_are_compared_by_number():
    from medground.reading.citations import fold_citations

    assert fold_citations(["It is epinephrine [1].", "This is supported by passages [1, 2]."]) == \
        ["It is epinephrine [1] [2]."]
    assert fold_citations(["It is epinephrine [1, 2].", "See [2; 1]."]) == ["It is epinephrine [1, 2]."]


def test_checked_answer_loses_its_restatement_and_keeps_its_citation():
    ans = _checked("Botulinum toxin blocks the release of acetylcholine. This is supported by passage [1], which states "
                   "that tetanus toxin blocks glycine release.",
                   "Which neurotransmitter does botulinum toxin block?", "Toxins", "Clostridia",
                   "Botulinum toxin blocks the release of acetylcholine, causing flaccid paralysis. Tetanus toxin "
                   "blocks glycine release.")
    assert ans.text == ("Botulinum toxin blocks the release of acetylcholine [1]. Pharmacology / Toxins / Clostridia: "
                        "\u201cBotulinum toxin blocks the release of acetylcholine, causing flaccid paralysis.\u201d [1]")
    assert ans.metadata["restatements_cut"] == ["which states that tetanus toxin blocks glycine release."]


def test_the_kind_a_question_asks_for_does_not_keep_a_restatement():
    from medground.reading.support import drop_restatements

    q = "Botulinum toxin blocks release of which neurotransmitter at the neuromuscular junction?"
    answer = ["Botulinum toxin blocks the release of acetylcholine at the neuromuscular junction.",
              "This is supported by passage [2], which states that tetanus toxin blocks inhibitory neurotransmitters."]
    kept, cut = drop_restatements(answer, question=q)
    assert kept == [answer[0], "This is supported by [2]."] and len(cut) == 1


def test_a_generated_answer_citing_nothing_shows_no_evidence_as_used(tiny_chunks):
    numbers = _numbers(0.05, 0.9, 0.03, 0.02)
    llm = ScriptedLLM(lambda u, k: "It is prevented with vitamin B6.", letter_logprobs=numbers)
    ans = RagPipeline(llm, _engine(tiny_chunks), ReaderSettings(freetext_answer="generate")).answer(Q)
    assert ans.outcome == "answered" and ans.citations == []
    assert ans.metadata["uncited"] is True and ans.metadata["retrieved_not_cited"]


def test_an_answer_whose_citation_was_cut_with_its_restatement_still_cites_its_passage():
    from medground.pipelines.base import with_support_quote
    from medground.schema import Citation

    passage = Citation(number=2, chunk_id="c", book="Book", chapter="Spine", section="Discs", title="", score=1.0,
                       text="The most common sites for disc herniation are the L4/L5 or L5/S1 discs.")
    got = with_support_quote("Herniation is most common at L4/L5 or L5/S1.", passage, exclude="", budget=60)
    assert got.startswith("Herniation is most common at L4/L5 or L5/S1 [2]. Book / Spine / Discs: \u201cThe most")


def test_a_stated_cause_must_be_the_cited_passages_own():
    from medground.reading.support import split_supported, stated_causes

    q = "Why do people with uncontrolled diabetes pee so much?"
    source = "Uncontrolled diabetes can also lead to a dangerous form of metabolic acidosis called ketoacidosis."
    # the session-32 own-words probe: the aside after ", which" is the cited sentence, the cause is not
    # in it; the whole sentence's term share alone let it pass
    answer = ("People with uncontrolled diabetes pee so much because their blood sugar levels are high, which can "
              "lead to a dangerous form of metabolic acidosis called ketoacidosis [3].")
    assert stated_causes(answer) == ["their blood sugar levels are high"]
    assert split_supported(answer, source, exclude=[q], clauses=True) == ([], [answer])
    # a cause the passage states passes, even in the question's own words
    stated = "Glucose in the urine draws water with it, so people with uncontrolled diabetes urinate often."
    good = "People with uncontrolled diabetes urinate often because glucose in the urine draws water with it [2]."
    assert split_supported(good, stated, exclude=[q]) == ([good], [])
    asked = "Is polyuria in diabetes due to glucose in the urine?"
    claim = "Polyuria is due to glucose in the urine [1]."
    assert split_supported(claim, "In diabetes, glucose in the urine causes polyuria.", exclude=[asked])[1] == []
    assert split_supported(claim, "Polyuria is common in diabetes.",
                           exclude=[asked])[1] != []  # the question proposed the cause; the passage must state it
    assert stated_causes("Take it with food; it is safe.") == []


def test_lay_query_adds_the_books_word_for_a_lay_phrase(tiny_chunks, monkeypatch):
    from medground.corpus.lay_vocabulary import LayVocabulary
    from medground.pipelines import base

    vocab = LayVocabulary()
    vocab.add("pee", "diuretic", 3)
    # the tiny corpus is too small for book_words' shares (tested in tests/corpus): count in it directly
    monkeypatch.setattr(vocab, "book_words", lambda text, doc_freq, n: {
        p: o for p, o in vocab.equivalents(text).items() if doc_freq(p) == 0 and doc_freq(o)})
    monkeypatch.setattr(base, "lay_vocabulary", lambda: vocab)
    q = Question(qid="l1", dataset="unit", question="Which pill makes me pee a lot?")
    llm = ScriptedLLM([])
    on = RagPipeline(llm, _engine(tiny_chunks), ReaderSettings(lay_query=True)).queries(q, None)
    assert [x.kind for x in on] == ["original", "lay"] and on[1].text.endswith("(diuretic)")
    off = RagPipeline(llm, _engine(tiny_chunks), ReaderSettings()).queries(q, None)
    assert [x.kind for x in off] == ["original"]


def test_a_first_claim_cited_to_the_wrong_passage_is_cited_to_the_one_shown_that_supports_it(tiny_chunks):
    q = Question(qid="f2", dataset="unit", question="What raises the risk of digoxin toxicity in a patient on furosemide?")
    numbers = _numbers(0.05, 0.9, 0.03, 0.02)
    # three passages shown: [1] digoxin, which says it, and the furosemide passage the reader cites
    miscited = ScriptedLLM(lambda u, k: "Hypokalemia increases the risk of digoxin toxicity [2].", letter_logprobs=numbers)
    ans = RagPipeline(miscited, _engine(tiny_chunks), ReaderSettings(freetext_answer="checked")).answer(q)
    assert ans.metadata["passages_shown"] == 3 and ans.metadata["extractive"]  # declined as before
    ans = RagPipeline(miscited, _engine(tiny_chunks), ReaderSettings(freetext_answer="checked",
                                                                     freetext_recite=True)).answer(q)
    assert ans.outcome == "answered" and ans.text.startswith("Hypokalemia increases the risk of digoxin toxicity [1]")
    assert ans.metadata["attributed_to"] == 1 and [c.number for c in ans.citations] == [1]
    # a claim no passage shown supports is still declined
    bad = ScriptedLLM(lambda u, k: "Hypercalcemia from thiazides raises it [2].", letter_logprobs=numbers)
    ans = RagPipeline(bad, _engine(tiny_chunks), ReaderSettings(freetext_answer="checked",
                                                                freetext_recite=True)).answer(q)
    assert ans.metadata["extractive"] and "Hypercalcemia" not in ans.text
