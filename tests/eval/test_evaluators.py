"""Evaluators: the consultation judge on scripted replies (right entry, a hedge, a wrong "does not
list", an abstention), its summary with Wilson intervals, and the blind-label checks."""

from medground.drug_schema import ConsultDetail, ConsultReply
from medground.eval.evaluators import ConsultationEvaluator, ConsultItem, ConsultReference, percentile, rate
from medground.schema import Answer, Citation


def cite(drug: str, section: str, text: str) -> Citation:
    return Citation(number=1, chunk_id=f"{drug}:{section}", book="Medicine database", chapter=drug,
                    section=section, title=drug, text=text, score=1.0)


REF = ConsultReference(
    display={"lisinopril": "Lisinopril"},
    entries={("lisinopril", "adverse_reactions"): ["Angioedema\nCough\nHeadache"]},
    labels={"w1": {"answers": [{"drug": "lisinopril", "attribute": "adverse_reactions", "items": ["Cough"]}],
                   "listed": True},
            "w3": {"answers": [], "listed": None}})

ITEMS = [ConsultItem("w1", "Patient: I'm on Zestril.\nPatient: Could my dry cough be the pill?", "lisinopril",
                     "adverse_reactions", False, terms=["cough"], kind="yes_no"),
         ConsultItem("w2", "Patient: Could Zestril make me cough?", "lisinopril", "adverse_reactions", False,
                     terms=["cough"], kind="yes_no"),
         ConsultItem("w3", "Patient: Is Zestril in stock?", "lisinopril", None, True)]

AR = cite("Lisinopril", "adverse_reactions", "Angioedema\nCough\nHeadache")
REPLIES = {
    "w1": Answer("answered", text="Yes — Cough is listed … [1].", citations=[AR], timings={"total": 1.0},
                 detail=ConsultDetail(reply=ConsultReply("Yes — Cough is listed among Lisinopril's side effects [1].",
                                                         quotes=["Cough"], matched=["Cough"]))),
    "w2": Answer("answered", text="The database does not list …", citations=[AR], timings={"total": 3.0},
                 detail=ConsultDetail(reply=ConsultReply("The database does not list what you describe …"))),
    "w3": Answer("insufficient_evidence", text="No entry …", timings={"total": 0.5}),
}


class Scripted:
    def __init__(self):
        self.asked = []

    def answer(self, q):
        self.asked.append(q)
        return REPLIES[q.qid]


def test_the_consultation_evaluator_judges_and_summarises():
    pipe = Scripted()
    result = ConsultationEvaluator(REF)(pipe, ITEMS)
    assert [q.question for q in pipe.asked][0] == "Patient: Could my dry cough be the pill?"  # the last line
    assert pipe.asked[0].context == "Patient: I'm on Zestril."
    w1, w2, w3 = result.rows
    assert w1["drug_attr_ok"] and w1["first_names_asked"] and w1["yes_no_agrees"] and w1["rubric"]
    assert w1["cites_answering_entry"] and w1["names_answering_item"] and w1["rubric_labelled"]
    assert w2["drug_attr_ok"] and not w2["yes_no_agrees"] and not w2["rubric"]  # "does not list" a listed cough
    assert w3["rubric"] and "rubric_labelled" not in w3  # abstained; an unanswerable item is judged by its outcome
    s = result.summary
    assert s["n"] == 3 and s["answerable"] == 2 and s["unanswerable"] == 1
    assert s["rubric_pass"]["k"] == 2 and s["cites_drug_attribute"]["rate"] == 1.0
    assert s["right_abstention"]["k"] == 1 and s["wrong_abstention"]["k"] == 0
    assert s["seconds_p50"] == 1.0 and s["seconds_p95"] == 3.0
    assert [r["reply"] for r in result.rows][2] == "No entry …"


def test_rates_and_percentiles_are_computed_in_one_place():
    r = rate([True, True, False, True])
    assert r["n"] == 4 and r["k"] == 3 and r["rate"] == 0.75 and r["ci95"][0] < 0.75 < r["ci95"][1]
    assert rate([]) == {"n": 0, "k": 0, "rate": None, "ci95": None}
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0 and percentile([], 0.95) is None


def test_the_entry_holding_the_writers_item_answers_whatever_type_the_writer_named():
    """The book's prototype tables hold "Caution" lines in their Contraindications row and the
    database files them as warnings: a reply citing that warnings entry cites the writer's item."""
    ref = ConsultReference(
        display={"celecoxib": "Celecoxib"},
        entries={("celecoxib", "contraindications"): ["Hypersensitivity\nCABG surgery"],
                 ("celecoxib", "warnings"): ["May increase risk of cardiovascular thrombotic events"],
                 ("celecoxib", "dosage"): ["100–200 mg orally twice daily."]})
    item = ConsultItem("a1", "Patient: Is Celebrex bad for my heart?", "celecoxib", "contraindications", False,
                       answer_item="May increase risk of cardiovascular thrombotic events")
    judge = ConsultationEvaluator(ref)

    def reply(section: str, text: str) -> Answer:
        return Answer("answered", text="…", citations=[cite("Celecoxib", section, text)], timings={"total": 1.0})

    warn = judge.judge(item, reply("warnings", "May increase risk of cardiovascular thrombotic events"))
    assert not warn["drug_attr_ok"] and warn["cites_item_entry"]
    contra = judge.judge(item, reply("contraindications", "Hypersensitivity"))
    assert contra["drug_attr_ok"] and contra["cites_item_entry"]  # the writer's type still counts
    dose = judge.judge(item, reply("dosage", "100–200 mg orally twice daily."))
    assert not dose["cites_item_entry"]
    plain = ConsultItem("a2", "Patient: Is Celebrex bad for my heart?", "celecoxib", "contraindications", False)
    assert "cites_item_entry" not in judge.judge(plain, reply("warnings", "…"))  # no item: not judged so


def test_an_abstention_citing_its_class_prototype_cites_no_answer():
    """A dose-only drug's abstention offers its class prototype's entry [1]; that entry is not the
    reply's answer, even when it is the gold one (the subject was misread)."""
    ref = ConsultReference(display={"fluoxetine": "Fluoxetine"},
                           entries={("fluoxetine", "adverse_reactions"): ["Insomnia\nNervousness"]})
    item = ConsultItem("p1", "Patient: switched to prozak, cant sleep. is that the prozak?", "fluoxetine",
                       "adverse_reactions", False, terms=["insomnia"], kind="yes_no")
    offered = Answer("insufficient_evidence", text="No entry on its side effects for Sertraline. In the book, …",
                     citations=[cite("Fluoxetine", "adverse_reactions", "Insomnia\nNervousness")],
                     timings={"total": 1.0})
    row = ConsultationEvaluator(ref).judge(item, offered)
    assert not row["drug_ok"] and not row["drug_attr_ok"] and not row["rubric"]

