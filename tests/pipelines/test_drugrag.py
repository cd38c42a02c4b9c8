from __future__ import annotations

import json

import pytest

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute, DrugCatalog
from medground.store.drugs import DrugStore
from medground.pipelines.drugrag import DrugRagPipeline, DrugRagSettings, dialogue_of
from medground.retrieve.drugs import make_drug_retriever
from medground.retrieve.engine import RetrievalEngine
from medground.drug_schema import ConsultDetail
from medground.schema import ChoiceDetail, Question

from .test_scripted import ScriptedLLM


@pytest.fixture()
def drug_engine(tmp_path):
    src = "openstax-prototype:m1#t"
    catalog = DrugCatalog(
        [Drug("ibuprofen", "ibuprofen", ["Advil"], "NSAID"), Drug("warfarin", "warfarin", ["Coumadin"], "Anticoagulant")],
        [DrugAttribute("ibuprofen", A.DOSAGE, "200-400 mg orally every 4-6 hours", src),
         DrugAttribute("ibuprofen", A.ADVERSE_REACTIONS, "Dyspepsia, GI bleeding, rash", src),
         DrugAttribute("warfarin", A.INTERACTIONS, "Foods rich in vitamin K such as spinach", src),
         DrugAttribute("warfarin", A.DOSAGE, "2-10 mg orally daily, adjusted to INR", src)])
    store = DrugStore(tmp_path / "drugs.sqlite")
    store.build(catalog)
    return RetrievalEngine({"retrievers": ["drugs"], "fusion": None, "top": 10, "final_k": 3,
                            "overflow": "truncate"}, retrievers={"drugs": make_drug_retriever(store=store)})


def _tool_reply(keywords: str):
    def reply(user: str, kwargs: dict) -> str:
        if kwargs.get("response_format"):  # the schema-constrained tool call
            return json.dumps({"name": "search_engine", "arguments": {"keywords": keywords}})
        return "Spinach is rich in vitamin K, which interacts with warfarin [1]."
    return reply


def test_distill_retrieve_read_cites_the_database(drug_engine):
    q = Question(qid="c1", dataset="unit", question="Can I still eat spinach salads?",
                 context="Patient: I started Coumadin last week.")
    llm = ScriptedLLM(_tool_reply("Coumadin interactions spinach"))
    ans = DrugRagPipeline(llm, drug_engine).answer(q)
    assert ans.queries[0].kind == "distilled" and ans.queries[0].text == "Coumadin interactions spinach"
    assert ans.metadata["tool_call"] == {"name": "search_engine", "arguments": {"keywords": "Coumadin interactions spinach"}}
    assert ans.metadata["distill_failure"] is None
    assert ans.outcome == "answered"
    # Brand name resolved to the generic drug, and the interactions attribute is what is cited.
    assert ans.citations[0].chapter.lower() == "warfarin"
    assert "spinach" in ans.citations[0].text
    # The distiller saw the whole consultation, earlier turns included.
    assert "I started Coumadin" in llm.calls[0]["user"]


def test_failed_tool_call_is_counted_and_falls_back_to_the_dialogue(drug_engine):
    q = Question(qid="c2", dataset="unit", question="How much ibuprofen can I take?")
    ans = DrugRagPipeline(ScriptedLLM(lambda u, k: "not json"), drug_engine).answer(q)
    assert ans.metadata["distill_failure"] is not None
    assert ans.queries[0].kind == "original"
    assert any("ibuprofen" in c.chapter.lower() for c in ans.citations)


def test_dialogue_of():
    assert dialogue_of(Question("q", "d", "Dose?", context="Patient: hi")) == "Patient: hi\nDose?"
    assert dialogue_of(Question("q", "d", "Dose?")) == "Dose?"


@pytest.mark.slow
def test_drugrag_with_real_model(small_llm, drug_engine):
    q = Question(qid="c3", dataset="unit", question="What are the side effects of Advil?")
    ans = DrugRagPipeline(small_llm, drug_engine).answer(q)
    assert ans.outcome in {"answered", "insufficient_evidence"}
    # One distill call (a native tool call: llama.cpp enforces the schema), then a support check only when
    # the database matched the 135M model's keywords (they are often invented).
    assert ans.queries and ans.metadata["distill_failure"] is None
    assert (ans.tokens["llm_calls"] >= 2) if ans.citations else (ans.tokens["llm_calls"] == 1)


