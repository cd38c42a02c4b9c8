from __future__ import annotations

import pytest

from medground.index.fingerprint import ChunkList
from medground.schema import Chunk, Question, make_chunk_id

TEXTS = [
    ("Endocrine System", "Pancreas", "Insulin is secreted by the beta cells of the pancreatic islets and lowers blood glucose by promoting uptake into muscle and fat."),
    ("Endocrine System", "Diabetes", "Type 1 diabetes mellitus results from autoimmune destruction of beta cells, so patients require insulin replacement."),
    ("Anticoagulants", "Warfarin", "Warfarin inhibits vitamin K epoxide reductase; its effect is monitored with the INR and reversed with vitamin K."),
    ("Respiratory Drugs", "Asthma", "Albuterol is a short-acting beta-2 agonist that relaxes bronchial smooth muscle and relieves acute bronchospasm."),
    ("Infections", "Tuberculosis", "Isoniazid treats tuberculosis; peripheral neuropathy is prevented by giving pyridoxine (vitamin B6)."),
    ("Nutrition", "Scurvy", "Vitamin C deficiency causes scurvy, with bleeding gums, poor wound healing and perifollicular hemorrhages."),
    ("Cardiology", "Digoxin", "Digoxin inhibits the sodium-potassium ATPase; hypokalemia increases the risk of digoxin toxicity."),
    ("Renal", "Diuretics", "Furosemide is a loop diuretic acting on the thick ascending limb; it can cause hypokalemia and ototoxicity."),
]


@pytest.fixture(scope="session")
def tiny_chunks() -> ChunkList:
    chunks = []
    for i, (chapter, section, text) in enumerate(TEXTS):
        chunks.append(Chunk(chunk_id=make_chunk_id("tiny.txt", (section,), text, i), doc_id=f"doc{i}",
                            corpus="tiny", source_path="tiny.txt", text=text, title=section,
                            book="Tiny Textbook", chapter=chapter, section_path=(section,),
                            token_count=len(text.split()), char_start=0, char_end=len(text)))
    return ChunkList(chunks)


@pytest.fixture
def mcq() -> Question:
    return Question(qid="q1", dataset="unit", question="Which vitamin prevents isoniazid neuropathy?",
                    options={"A": "Vitamin C", "B": "Vitamin B6", "C": "Vitamin K", "D": "Vitamin D"}, answer="B")
