from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute
from medground.eval.drugqa import generate, mentions, record_items, supported

SRC = "openstax-prototype:m1#t"
DRUGS = [Drug(f"d{i}", name) for i, name in enumerate(["amlodipine", "metformin", "warfarin", "lisinopril", "digoxin"])]
ITEMS = {
    "d0": "Peripheral edema\nHeadache\nFlushing",
    "d1": "Lactic acidosis\nDiarrhea\nHeadache",
    "d2": "Bleeding\nBruising\nSkin necrosis",
    "d3": "Dry cough\nAngioedema\nHyperkalemia",
    "d4": "Nausea\nVisual disturbances\nArrhythmias",
}
ATTRS = [DrugAttribute(d, A.ADVERSE_REACTIONS, text, SRC) for d, text in ITEMS.items()]
ATTRS.append(DrugAttribute("d0", A.DOSAGE, "5 mg daily", SRC))  # not askable
ATTRS.append(DrugAttribute("d1", A.ADVERSE_REACTIONS, "Long FDA prose section.", "fda-tac2017:x"))  # not a list


def test_record_items_and_mentions():
    assert record_items("Headache\nA whole long sentence that is not an item at all\n- Rash") == ["Headache", "Rash"]
    assert mentions("Peripheral edema, headache", "HEADACHE")
    assert not mentions("Hyperkalemia", "kalemia")


def test_multiple_choice_questions_have_one_listed_answer():
    qs = generate(DRUGS, ATTRS, 5, seed=3, kind="mc")
    assert len(qs) == 5
    for item in qs:
        q = item.question
        assert sorted(q.options) == ["A", "B", "C", "D"] and q.answer in q.options
        assert mentions(item.gold.text, q.options[q.answer])
        for letter, text in q.options.items():
            if letter != q.answer:
                assert not mentions(item.gold.text, text)  # a distractor is never in the gold record
        assert item.wrong.drug_id != item.drug.drug_id and item.wrong_drug.drug_id == item.wrong.drug_id
        assert item.drug.display_name in q.question and item.gold.source.startswith("openstax-prototype")


def test_generation_is_seeded():
    a = [x.question.options for x in generate(DRUGS, ATTRS, 4, seed=1)]
    b = [x.question.options for x in generate(DRUGS, ATTRS, 4, seed=1)]
    assert a == b


def test_free_text_questions_carry_the_record_items():
    qs = generate(DRUGS, ATTRS, 3, seed=0, kind="free")
    assert all(x.question.options == {} and x.items == record_items(x.gold.text) for x in qs)


def test_support_check():
    record = "Peripheral edema\nHeadache\nFlushing"
    assert supported("Amlodipine can cause peripheral edema and headache [1].", record, exclude=["Amlodipine"])
    assert supported("Listed adverse effects include flushing [1]. Consult your doctor.", record)
    assert not supported("Amlodipine causes liver failure and hair loss [1].", record, exclude=["Amlodipine"])
    # One unsupported sentence is enough to fail the answer.
    assert not supported("It can cause headache [1]. It also causes blindness and seizures.", record)


def test_a_near_synonym_is_never_a_distractor():
    attrs = [DrugAttribute("d0", A.CONTRAINDICATIONS, "Active liver disease\nPregnancy", SRC),
             DrugAttribute("d1", A.CONTRAINDICATIONS, "Hepatic disease\nAsthma", SRC),
             DrugAttribute("d2", A.CONTRAINDICATIONS, "Glaucoma\nHeart block", SRC),
             DrugAttribute("d3", A.CONTRAINDICATIONS, "Myasthenia gravis\nPorphyria", SRC)]
    for item in generate(DRUGS, attrs, 4, seed=0):
        if item.drug.drug_id == "d0":
            assert "Hepatic disease" not in item.question.options.values()