def _support_llm(p_none: float, keywords: str = "Coumadin interactions spinach"):
    """Distills to ``keywords``; on the support question puts ``p_none`` on entry "0"."""
    import math

    rest = (1 - p_none) / 3
    llm = ScriptedLLM(_tool_reply(keywords),
                      letter_logprobs={"0": math.log(p_none), "1": math.log(rest), "2": math.log(rest),
                                       "3": math.log(rest)})
    return llm


def test_extractive_answer_quotes_the_supporting_entry(drug_engine):
    q = Question(qid="c4", dataset="unit", question="Can I still eat spinach salads?",
                 context="Patient: I started Coumadin last week.")
    ans = DrugRagPipeline(_support_llm(0.05), drug_engine).answer(q)
    assert ans.outcome == "answered" and ans.metadata["extractive"]
    assert ans.metadata["support"] > 0.9
    entry = ans.citations[0]
    # The quote is the record's own words, and the answer cites the entry it came from.
    assert ans.metadata["quoted"] in entry.text and f"[{entry.number}]" in ans.text
    assert "spinach" in ans.text
    # typed: the JSON face above is the detail's
    assert isinstance(ans.detail, ConsultDetail) and ans.detail.quoted == ans.metadata["quoted"]
    assert ans.detail.support_check.entry == ans.metadata["supporting_entry"] and ans.metadata["distill_failure"] is None


def test_a_multiple_choice_question_is_read_with_the_consultations_search_typed_beside(drug_engine):
    q = Question(qid="m1", dataset="unit", question="Which food interacts with Coumadin?",
                 options={"A": "spinach", "B": "bread", "C": "rice", "D": "milk"})
    ans = DrugRagPipeline(ScriptedLLM(_tool_reply("Coumadin interactions")), drug_engine).answer(q)
    assert ans.outcome == "answered" and ans.choice == "A"
    assert isinstance(ans.detail, ChoiceDetail) and ans.detail.consult.search.keywords == "Coumadin interactions"
    assert list(ans.metadata) == ["scoring", "letter_logprobs", "search", "distill_failure", "candidates", "tool_call"]


def test_low_support_abstains_with_the_closest_entries(drug_engine):
    q = Question(qid="c5", dataset="unit", question="Can I still eat spinach salads?",
                 context="Patient: I started Coumadin last week.")
    ans = DrugRagPipeline(_support_llm(0.9), drug_engine, DrugRagSettings(abstain_below=0.5)).answer(q)
    assert ans.outcome == "insufficient_evidence"
    assert ans.metadata["support"] < 0.5 and ans.citations


def test_threshold_none_never_abstains_and_generate_mode_writes_with_citations(drug_engine):
    q = Question(qid="c6", dataset="unit", question="Can I still eat spinach salads?",
                 context="Patient: I started Coumadin last week.")
    ans = DrugRagPipeline(_support_llm(0.9), drug_engine,
                          DrugRagSettings(abstain_below=None, answer="generate")).answer(q)
    assert ans.outcome == "answered" and "[1]" in ans.text


def test_the_answer_prompt_does_not_push_the_model_to_abstain():
    from medground.llm import prompts

    msgs = prompts.messages("drug_answer", evidence="[1] x", dialogue="y")
    assert "INSUFFICIENT" not in " ".join(m["content"] for m in msgs)


def test_a_call_that_drops_the_subject_drug_is_repaired(drug_engine):
    q = Question(qid="c3", dataset="unit", question="Can I still eat spinach salads?",
                 context="Patient: My husband takes Advil.\nPharmacist: Noted.\nPatient: I started Coumadin last week.")
    llm = ScriptedLLM(_tool_reply("spinach salad"))
    ans = DrugRagPipeline(llm, drug_engine).answer(q)
    assert ans.metadata["candidates"][0] == "warfarin"
    assert ans.metadata["repaired"] == "subject drug missing from the call"
    assert ans.metadata["model_keywords"] == "spinach salad"
    assert ans.queries[0].text == "coumadin spinach salad"
    assert ans.citations[0].chapter.lower() == "warfarin"
    # The distiller was told which medicines were named, the likely subject first.
    assert "Medicines named in the consultation (the one asked about most likely first): coumadin, advil" \
        in llm.calls[0]["user"]
    # ... on a fresh prefix, so what ran before cannot change the call.
    assert llm.calls[0]["extra"] == {"medground": {"fresh_prefix": True}}


