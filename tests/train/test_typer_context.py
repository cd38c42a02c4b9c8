"""Context sentences for the consultation typer: about database drugs, masked, label-free."""

import pytest

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute
from medground.reading.consult_typer import MASK
from medground.train.typer_context import ContextMaker

SRC = "openstax-prototype:m1#t"
DRUGS = [Drug("rivaroxaban", "rivaroxaban", ["Xarelto"], "Anticoagulant"),
         Drug("lisinopril", "lisinopril", ["Zestril"], "ACE inhibitor")]
ENTRIES = [DrugAttribute("rivaroxaban", A.DOSAGE, "20 mg orally once daily with the evening meal", SRC),
           DrugAttribute("lisinopril", A.INDICATIONS, "Hypertension\nHeart failure", SRC)]


def test_context_sentences_name_no_drug_and_come_before_the_question():
    maker = ContextMaker(DRUGS, ENTRIES, seed=3)
    for _ in range(40):
        text = maker.before("can this medicine cause a cough?")
        assert text.endswith("can this medicine cause a cough?")
        context = text[: -len("can this medicine cause a cough?")]
        assert context.strip() and not any(n in context.lower() for n in ("xarelto", "rivaroxaban", "zestril", "lisinopril"))
    said = " ".join(maker.sentence() for _ in range(60))
    # filled from the entries: a dose of the dosage entry, a use of the indications entry
    assert "20 mg" in said and "hypertension" in said and MASK in said


def test_the_same_seed_gives_the_same_sentences():
    a, b = ContextMaker(DRUGS, ENTRIES, seed=1), ContextMaker(DRUGS, ENTRIES, seed=1)
    assert [a.sentence() for _ in range(10)] == [b.sentence() for _ in range(10)]


def test_an_empty_database_says_what_to_do():
    with pytest.raises(ValueError, match="medground drugs build"):
        ContextMaker([], [])


def test_condition_questions_name_a_contraindication_never_a_drug_or_a_number():
    from medground.train.typer_context import condition_questions

    entries = [DrugAttribute("lisinopril", A.CONTRAINDICATIONS,
                             "Pregnancy (fetal toxicity)\nRilpivirine\nChildren younger than 8 years\n"
                             "History of angioedema", SRC),
               DrugAttribute("lisinopril", A.ADVERSE_REACTIONS, "Cough", SRC)]
    asked = condition_questions(entries, 30, seed=0, drug_names=["rilpivirine"])
    assert len(asked) == 30
    assert all(("pregnancy" in q) != ("history of angioedema" in q) for q in asked)  # one condition each
    assert not any("rilpivirine" in q or "8 years" in q or "cough" in q or "fetal" in q for q in asked)
    assert condition_questions([entries[1]], 5) == []  # no contraindications entry: no questions
