"""A condition the patient has, told from a substance taken with the medicine: the model learned
from the database's items (contraindications items are conditions, interactions items
substances), and the consultation reader that moves "can I take it while pregnant?" from the
interactions entry to the contraindications one. Real bundled MiniLM and the shipped models."""

import numpy as np
import pytest

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute, DrugCatalog
from medground.reading.patient_condition import (
    CONDITION,
    SUBSTANCE,
    ConditionReader,
    build,
    load_condition_reader,
    training_items,
)
from medground.store.drugs import DrugStore

SRC = "openstax-prototype:m1#t"


def test_training_items_come_from_contraindications_and_interactions_only():
    attrs = [DrugAttribute("a", A.CONTRAINDICATIONS, "Pregnancy\nSevere renal impairment\nAlcohol", SRC),
             DrugAttribute("b", A.INTERACTIONS, "Grapefruit juice\nNSAIDs\nAlcohol", SRC),
             DrugAttribute("c", A.ADVERSE_REACTIONS, "Headache", SRC)]
    items = dict(training_items(attrs))
    assert items == {"Pregnancy": CONDITION, "Severe renal impairment": CONDITION,
                     "Grapefruit juice": SUBSTANCE, "NSAIDs": SUBSTANCE}  # "Alcohol" is on both sides