def test_a_call_that_names_the_subject_first_is_kept_and_candidates_can_be_off(drug_engine):
    q = Question(qid="c4", dataset="unit", question="what dose of Advil for back pain?",
                 context="Patient: I used to take Coumadin.")
    ans = DrugRagPipeline(ScriptedLLM(_tool_reply("Advil dosage back pain")), drug_engine).answer(q)
    assert "repaired" not in ans.metadata and ans.queries[0].text == "Advil dosage back pain"
    llm = ScriptedLLM(_tool_reply("warfarin dose"))
    ans = DrugRagPipeline(llm, drug_engine, DrugRagSettings(candidates=False)).answer(q)
    assert ans.queries[0].text == "warfarin dose" and ans.metadata["candidates"] == []
    assert "Medicines named" not in llm.calls[0]["user"]


@pytest.mark.slow
def test_distillation_does_not_depend_on_what_ran_before(small_llm, drug_engine):
    from medground.pipelines.base import Tally

    pipe = DrugRagPipeline(small_llm, drug_engine, DrugRagSettings(tool_mode="schema"))
    a = "Patient: I started Coumadin last week.\nPatient: Can I still eat spinach?"
    b = "Patient: My knee hurts.\nPatient: How much Advil can I take in a day for the pain in my knee?"
    first = pipe.distill(a, Tally())[0].text
    pipe.distill(b, Tally())  # a different prompt in the server's slot in between
    assert pipe.distill(a, Tally())[0].text == first


def test_an_unknown_drug_is_named_with_the_nearest_entries(drug_engine):
    q = Question(qid="c5", dataset="unit", question="what is the usual dose of coumadex?")
    llm = ScriptedLLM(_tool_reply("coumadex dosage"))
    ans = DrugRagPipeline(llm, drug_engine).answer(q)
    assert ans.outcome == "insufficient_evidence"
    assert ans.metadata["unknown_drugs"] == {"coumadex": ["Warfarin"]}
    assert "\u201ccoumadex\u201d is not in the medicine database; nearest entries: Warfarin." == ans.text
    assert not any(c["max_tokens"] == 1 for c in llm.calls)  # no support pass: nothing to read


def test_a_dialogue_over_budget_loses_its_oldest_turns_and_says_so(drug_engine):
    history = "\n".join(f"Patient: small talk number {i} about the weather and my garden" for i in range(200))
    q = Question(qid="c6", dataset="unit", question="How much Advil can I take?", context=history)
    llm = ScriptedLLM(_tool_reply("Advil dosage"))
    ans = DrugRagPipeline(llm, drug_engine, DrugRagSettings(max_dialogue_tokens=120)).answer(q)
    assert ans.outcome == "answered" and ans.metadata["dropped_turns"] > 150
    sent = llm.calls[0]["user"]
    assert "How much Advil can I take?" in sent and "number 0 " not in sent


def test_subject_query_searches_without_an_llm_call_and_falls_back_to_the_tool_call(drug_engine):
    q = Question(qid="c7", dataset="unit", question="Can I still eat spinach salads?",
                 context="Patient: My husband takes Advil.\nPatient: I started Coumadin last week.")
    llm = ScriptedLLM(_tool_reply("never used"))
    ans = DrugRagPipeline(llm, drug_engine, DrugRagSettings(query="subject")).answer(q)
    assert ans.metadata["query_mode"] == "subject" and "tool_call" not in ans.metadata
    assert ans.queries[0].text == "coumadin Can I still eat spinach salads?"
    assert ans.citations[0].chapter.lower() == "warfarin" and "spinach" in ans.citations[0].text
    assert not any(c.get("tools") or c.get("response_format") for c in llm.calls)  # no distillation call
    # No drug recognised: the LLM distils the consultation as usual.
    plain = Question(qid="c8", dataset="unit", question="what helps a headache?")
    llm = ScriptedLLM(_tool_reply("Advil dosage headache"))
    ans = DrugRagPipeline(llm, drug_engine, DrugRagSettings(query="subject")).answer(plain)
    assert ans.metadata["tool_call"]["arguments"]["keywords"] == "Advil dosage headache"


