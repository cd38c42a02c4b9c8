"""The seeded multi-turn dialogue generator and the strict hit rule."""

from __future__ import annotations

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute
from medground.eval import dialogues
from medground.schema import Question

DRUGS = [Drug("lisinopril", "lisinopril", ["Zestril"]), Drug("ibuprofen", "ibuprofen", ["Advil"]),
         Drug("warfarin", "warfarin", ["Coumadin"]), Drug("metformin", "metformin", [])]
ATTRS = [DrugAttribute("lisinopril", A.DOSAGE, "10 mg daily", "s"),
         DrugAttribute("ibuprofen", A.ADVERSE_REACTIONS, "Dyspepsia", "s"),
         DrugAttribute("metformin", A.DOSAGE, "500 mg twice daily", "s")]


def _q(qid, text, focus, qtype):
    return Question(qid=qid, dataset="medication-qa", question=text,
                    metadata={"focus_drug": focus, "question_type": qtype})


QUESTIONS = [_q("001", "what is the usual dose of lisinopril?", "lisinopril", "Dose"),
             _q("002", "does ibuprofen cause stomach upset", "Ibuprofen", "Side effects"),
             _q("003", "what does warfarin look like", "warfarin", "Appearance"),  # no attribute answers it
             _q("004", "how much metformin", "metformin", "Interaction"),  # the database holds no interactions
             _q("005", "max dose of metformin", "metformin", "Dose")]


def _exact(name):
    return {d.generic_name: d.drug_id for d in DRUGS}.get(name.lower())


def test_only_questions_the_database_can_answer_are_kept():
    items = dialogues.eligible(QUESTIONS, DRUGS, ATTRS, _exact)
    assert [(q.qid, d.drug_id, a) for q, d, a in items] == [
        ("001", "lisinopril", A.DOSAGE), ("002", "ibuprofen", A.ADVERSE_REACTIONS), ("005", "metformin", A.DOSAGE)]


def test_dialogues_are_seeded_independent_and_end_with_the_question():
    items = dialogues.eligible(QUESTIONS, DRUGS, ATTRS, _exact)
    a = dialogues.generate(items, DRUGS, seed=3)
    assert [d.turns for d in a] == [d.turns for d in dialogues.generate(items, DRUGS, seed=3)]
    assert [d.turns for d in dialogues.generate(items, DRUGS, n=2, seed=3)] == [d.turns for d in a[:2]]
    assert [d.turns for d in a] != [d.turns for d in dialogues.generate(items, DRUGS, seed=4)]
    by_src = {q.qid: q for q, _, _ in items}
    for d in a:
        assert len(d.turns) == 3
        drug = next(x for x in DRUGS if x.drug_id == d.drug_id)
        # The subject is introduced in the second turn by its brand or generic name.
        assert any(n.lower() in d.turns[1].lower() for n in (drug.generic_name, *drug.brand_names))
        source = by_src[d.source_qid].question
        if d.facts["pronoun"]:
            assert "it" in d.turns[2].split() or "it?" in d.turns[2] and d.turns[2] != source
            assert drug.generic_name not in d.turns[2].lower()
        else:
            assert d.turns[2] == source
        assert d.facts["other_drug"] != d.drug_id


def test_hit_ranks_need_the_gold_drug_and_for_attributes_its_gold_attribute():
    d = dialogues.Dialogue("x", ["q"], "lisinopril", A.DOSAGE, "001")
    hits = [("ibuprofen", A.DOSAGE), ("lisinopril", A.WARNINGS), ("lisinopril", A.DOSAGE)]
    assert dialogues.hit_ranks(d, hits) == (2, 3)
    assert dialogues.hit_ranks(d, [("ibuprofen", A.DOSAGE)]) == (None, None)