def unit(*rows):
    v = np.array(rows, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_a_phrase_names_a_condition_when_its_nearest_item_is_one_and_near():
    items = [("Pregnancy", CONDITION), ("Glaucoma", CONDITION), ("Alcohol", SUBSTANCE)]
    model = build(items, unit([1, 0, 0], [0, 1, 0], [0, 0, 1]), embedder="none")
    reader = ConditionReader(model, embedder=None)
    pregnant, okay, wine = unit([0.9, 0.1, 0.1], [0.4, 0.4, 0.4], [0.1, 0.1, 0.9])
    found = reader.named([("okay", 1.0), ("pregnant", 1.0)], vectors=np.stack([okay, pregnant]))
    assert (found.phrase, found.item) == ("pregnant", "Pregnancy")
    assert reader.named([("okay", 1.0)], vectors=okay[None]) is None  # near nothing
    assert reader.named([("wine", 1.0)], vectors=wine[None]) is None  # nearest a substance
    # a condition said beside a substance ("for an infection … a few glasses of wine"): none
    assert reader.named([("pregnant", 1.0), ("wine", 1.0)], vectors=np.stack([pregnant, wine])) is None
    # an earlier turn's phrase counts at its weight
    assert reader.named([("pregnant", 0.5)], vectors=pregnant[None]) is None


@pytest.fixture(scope="module")
def shipped():
    pytest.importorskip("onnxruntime")
    reader = load_condition_reader()
    assert reader is not None, "the shipped condition model is missing: python benchmarks/condition_model.py"
    return reader


def test_the_shipped_model_tells_conditions_from_substances(shipped):
    for phrase in ("pregnant", "kidney disease", "glaucoma", "asthma"):
        assert shipped.named([(phrase, 1.0)]) is not None, phrase
    for phrase in ("grapefruit juice", "wine", "coffee", "symptoms", "blood checked", "okay"):
        assert shipped.named([(phrase, 1.0)]) is None, phrase


@pytest.fixture(scope="module")
def reader(tmp_path_factory, shipped):
    from medground.reading.consult import ConsultReader
    from medground.reading.consult_typer import load_consult_typer
    from medground.retrieve.drugs import DrugRetriever

    catalog = DrugCatalog(
        [Drug("lisinopril", "lisinopril", ["Zestril"], "ACE inhibitor"),
         Drug("warfarin", "warfarin", ["Coumadin"], "Anticoagulant"),
         Drug("haloperidol", "haloperidol", ["Haldol"], "Antipsychotic")],
        [DrugAttribute("lisinopril", A.INTERACTIONS, "Alcohol\nLithium\nPotassium supplements", SRC),
         DrugAttribute("lisinopril", A.CONTRAINDICATIONS, "History of angioedema\nPregnancy (fetal toxicity)", SRC),
         DrugAttribute("lisinopril", A.DOSAGE, "10-40 mg orally daily.", SRC),
         DrugAttribute("warfarin", A.INTERACTIONS, "Nonsteroidal anti-inflammatory drugs\nAmiodarone", SRC),
         DrugAttribute("warfarin", A.DOSAGE, "2-10 mg orally daily, adjusted to INR", SRC),
         DrugAttribute("warfarin", A.WARNINGS, "Pregnant women with mechanical heart valves", SRC),
         DrugAttribute("haloperidol", A.INDICATIONS, "Schizophrenia\nTourette's disorder", SRC),
         DrugAttribute("haloperidol", A.CONTRAINDICATIONS, "Parkinson's disease\nSevere CNS depression", SRC),
         DrugAttribute("haloperidol", A.DOSAGE, "0.5-5 mg orally two or three times daily", SRC)])
    store = DrugStore(tmp_path_factory.mktemp("drugs") / "drugs.sqlite")
    store.build(catalog)
    typer = load_consult_typer()
    return ConsultReader(DrugRetriever(store), typer, typer.embedder, conditions=shipped)


def test_a_condition_named_moves_the_question_to_the_contraindications(reader):
    r = reader.reply(["Can I take lisinopril while pregnant?"], "lisinopril")
    assert r.condition == "pregnant"
    assert r.chosen.attribute.type is A.CONTRAINDICATIONS
    assert "Pregnancy" in r.first_sentence


def test_why_the_drug_is_taken_is_neither_the_condition_nor_a_substance(reader):
    """"taking lisinopril for my blood pressure" says why; a phrase of it that reads as a substance
    ("cholesterol" did for atorvastatin) kept the question one about taking two things together."""
    from medground.reading.consult_text import without_purpose

    t = "I just found out I'm pregnant. I've been taking lisinopril for my blood pressure. Is it safe to keep taking it?"
    r = reader.reply([t], "lisinopril")
    assert r.condition == "pregnant" and r.chosen.attribute.type is A.CONTRAINDICATIONS
    assert without_purpose(t, ["lisinopril"]) == ("I just found out I'm pregnant. I've been taking lisinopril. "
                                                   "Is it safe to keep taking it?")
    # the question itself keeps its "for …" (it asks exactly that) unless asked for what else is said
    assert without_purpose("Is it for restless legs too?") == "Is it for restless legs too?"
    assert without_purpose("Is it for restless legs too?", keep_question=False) == "Is it?"  # to the clause end


def test_a_substance_named_keeps_the_interactions(reader):
    r = reader.reply(["Can I drink alcohol with lisinopril?"], "lisinopril")
    assert r.condition is None
    assert r.chosen.attribute.type is A.INTERACTIONS
    two = reader.reply(["I'm on Coumadin. Is ibuprofen okay with it?"], "warfarin", ["lisinopril"])
    assert two.condition is None  # a second drug named: always a question about taking them together


def test_without_the_model_the_typer_decides(reader):
    plain = reader.settings.model_copy(update={"condition_similarity": 1.01})
    saved, reader.settings = reader.settings, plain
    try:
        r = reader.reply(["Can I take lisinopril while pregnant?"], "lisinopril")
    finally:
        reader.settings = saved
    # no condition is read; the typer and the item match choose the entry (the typer before session
    # 29 read this as an interactions question; trained with the written bank, the reply now names
    # the contraindication without the condition reading)
    assert r.condition is None and r.chosen.attribute.type is A.CONTRAINDICATIONS
    assert "Pregnancy" in r.first_sentence


def test_a_condition_the_record_lists_is_read_past_the_typers_what_is_it_for(reader):
    asked = ["The hospital doctor wrote him up for Haldol. Is Haldol okay for someone with Parkinson's?"]
    p_type, _ = reader.type_probabilities(asked[0])
    typer_reads = max(p_type, key=p_type.get)  # indications before session 29, contraindications since
    r = reader.reply(asked, "haloperidol")
    assert r.condition == "Parkinson's" and r.chosen.attribute.type is A.CONTRAINDICATIONS
    assert "Parkinson's disease" in r.first_sentence
    # the session-21 reading (interactions only) leaves it to the typer
    saved, reader.settings = reader.settings, reader.settings.model_copy(update={"condition_reads": "interactions"})
    try:
        assert reader.reply(asked, "haloperidol").chosen.attribute.type is typer_reads
    finally:
        reader.settings = saved
    # what it is for stays an indications question: schizophrenia is why it is taken
    r = reader.reply(["Is Haldol used for schizophrenia?"], "haloperidol")
    assert r.condition is None and r.chosen.attribute.type is A.INDICATIONS


def test_a_misspelt_condition_is_read_as_the_databases_word(reader):
    r = reader.reply(["Can I take lisinopril while pregnent?"], "lisinopril")
    assert r.condition == "pregnant" and r.chosen.attribute.type is A.CONTRAINDICATIONS
    saved, reader.settings = reader.settings, reader.settings.model_copy(update={"spelling": False})
    try:
        assert reader.reply(["Can I take lisinopril while pregnent?"], "lisinopril").condition is None
    finally:
        reader.settings = saved