def test_an_entry_silent_on_what_was_asked_is_not_quoted(drug_engine):
    # Warfarin's interactions entry (spinach, vitamin K) is retrieved and supported, but the
    # patient asks about a rash, which no warfarin entry mentions (ibuprofen's does: another
    # drug's list is no answer): say so.
    q = Question(qid="c7", dataset="unit", question="Can it give me a rash?",
                 context="Patient: I started Coumadin last week.")
    ans = DrugRagPipeline(_support_llm(0.05, "Coumadin interactions rash"), drug_engine,
                          DrugRagSettings(query="tool_call")).answer(q)
    assert ans.citations[ans.metadata["supporting_entry"] - 1].section == "interactions"
    assert ans.outcome == "insufficient_evidence"
    assert ans.metadata["unaddressed"] == ["rash"]
    assert "rash" in ans.text and ans.citations
    # The check off: the previous behaviour, the supported entry quoted.
    off = DrugRagPipeline(_support_llm(0.05, "Coumadin interactions rash"), drug_engine,
                          DrugRagSettings(address_check=False, query="tool_call")).answer(q)
    assert off.outcome == "answered"


def test_the_address_check_moves_to_an_entry_that_names_what_was_asked(drug_engine):
    # The distilled call asks for the dose, so the dosage entry is [1] and support (tied over the
    # entries) picks it; the patient asks about a rash, which only the adverse reactions entry
    # mentions: that entry is quoted instead.
    q = Question(qid="c8", dataset="unit", question="Is a rash one of the things it can do?",
                 context="Patient: I take Advil for my back.")
    ans = DrugRagPipeline(_support_llm(0.05, "Advil dose"), drug_engine, DrugRagSettings(query="tool_call")).answer(q)
    assert ans.outcome == "answered"
    assert ans.metadata["supporting_entry"] == 1 and ans.metadata["address_moved_to"] == ans.citations[0].number != 1
    assert "rash" in ans.citations[0].text.lower()


def test_the_other_named_drugs_entry_answers_when_it_names_the_subjects_class(tmp_path):
    # "I take Coumadin. Is aspirin safe?": warfarin's list does not name aspirin, but aspirin's
    # interactions entry names anticoagulants, warfarin's class — that entry is the answer.
    src = "openstax-prototype:m1#t"
    store = DrugStore(tmp_path / "drugs.sqlite")
    store.build(DrugCatalog(
        [Drug("warfarin", "warfarin", ["Coumadin"], "Anticoagulant"), Drug("aspirin", "aspirin", [], "Salicylate")],
        [DrugAttribute("warfarin", A.INTERACTIONS, "Foods rich in vitamin K such as spinach", src),
         DrugAttribute("aspirin", A.INTERACTIONS, "Anticoagulants", src)]))
    engine = RetrievalEngine({"retrievers": ["drugs"], "fusion": None, "top": 10, "final_k": 3,
                              "overflow": "truncate"}, retrievers={"drugs": make_drug_retriever(store=store)})
    q = Question(qid="c9", dataset="unit", question="I take Coumadin for my heart. Is it safe to take aspirin?")
    ans = DrugRagPipeline(_support_llm(0.05, "Coumadin aspirin interactions"), engine,
                          DrugRagSettings(query="tool_call")).answer(q)
    assert ans.outcome == "answered"
    assert ans.citations[0].chapter == "Aspirin" and "Anticoagulants" in ans.text


def test_the_quote_picks_the_line_about_the_named_drugs_class(tmp_path):
    # "I take warfarin. Is ibuprofen safe?": warfarin's interactions list names NSAIDs, not
    # ibuprofen; the quote must be that line, not the list's first or last one.
    src = "openstax-prototype:m1#t"
    store = DrugStore(tmp_path / "drugs.sqlite")
    store.build(DrugCatalog(
        [Drug("warfarin", "warfarin", ["Coumadin"], "Anticoagulant"),
         Drug("ibuprofen", "ibuprofen", ["Advil"], "Nonsteroidal anti-inflammatory drug (NSAID)")],
        [DrugAttribute("warfarin", A.INTERACTIONS,
                       "Amiodarone and rifampin change its metabolism through cytochrome P450 enzymes.\n"
                       "Nonsteroidal anti-inflammatory drugs and antiplatelet drugs further increase bleeding risk.\n"
                       "Consult a pharmacist for an evaluation of drug interactions.", src)]))
    engine = RetrievalEngine({"retrievers": ["drugs"], "fusion": None, "top": 10, "final_k": 3,
                              "overflow": "truncate"}, retrievers={"drugs": make_drug_retriever(store=store)})
    q = Question(qid="c10", dataset="unit", question="I take warfarin for atrial fibrillation. Is ibuprofen safe?")
    ans = DrugRagPipeline(_support_llm(0.05, "warfarin ibuprofen interactions"), engine,
                          DrugRagSettings(query="tool_call", quote_tokens=32)).answer(q)
    assert ans.outcome == "answered" and ans.citations[0].chapter == "Warfarin"
    assert "bleeding risk" in ans.metadata["quoted"] and "pharmacist" not in ans.metadata["quoted"]


def _reply_pipe(llm, engine, **reply):
    from medground.reading.consult_settings import ConsultReplySettings

    return DrugRagPipeline(llm, engine, DrugRagSettings(query="subject", answer="reply",
                                                        reply=ConsultReplySettings(**reply)))


def test_reply_mode_answers_from_the_matched_item_without_an_llm_call(drug_engine):
    pytest.importorskip("onnxruntime")
    q = Question(qid="r1", dataset="unit", question="Patient: Could the stomach bleeding come from it?",
                 context="Patient: I have been taking Advil every day for my back.")
    llm = ScriptedLLM(_tool_reply("never used"))
    ans = _reply_pipe(llm, drug_engine).answer(q)
    assert ans.outcome == "answered" and llm.calls == []
    assert ans.citations[0].chapter == "Ibuprofen" and ans.citations[0].section == "adverse_reactions"
    assert ans.metadata["reply"]["first_sentence"].endswith("[1].")
    assert ans.metadata["reply"]["ranked"][0]["type"] == "adverse_reactions"


def test_reply_mode_asks_which_medicine_when_none_is_named_and_names_an_unknown_one(drug_engine):
    pytest.importorskip("onnxruntime")
    llm = ScriptedLLM(_tool_reply("headache"))
    ans = _reply_pipe(llm, drug_engine).answer(Question(qid="r2", dataset="unit",
                                                        question="My pill makes me dizzy, is that normal?"))
    assert ans.outcome == "needs_clarification" and "Which medicine" in ans.text and not ans.citations
    ans = _reply_pipe(ScriptedLLM(_tool_reply("coumadex dosage")), drug_engine).answer(
        Question(qid="r3", dataset="unit", question="what is the usual dose of coumadex?"))
    assert ans.outcome == "insufficient_evidence" and ans.metadata["unknown_drugs"] == {"coumadex": ["Warfarin"]}


def test_a_drug_named_only_by_the_pharmacist_is_the_subject(drug_engine):
    pytest.importorskip("onnxruntime")
    q = Question(qid="r4", dataset="unit", question="Patient: Yes, that one. Could the stomach bleeding come from it?",
                 context="Patient: I take a painkiller every day for my back.\nPharmacist: Is that the Advil?")
    ans = _reply_pipe(ScriptedLLM(_tool_reply("never used")), drug_engine).answer(q)
    assert ans.outcome == "answered" and ans.citations[0].chapter == "Ibuprofen"
    # off: the pharmacist's words are not read, and the reply asks which medicine
    pipe = DrugRagPipeline(ScriptedLLM(_tool_reply("never used")), drug_engine,
                           DrugRagSettings(query="subject", answer="reply", staff_named_subject=False))
    assert pipe.answer(q).outcome == "needs_clarification"
    # the patient says no: the pharmacist's guess is not the subject
    denied = Question(qid="r5", dataset="unit", question="Patient: No, the other one. Could it upset my stomach?",
                      context="Patient: My little white pill makes me queasy.\nPharmacist: Is that the Advil?")
    assert _reply_pipe(ScriptedLLM(_tool_reply("never used")), drug_engine).answer(denied).outcome == \
        "needs_clarification"


def test_reply_mode_verifier_reranks_with_the_llm_when_weighted(drug_engine):
    pytest.importorskip("onnxruntime")

    def entry_two(user, kwargs):  # the verifier's one-token pass: entry "2"
        return "2"

    class Verifying(ScriptedLLM):
        def chat(self, messages, **kwargs):
            res = super().chat(messages, **kwargs)
            if kwargs.get("max_tokens") == 1:
                from medground.llm.base import ChatResult, TokenLogprob

                top = [("2", -0.01), ("1", -5.0), ("0", -6.0)]
                return ChatResult(text="2", prompt_tokens=10, completion_tokens=1, logprobs=[TokenLogprob("2", -0.01, top)])
            return res

    q = Question(qid="r4", dataset="unit", question="Patient: How much Advil can I take?")
    plain = _reply_pipe(Verifying(entry_two), drug_engine).answer(q)
    llm = Verifying(entry_two)
    verified = _reply_pipe(llm, drug_engine, verify_weight=10.0).answer(q)
    assert any(c.get("max_tokens") == 1 for c in llm.calls)  # the verifier was asked
    assert plain.citations[0].section == "dosage"
    assert verified.citations[0].section != plain.citations[0].section  # its strong vote moved the choice


def test_the_item_check_reads_one_yes_no_pass_an_item():
    """P(yes) of "does the patient describe <item>?" per item, the patient's words first in each
    prompt (a shared cached prefix); a reply with neither word counts as not affirmed."""
    from types import SimpleNamespace

    from .test_scripted import ScriptedLLM, YesNoScriptedLLM

    class Judge(YesNoScriptedLLM):
        marker = "Does the patient describe"

        def yes_no(self, user):
            return (-0.05, -3.0) if '"Peripheral edema"' in user else (-3.0, -0.05)

    llm = Judge(lambda u, k: "")
    got = DrugRagPipeline.check_items(SimpleNamespace(llm=llm), "my ankles puff up by evening",
                                      ["Peripheral edema", "Cough"])
    assert got[0] > 0.9 > 0.1 > got[1]
    assert all(c["user"].startswith('A patient says: "my ankles puff up by evening"') for c in llm.calls)
    mute = ScriptedLLM(lambda u, k: "", letter_logprobs={"A": -0.1})  # answers a letter, never yes/no
    assert DrugRagPipeline.check_items(SimpleNamespace(llm=mute), "x", ["Cough"]) == [0.0]


def test_a_condition_is_never_reported_as_a_drug_the_database_lacks(drug_engine, monkeypatch):
    from medground.corpus.lay_vocabulary import LayVocabulary

    from medground.drug_schema import ConsultDetail

    pipe = _reply_pipe(ScriptedLLM(_tool_reply("never used")), drug_engine)
    from medground.drug_schema import NameLexicon

    pipe._vocabulary_words = LayVocabulary()  # knows no word: "coumadex" is a drug the database lacks
    pipe._drug_lexicon = NameLexicon()
    assert pipe.unknown_drug("is the drip safe with my coumadex", ConsultDetail()) is not None
    # the consumer-health sources pair it with another name (as "pre-eclampsia" is): a condition
    vocab = LayVocabulary()
    vocab.add("coumadex", "pregnancy-induced high blood pressure")
    pipe._vocabulary_words = vocab
    assert pipe.unknown_drug("is the drip safe with my coumadex", ConsultDetail()) is None
    assert vocab.knows("Coumadex") and not vocab.knows("warfarin")
    # a brand the sources mention stays a drug where the name lexicon knows it ("Florinef")
    pipe._drug_lexicon = NameLexicon({"coumadex": ["fludrocortisone"]})
    assert pipe.unknown_drug("is the drip safe with my coumadex", ConsultDetail()) is not None
